import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {testApi, type TestApi} from '../helpers/http-helpers.js'
import {CandidateAnswers} from '../../src/http/candidate-answers.js'
import {parseCandidateRequest} from '../../src/core/candidates/request.js'
import type {AppOptions} from '../../src/http/context.js'

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
    await t.call('PUT', `/resource_providers/${uuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: {VCPU: {total: 4}, MEMORY_MB: {total: 2048}},
    })
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

describe('a query asked once between writes', () => {
  it('is worked out ahead after every write once it was asked twice, and not after a write nobody asked about since', async () => {
    await cloud(api)
    const answers = new CandidateAnswers({store: api.store, auth: 'noauth2'} as AppOptions, api.store)
    const request = parseCandidateRequest(
      new Map([
        ['resources', ['VCPU:1']],
        ['limit', ['5']],
      ]),
      [1, 39],
    )
    const ask = async () => answers.answer(await api.store.refresh(), 'q', request, [1, 39])
    const claim = async (n: number) => {
      const first = JSON.parse((await ask()).toString()).allocation_requests[0]
      const body = {allocations: first.allocations, project_id: RP[0], user_id: RP[0], consumer_generation: null, consumer_type: 'INSTANCE'}
      expect((await api.call('PUT', `/allocations/cccccccc-0000-4000-8000-00000000010${n}`, body)).status).toBe(204)
      answers.afterWrite()
      await tick()
    }
    await claim(0) // asked once in all: not yet
    expect(answers.workedAhead).toBe(0)
    for (let n = 1; n <= 3; n++) {
      await claim(n)
      expect(answers.workedAhead).toBe(n)
    }
    // Worked out ahead: the next ask is answered with those very bytes, and they are right.
    const ready = await ask()
    expect(await ask()).toBe(ready)
    // A write nobody asked about since: nothing is worked out again.
    for (const t of ['CUSTOM_A', 'CUSTOM_B']) expect((await api.call('PUT', `/traits/${t}`)).status).toBe(201)
    const traits = async (t: string) => {
      const generation = (await api.call('GET', `/resource_providers/${RP[1]}`)).body.generation
      expect(
        (await api.call('PUT', `/resource_providers/${RP[1]}/traits`, {resource_provider_generation: generation, traits: [t]})).status,
      ).toBe(200)
    }
    await traits('CUSTOM_A')
    answers.afterWrite()
    await tick()
    expect(answers.workedAhead).toBe(4) // asked since: worked out once
    await traits('CUSTOM_B')
    answers.afterWrite()
    await tick()
    expect(answers.workedAhead).toBe(4)
  })
})

describe('a query whose answers worked out ahead are not taken', () => {
  it('is worked out ahead only now and then while another write keeps coming first, and after every write again once they are taken', async () => {
    await cloud(api)
    const answers = new CandidateAnswers({store: api.store, auth: 'noauth2'} as AppOptions, api.store)
    const request = parseCandidateRequest(new Map([['resources', ['VCPU:1']]]), [1, 39])
    const ask = async () => answers.answer(await api.store.refresh(), 'q', request, [1, 39])
    let trait = 0
    const write = async ({ours = true} = {}) => {
      expect((await api.call('PUT', `/traits/CUSTOM_T${trait++}`)).status).toBe(201)
      if (ours) answers.afterWrite()
      await tick()
    }
    await ask()
    await ask()
    // Another write (another node's) comes between each answer worked out ahead and the next ask.
    for (let round = 0; round < 21; round++) {
      await ask()
      await write()
      await write({ours: false})
    }
    // Five thrown away unread bring the share taken under a quarter; then one write in eight.
    expect(answers.workedAhead).toBe(5 + 2)
    // One claimer: the answer worked out after each write is what the next ask takes.
    const before = answers.workedAhead
    for (let round = 0; round < 16; round++) {
      await ask()
      await write()
    }
    const ready = await ask()
    expect(await ask()).toBe(ready)
    expect(answers.workedAhead - before).toBeGreaterThanOrEqual(16 - 8)
  })
})
