import {randomUUID} from 'node:crypto'
import {describe, expect, it} from 'vitest'
import {findCandidates} from '../../src/core/candidates/engine.js'
import {renderCandidates, renderCandidatesJson} from '../../src/core/candidates/render.js'
import {parseCandidateRequest, type Microversion} from '../../src/core/candidates/request.js'
import {testApi} from '../helpers/http-helpers.js'

// The direct serializer must write exactly the document the object renderer describes.
describe('renderCandidatesJson', () => {
  it('equals JSON.stringify(renderCandidates(...)) at every microversion shape', async () => {
    const api = await testApi()
    const agg = randomUUID()
    const ops: unknown[] = [{op: 'ensure_trait', name: 'CUSTOM_FOO'}]
    for (let i = 0; i < 3; i++) {
      const cn = randomUUID()
      const numa = randomUUID()
      ops.push(
        {op: 'create_provider', uuid: cn, name: `cn${i}`},
        {op: 'create_provider', uuid: numa, name: `cn${i}-numa0`, parent_provider_uuid: cn},
        {op: 'set_inventories', uuid: cn, inventories: {DISK_GB: {total: 100}}},
        {op: 'set_inventories', uuid: numa, inventories: {VCPU: {total: 8}, MEMORY_MB: {total: 4096}}},
        {op: 'set_traits', uuid: numa, traits: ['HW_NUMA_ROOT', 'CUSTOM_FOO']},
        {op: 'set_aggregates', uuid: cn, aggregates: [agg]},
      )
    }
    const shared = randomUUID()
    ops.push(
      {op: 'create_provider', uuid: shared, name: 'ss'},
      {op: 'set_inventories', uuid: shared, inventories: {DISK_GB: {total: 1000}, IPV4_ADDRESS: {total: 10}}},
      {op: 'set_traits', uuid: shared, traits: ['MISC_SHARES_VIA_AGGREGATE']},
      {op: 'set_aggregates', uuid: shared, aggregates: [agg]},
    )
    expect((await api.call('POST', '/placemat/v1/batch', {operations: ops})).status).toBe(200)
    const queries = [
      'resources=VCPU:1,DISK_GB:10',
      'resources=VCPU:1&resources1=MEMORY_MB:512&required1=CUSTOM_FOO&group_policy=none',
      'resources=IPV4_ADDRESS:1,VCPU:2&limit=2',
      'resources_COMPUTE=VCPU:1&resources_DISK=DISK_GB:5&group_policy=isolate&same_subtree=_COMPUTE',
      // Slots filled by the same provider (amounts summed), by different ones, and a group
      // without resources (mappings only): each pattern has its own template.
      'resources1=VCPU:1&resources2=VCPU:2&resources3=DISK_GB:1&group_policy=none',
      'resources=VCPU:1,MEMORY_MB:64&resources1=MEMORY_MB:128&required2=CUSTOM_FOO&group_policy=none',
    ]
    const versions: Microversion[] = [
      [1, 10],
      [1, 12],
      [1, 17],
      [1, 27],
      [1, 29],
      [1, 34],
      [1, 39],
    ]
    let compared = 0
    for (const q of queries) {
      for (const v of versions) {
        const params = new Map<string, string[]>()
        for (const [k, val] of new URLSearchParams(q)) params.set(k, [...(params.get(k) ?? []), val])
        let req
        try {
          req = parseCandidateRequest(params, v)
        } catch {
          continue // not valid at this version
        }
        const result = findCandidates(api.store.state, req)
        expect(renderCandidatesJson(result, v).toString()).toBe(JSON.stringify(renderCandidates(result, v)))
        compared++
      }
    }
    expect(compared).toBeGreaterThan(15)
    await api.close()
  })
})

describe('the answer cache', () => {
  it('never serves an answer from before a write', async () => {
    const api = await testApi()
    const rp = randomUUID()
    await api.call('POST', '/placemat/v1/batch', {
      operations: [
        {op: 'create_provider', uuid: rp, name: 'cn'},
        {op: 'set_inventories', uuid: rp, inventories: {VCPU: {total: 4}}},
      ],
    })
    const q = '/allocation_candidates?resources=VCPU:1'
    const used = async () => (await api.call('GET', q)).body.provider_summaries[rp].resources.VCPU.used
    expect(await used()).toBe(0)
    expect(await used()).toBe(0)
    const put = await api.call('PUT', `/allocations/${randomUUID()}`, {
      allocations: {[rp]: {resources: {VCPU: 3}}},
      project_id: randomUUID(),
      user_id: randomUUID(),
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    })
    expect(put.status).toBe(204)
    expect(await used()).toBe(3)
    // Only one more unit fits now: a request for two has no candidate.
    expect((await api.call('GET', '/allocation_candidates?resources=VCPU:2')).body.allocation_requests).toEqual([])
    await api.close()
  })
})
