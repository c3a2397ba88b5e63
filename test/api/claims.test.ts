/**
 * POST /placemat/v1/claims (rules checked in the write transaction) and
 * GET /placemat/v1/allocation_candidates (near / far ordering), over HTTP on an in-memory
 * store.
 */
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {nodeUuid} from '../../src/core/topology.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const C = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`

// room m1: row r1 (rack k11: h1 h2, rack k12: h3), row r2 (rack k21: h4); room m2: row r3 (rack k31: h5)
const HOSTS = [1, 2, 3, 4, 5].map((i) => ({name: `h${i}`, uuid: U(i)}))
const LAYOUT = {
  rooms: [
    {
      name: 'm1',
      rows: [
        {
          name: 'r1',
          racks: [
            {name: 'k11', hosts: ['h1', 'h2']},
            {name: 'k12', hosts: ['h3']},
          ],
        },
        {name: 'r2', racks: [{name: 'k21', hosts: ['h4']}]},
      ],
    },
    {name: 'm2', rows: [{name: 'r3', racks: [{name: 'k31', hosts: ['h5']}]}]},
  ],
}

let api: TestApi

async function ok(method: string, url: string, body?: unknown) {
  const r = await api.call(method, url, body)
  expect(r.status, `${method} ${url}: ${JSON.stringify(r.body)}`).toBeLessThan(300)
  return r.body
}

beforeEach(async () => {
  api = await testApi()
  for (const h of HOSTS) {
    await ok('POST', '/resource_providers', h)
    await ok('PUT', `/resource_providers/${h.uuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: {VCPU: {total: 4}, MEMORY_MB: {total: 8192}},
    })
  }
  await ok('PUT', '/placemat/v1/topology/layout', LAYOUT)
})

afterEach(async () => {
  await api.close()
})

const alloc = (host: number, vcpu = 1) => ({[U(host)]: {resources: {VCPU: vcpu}}})

function claimBody(consumer: string, host: number, affinity: unknown[] = [], generation: number | null = null) {
  return {consumer_uuid: consumer, project_id: 'p', user_id: 'u', consumer_generation: generation, allocations: alloc(host), affinity}
}

async function put(consumer: string, host: number) {
  await ok('PUT', `/allocations/${consumer}`, {
    allocations: alloc(host),
    project_id: 'p',
    user_id: 'u',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  })
}

/** Everything a failed claim must leave as it was. */
async function snapshot() {
  const consumers = await ok('GET', '/placemat/v1/consumers')
  const providers = await ok('GET', '/placemat/v1/providers')
  return {consumers, providers}
}

describe('POST /placemat/v1/claims', () => {
  it('writes a claim without rules like PUT /allocations and returns the new generation', async () => {
    const body = await ok('POST', '/placemat/v1/claims', {...claimBody(C(1), 1), consumer_type: 'INSTANCE'})
    expect(body).toEqual({consumer_uuid: C(1), consumer_generation: 1, allocations: alloc(1)})
    const got = await ok('GET', `/allocations/${C(1)}`)
    expect(got.consumer_type).toBe('INSTANCE')
    expect(got.allocations[U(1)].resources).toEqual({VCPU: 1})
  })

  const cases: Array<{level: string; relation: string; host: number; allowed: boolean}> = [
    // the anchor C(1) is on h1: rack k11, row r1, room m1
    {level: 'rack', relation: 'same', host: 2, allowed: true},
    {level: 'rack', relation: 'same', host: 3, allowed: false},
    {level: 'rack', relation: 'different', host: 3, allowed: true},
    {level: 'rack', relation: 'different', host: 2, allowed: false},
    {level: 'row', relation: 'same', host: 3, allowed: true},
    {level: 'row', relation: 'same', host: 4, allowed: false},
    {level: 'row', relation: 'different', host: 4, allowed: true},
    {level: 'row', relation: 'different', host: 3, allowed: false},
    {level: 'room', relation: 'same', host: 4, allowed: true},
    {level: 'room', relation: 'same', host: 5, allowed: false},
    {level: 'room', relation: 'different', host: 5, allowed: true},
    {level: 'room', relation: 'different', host: 4, allowed: false},
  ]
  for (const c of cases) {
    it(`${c.relation} ${c.level}: h${c.host} is ${c.allowed ? 'allowed' : 'refused'}`, async () => {
      await put(C(1), 1)
      const before = await snapshot()
      const r = await api.call(
        'POST',
        '/placemat/v1/claims',
        claimBody(C(2), c.host, [{relation: c.relation, level: c.level, consumer: C(1)}]),
      )
      if (c.allowed) {
        expect(r.status).toBe(200)
        expect(r.body.consumer_generation).toBe(1)
      } else {
        expect(r.status).toBe(409)
        expect(r.body.errors[0].code).toBe('placemat.affinity_violation')
        expect(r.body.errors[0].detail).toContain(`consumer ${C(2)}`)
        expect(await snapshot()).toEqual(before)
      }
    })
  }

  it('refuses a same rule whose consumer holds nothing', async () => {
    const r = await api.call('POST', '/placemat/v1/claims', claimBody(C(2), 1, [{relation: 'same', level: 'rack', consumer: C(9)}]))
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placemat.affinity_violation')
    expect(r.body.errors[0].detail).toContain('has no allocations in any rack')
  })

  it('allows a different rule whose consumer holds nothing', async () => {
    const r = await api.call('POST', '/placemat/v1/claims', claimBody(C(2), 1, [{relation: 'different', level: 'rack', consumer: C(9)}]))
    expect(r.status).toBe(200)
  })

  it('checks the consumer generation first (placement.concurrent_update)', async () => {
    await put(C(1), 1)
    const before = await snapshot()
    const r = await api.call('POST', '/placemat/v1/claims', claimBody(C(1), 2, [], null))
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.concurrent_update')
    expect(r.body.errors[0].detail).toContain('consumer generation conflict')
    expect(await snapshot()).toEqual(before)
    const again = await api.call('POST', '/placemat/v1/claims', claimBody(C(1), 2, [], 1))
    expect(again.status).toBe(200)
    expect(again.body.consumer_generation).toBe(2)
  })

  it('is refused like PUT /allocations when capacity is short, writing nothing', async () => {
    const before = await snapshot()
    const r = await api.call('POST', '/placemat/v1/claims', {...claimBody(C(1), 1), allocations: alloc(1, 5)})
    expect(r.status).toBe(409)
    expect(r.body.errors[0].detail).toContain('exceed the capacity')
    expect(await snapshot()).toEqual(before)
  })

  it('rejects malformed claims with 400', async () => {
    const bad = [
      {...claimBody(C(1), 1), affinity: [{relation: 'near', level: 'rack', consumer: C(2)}]},
      {...claimBody(C(1), 1), affinity: [{relation: 'same', level: 'shelf', consumer: C(2)}]},
      {...claimBody(C(1), 1), allocations: {}},
      {...claimBody(C(1), 1), consumer_uuid: 'nope'},
      claimBody(C(1), 1, [{relation: 'different', level: 'row', consumer: C(1)}]),
      {claims: [claimBody(C(1), 1), claimBody(C(1), 2)]},
      {claims: []},
    ]
    for (const b of bad) {
      const r = await api.call('POST', '/placemat/v1/claims', b)
      expect(r.status, JSON.stringify(b)).toBe(400)
    }
    const {project_id: _p, ...noProject} = claimBody(C(1), 1)
    expect((await api.call('POST', '/placemat/v1/claims', noProject)).status).toBe(400)
    expect((await api.call('POST', '/placemat/v1/claims', '{')).status).toBe(400)
  })

  it('writes a batch in one transaction, with rules between its claims', async () => {
    const different = (other: string) => [{relation: 'different', level: 'row', consumer: other}]
    const before = await snapshot()
    // h1 and h3 share row r1: nothing of the batch is written.
    const clash = await api.call('POST', '/placemat/v1/claims', {
      claims: [claimBody(C(1), 1, different(C(2))), claimBody(C(2), 3, different(C(1)))],
    })
    expect(clash.status).toBe(409)
    expect(clash.body.errors[0].code).toBe('placemat.affinity_violation')
    expect(await snapshot()).toEqual(before)
    // h1, h4, h5: three rows.
    const ok3 = await api.call('POST', '/placemat/v1/claims', {
      claims: [claimBody(C(1), 1, different(C(2))), claimBody(C(2), 4, different(C(3))), claimBody(C(3), 5, different(C(1)))],
    })
    expect(ok3.status).toBe(200)
    expect(ok3.body.claims.map((c: any) => c.consumer_uuid)).toEqual([C(1), C(2), C(3)])
    const consumers = (await ok('GET', '/placemat/v1/consumers')).consumers
    expect(consumers).toHaveLength(3)
  })

  it('a batch that fails on capacity writes none of its claims', async () => {
    const before = await snapshot()
    const r = await api.call('POST', '/placemat/v1/claims', {
      claims: [claimBody(C(1), 1), {...claimBody(C(2), 2), allocations: alloc(2, 9)}],
    })
    expect(r.status).toBe(409)
    expect(await snapshot()).toEqual(before)
  })

  it('parallel anti-affinity claims never land two in one row', async () => {
    // Every claimer wants h1 (or h3: same row) first; each is `different row` from all others.
    const group = Array.from({length: 10}, (_, i) => C(100 + i))
    const results = await Promise.all(
      group.map((me, i) =>
        api.call(
          'POST',
          '/placemat/v1/claims',
          claimBody(
            me,
            [1, 3, 4, 5][i % 4],
            group.filter((o) => o !== me).map((o) => ({relation: 'different', level: 'row', consumer: o})),
          ),
        ),
      ),
    )
    const won = results.filter((r) => r.status === 200)
    expect(results.every((r) => r.status === 200 || r.body.errors[0].code === 'placemat.affinity_violation')).toBe(true)
    const rows = won.map((r) => {
      const host = Number(Object.keys(r.body.allocations)[0].slice(-3))
      return host <= 3 ? 'r1' : host === 4 ? 'r2' : 'r3'
    })
    expect(new Set(rows).size).toBe(rows.length)
    expect(rows.length).toBe(3)
  })

  it('is not there for a plain Placement client and not below admin', async () => {
    const r = await api.call('POST', '/placemat/v1/claims', claimBody(C(1), 1), {'x-auth-token': 'user'})
    expect(r.status).toBe(403)
  })
})

describe('GET /placemat/v1/allocation_candidates', () => {
  const hostsOf = (body: any) => body.allocation_requests.map((ar: any) => Number(Object.keys(ar.allocations)[0].slice(-3)))

  it('without near/far is the body of GET /allocation_candidates', async () => {
    await put(C(1), 4)
    const q = 'resources=VCPU:1&limit=3'
    const plain = await ok('GET', `/allocation_candidates?${q}`)
    const mine = await ok('GET', `/placemat/v1/allocation_candidates?${q}`)
    expect(mine).toEqual(plain)
  })

  it('near: same rack, then row, then room, then the rest; far the reverse', async () => {
    await put(C(1), 2) // h2: rack k11 (h1), row r1 (h3), room m1 (h4), elsewhere h5
    expect(hostsOf(await ok('GET', '/allocation_candidates?resources=VCPU:1'))).toEqual([1, 2, 3, 4, 5])
    expect(hostsOf(await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&near=${C(1)}`))).toEqual([1, 2, 3, 4, 5])
    await put(C(2), 4) // h4: rack k21, row r2, room m1
    expect(hostsOf(await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&near=${C(2)}`))).toEqual([4, 1, 2, 3, 5])
    expect(hostsOf(await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&far=${C(2)}`))).toEqual([5, 1, 2, 3, 4])
    await put(C(3), 5)
    expect(hostsOf(await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&near=${C(3)}`))).toEqual([5, 1, 2, 3, 4])
    expect(hostsOf(await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&far=${C(3)}`))).toEqual([1, 2, 3, 4, 5])
  })

  it('sorts the whole set before the limit, and narrows provider_summaries to the kept candidates', async () => {
    await put(C(1), 5)
    const body = await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&near=${C(1)}&limit=2`)
    expect(hostsOf(body)).toEqual([5, 1])
    expect(Object.keys(body.provider_summaries).sort()).toEqual([U(1), U(5)])
  })

  it('a consumer that holds nothing leaves the order alone', async () => {
    const body = await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&far=${C(42)}`)
    expect(hostsOf(body)).toEqual([1, 2, 3, 4, 5])
  })

  it('answers 400 for near and far together, a bad consumer, or a bad Placement query', async () => {
    expect((await api.call('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&near=${C(1)}&far=${C(1)}`)).status).toBe(400)
    expect((await api.call('GET', '/placemat/v1/allocation_candidates?resources=VCPU:1&near=bob')).status).toBe(400)
    const bad = await api.call('GET', '/placemat/v1/allocation_candidates?resources=VCPU:x')
    const placement = await api.call('GET', '/allocation_candidates?resources=VCPU:x')
    expect(bad.status).toBe(400)
    expect(bad.body.errors[0].detail).toBe(placement.body.errors[0].detail)
  })

  it('works with member_of on topology aggregates', async () => {
    const body = await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&member_of=!in:${nodeUuid('row', 'r1')}`)
    expect(hostsOf(body)).toEqual([4, 5])
  })
})
