/**
 * Large candidates answers are streamed in pieces, and the pieces are the same bytes as the
 * answer written whole, at every microversion shape.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {findCandidates} from '../../src/core/candidates/engine.js'
import {candidatesJsonPieces, renderCandidatesJson} from '../../src/core/candidates/render.js'
import {parseCandidateRequest, type Microversion} from '../../src/core/candidates/request.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const U = (kind: number, i: number) => `00000000-0000-4000-8000-${String(kind * 1000 + i).padStart(12, '0')}`
const AGG = '11111111-2222-4333-8444-555555555555'

/** Six hosts with a NUMA child each, and a sharing disk provider in their aggregate. */
function cloud(): unknown[] {
  const ops: unknown[] = [{op: 'ensure_trait', name: 'CUSTOM_FOO'}]
  for (let i = 0; i < 6; i++) {
    ops.push(
      {op: 'create_provider', uuid: U(1, i), name: `cn${i}`},
      {op: 'create_provider', uuid: U(2, i), name: `cn${i}-numa0`, parent_provider_uuid: U(1, i)},
      {op: 'set_inventories', uuid: U(1, i), inventories: {DISK_GB: {total: 100}}},
      {op: 'set_inventories', uuid: U(2, i), inventories: {VCPU: {total: 8}, MEMORY_MB: {total: 4096}}},
      {op: 'set_traits', uuid: U(2, i), traits: ['HW_NUMA_ROOT', 'CUSTOM_FOO']},
      {op: 'set_aggregates', uuid: U(1, i), aggregates: [AGG]},
    )
  }
  ops.push(
    {op: 'create_provider', uuid: U(3, 0), name: 'shared-disk'},
    {op: 'set_inventories', uuid: U(3, 0), inventories: {DISK_GB: {total: 1000}}},
    {op: 'set_traits', uuid: U(3, 0), traits: ['MISC_SHARES_VIA_AGGREGATE']},
    {op: 'set_aggregates', uuid: U(3, 0), aggregates: [AGG]},
  )
  return ops
}

const QUERIES: Array<[string, string]> = [
  ['1.10', 'resources=VCPU:1,DISK_GB:10'],
  ['1.12', 'resources=VCPU:1,MEMORY_MB:64'],
  ['1.29', 'resources=VCPU:1,DISK_GB:10'],
  ['1.34', 'resources=VCPU:1&resources1=MEMORY_MB:128&required1=CUSTOM_FOO&resources2=DISK_GB:5&group_policy=none'],
  ['1.39', 'resources_COMPUTE=VCPU:1&resources_DISK=DISK_GB:5&group_policy=isolate&same_subtree=_COMPUTE'],
]

describe('candidates answers, streamed', () => {
  let streamed: TestApi
  let whole: TestApi
  beforeAll(async () => {
    streamed = await testApi({streamAbove: 3})
    whole = await testApi()
    for (const t of [streamed, whole]) expect((await t.call('POST', '/placemat/v1/batch', {operations: cloud()})).status).toBe(200)
  })
  afterAll(async () => {
    await streamed.close()
    await whole.close()
  })

  const get = (t: TestApi, url: string, version: string) =>
    t.app.inject({method: 'GET', url, headers: {'x-auth-token': 'admin', 'openstack-api-version': `placement ${version}`}})

  it('GET /allocation_candidates: the same bytes as the whole answer, chunked', async () => {
    for (const [version, q] of QUERIES) {
      const [a, b] = await Promise.all([
        get(streamed, `/allocation_candidates?${q}`, version),
        get(whole, `/allocation_candidates?${q}`, version),
      ])
      expect(a.statusCode, `${version} ${q}`).toBe(200)
      expect(b.statusCode).toBe(200)
      expect(a.headers['content-type']).toBe('application/json')
      expect(a.headers['transfer-encoding']).toBe('chunked')
      expect(b.headers['transfer-encoding']).toBeUndefined()
      expect(a.body).toBe(b.body)
      expect(JSON.parse(a.body).allocation_requests.length).toBeGreaterThan(3)
    }
  })

  it('streams again when asked again (a streamed answer is not memoized), and a short answer is not streamed', async () => {
    const q = '/allocation_candidates?resources=VCPU:1,DISK_GB:10'
    const [first, second] = [await get(streamed, q, '1.39'), await get(streamed, q, '1.39')]
    expect(second.headers['transfer-encoding']).toBe('chunked')
    expect(second.body).toBe(first.body)
    const short = await get(streamed, `${q}&limit=2`, '1.39')
    expect(short.headers['transfer-encoding']).toBeUndefined()
    expect(JSON.parse(short.body).allocation_requests).toHaveLength(2)
  })

  it('GET /placemat/v1/allocation_candidates: the same bytes, with and without near', async () => {
    for (const [version, q] of QUERIES) {
      const path = `/placemat/v1/allocation_candidates?${q}`
      const [a, b, plain] = await Promise.all([
        get(streamed, path, version),
        get(whole, path, version),
        get(whole, `/allocation_candidates?${q}`, version),
      ])
      expect(a.headers['transfer-encoding']).toBe('chunked')
      expect(a.body).toBe(b.body)
      expect(a.body).toBe(plain.body)
    }
    const near = `/placemat/v1/allocation_candidates?resources=VCPU:1&near=${U(9, 9)}`
    const [a, b] = await Promise.all([get(streamed, near, '1.39'), get(whole, near, '1.39')])
    expect(a.statusCode).toBe(200)
    expect(a.headers['transfer-encoding']).toBe('chunked')
    expect(a.body).toBe(b.body)
  })

  it('writes the document in pieces of about the size asked for, the same bytes as whole', () => {
    for (const [version, q] of QUERIES) {
      const v = version.split('.').map(Number) as unknown as Microversion
      const params = new Map<string, string[]>()
      for (const [k, val] of new URLSearchParams(q)) params.set(k, [...(params.get(k) ?? []), val])
      const result = findCandidates(whole.store.state, parseCandidateRequest(params, v))
      const pieces = [...candidatesJsonPieces(result, v, 200)]
      const all = renderCandidatesJson(result, v)
      expect(Buffer.concat(pieces).toString()).toBe(all.toString())
      expect(pieces.length).toBeGreaterThan(all.length / 1000)
      // A piece is handed over after the entry that filled it: never much more than asked for.
      for (const p of pieces) expect(p.length).toBeLessThan(200 + 1200)
    }
  })
})

describe('a streamed answer and a write between its pieces', () => {
  it('is the answer as it was when asked: the write does not reach into it', async () => {
    const api = await testApi()
    try {
      expect((await api.call('POST', '/placemat/v1/batch', {operations: cloud()})).status).toBe(200)
      const v: Microversion = [1, 39]
      const ask = () => findCandidates(api.store.state, parseCandidateRequest(new Map([['resources', ['VCPU:1']]]), v))
      const result = ask()
      const before = renderCandidatesJson(result, v).toString()
      const pieces = candidatesJsonPieces(result, v, 100)[Symbol.iterator]()
      const first = pieces.next().value as Buffer
      // Deleting hosts (the index is patched in place on the next search) and adding one.
      for (const i of [1, 4]) {
        expect((await api.call('DELETE', `/resource_providers/${U(2, i)}`)).status).toBe(204)
        expect((await api.call('DELETE', `/resource_providers/${U(1, i)}`)).status).toBe(204)
      }
      expect((await api.call('POST', '/resource_providers', {uuid: U(4, 0), name: 'late'})).status).toBe(200)
      expect(ask().providerSummaries).toHaveLength(8)
      const rest: Buffer[] = []
      for (let next = pieces.next(); !next.done; next = pieces.next()) rest.push(next.value)
      expect(Buffer.concat([first, ...rest]).toString()).toBe(before)
    } finally {
      await api.close()
    }
  })
})
