import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {testApi, type TestApi} from './http-helpers.js'

// The answer to a candidates query asked again and again is worked out anew right after each
// write: what the next ask gets must be exactly what a daemon without the memo answers.
let api: TestApi
let plain: TestApi
beforeEach(async () => {
  api = await testApi()
  plain = await testApi({candidates: {answerCache: false}})
})
afterEach(async () => {
  await api.close()
  await plain.close()
})

const RP = ['aaaaaaaa-0000-4000-8000-0000000000a1', 'aaaaaaaa-0000-4000-8000-0000000000a2']
const Q = '/allocation_candidates?resources=VCPU:2,MEMORY_MB:512&limit=5'

async function cloud(t: TestApi) {
  for (const [i, uuid] of RP.entries()) {
    await t.call('POST', '/resource_providers', {name: `cn${i}`, uuid})
    await t.call('PUT', `/resource_providers/${uuid}/inventories`, {resource_provider_generation: 0, inventories: {VCPU: {total: 4}, MEMORY_MB: {total: 2048}}})
  }
}

const tick = () => new Promise((r) => setTimeout(r, 20))

describe('candidates asked after every claim', () => {
  it('answer as a daemon without the memo does, claim after claim, until nothing fits', async () => {
    await cloud(api)
    await cloud(plain)
    for (let claim = 0; claim < 5; claim++) {
      const ours = await api.call('GET', Q)
      const again = await api.call('GET', Q)
      const theirs = await plain.call('GET', Q)
      expect(ours.body).toEqual(theirs.body)
      expect(again.body).toEqual(theirs.body)
      const first = ours.body.allocation_requests[0]
      if (!first) {
        expect(claim).toBe(4) // 2 providers x 2 claims of VCPU:2
        return
      }
      const consumer = `cccccccc-0000-4000-8000-00000000000${claim}`
      const body = {allocations: first.allocations, project_id: RP[0], user_id: RP[0], consumer_generation: null, consumer_type: 'INSTANCE'}
      expect((await api.call('PUT', `/allocations/${consumer}`, body)).status).toBe(204)
      expect((await plain.call('PUT', `/allocations/${consumer}`, body)).status).toBe(204)
      await tick() // the answer is worked out again meanwhile
    }
    throw new Error('the cloud never filled up')
  })
})
