/**
 * POST /placemat/v1/make-room: the planner of core/make-room on the daemon's State, answered as a
 * plan's record. The plan changes nothing; its moves, written in order through POST
 * /placemat/v1/allocations, are each accepted and leave what the plan said (capacity's count).
 *
 * The cloud: three racks of two hosts (8 VCPU, 16 GB each); r1 and r2's hosts hold three
 * consumers of 2 VCPU (2 free each), r3's one each (6 free). c4 (4 VCPU) fits once on h5 and h6.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {FlavorCatalog} from '../../src/http/flavor-catalog.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const H = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const C = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const RACKS: Record<string, number[]> = {r1: [1, 2], r2: [3, 4], r3: [5, 6]}
/** Consumers on each host. */
const HELD: Record<number, number> = {1: 3, 2: 3, 3: 3, 4: 3, 5: 1, 6: 1}
const MAKE_ROOM = '/placemat/v1/make-room'
/** c4 as `openstack flavor list --long -f json` prints it. */
const C4 = {Name: 'c4', VCPUs: 4, RAM: 4096, Disk: 0, Ephemeral: 0, Swap: '', 'Is Public': true, Properties: {}}

let dir: string
let catalog: FlavorCatalog
let api: TestApi

const ok = async (method: string, url: string, body?: unknown, on = api) => {
  const r = await on.call(method, url, body)
  expect(r.status, `${method} ${url}: ${JSON.stringify(r.body)}`).toBeLessThan(300)
  return r.body
}

/** The cloud above, on `on`. */
async function cloud(on: TestApi): Promise<void> {
  let c = 0
  for (const [n, held] of Object.entries(HELD).map(([n, k]) => [Number(n), k])) {
    await ok('POST', '/resource_providers', {name: `h${n}`, uuid: H(n)}, on)
    await ok(
      'PUT',
      `/resource_providers/${H(n)}/inventories`,
      {resource_provider_generation: 0, inventories: {VCPU: {total: 8}, MEMORY_MB: {total: 16384}}},
      on,
    )
    for (let k = 0; k < held; k++)
      await ok(
        'PUT',
        `/allocations/${C(++c)}`,
        {
          allocations: {[H(n)]: {resources: {VCPU: 2, MEMORY_MB: 1024}}},
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        },
        on,
      )
  }
  const racks = Object.entries(RACKS).map(([name, hosts]) => ({name, hosts: hosts.map((n) => `h${n}`)}))
  await ok('PUT', '/placemat/v1/topology/layout', {rooms: [{name: 'room1', rows: [{name: 'row1', racks}]}]}, on)
}

/** What a plan must leave as it was: every provider's generation and usage, every consumer, the State's version. */
async function snapshot(on = api) {
  return {
    providers: ((await ok('GET', '/placemat/v1/providers', undefined, on)).providers as any[]).map((p) => [p.uuid, p.generation]),
    usages: await Promise.all(Object.keys(HELD).map((n) => ok('GET', `/resource_providers/${H(Number(n))}/usages`, undefined, on))),
    consumers: (await ok('GET', '/placemat/v1/consumers', undefined, on)).consumers,
    version: (await on.store.refresh()).version,
  }
}

/** The moves written in order, each as the plan gives it, through placemat's POST /allocations. */
async function replay(moves: any[]): Promise<void> {
  for (const m of moves) {
    const r = await api.call('POST', '/placemat/v1/allocations', {
      [m.consumer]: {
        allocations: m.allocations,
        project_id: m.project_id,
        user_id: m.user_id,
        consumer_generation: m.consumer_generation,
        consumer_type: m.consumer_type,
      },
    })
    expect(r.status, `move ${m.step}: ${JSON.stringify(r.body)}`).toBe(204)
  }
}

const fitOf = async (level: string, name: string) =>
  ((await ok('GET', `/placemat/v1/capacity?flavor=c4&level=${level}`)).domains as any[]).find((d) => d.name === name).fit

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-make-room-'))
  const file = path.join(dir, 'flavors.json')
  fs.writeFileSync(file, JSON.stringify([C4, {Name: 'small', VCPUs: 1, RAM: 512, Disk: 0}]))
  catalog = new FlavorCatalog(file)
  expect(catalog.load()).toBe(2)
})
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

beforeEach(async () => {
  api = await testApi({flavors: catalog})
  await cloud(api)
})
afterEach(() => api.close())

describe('POST /placemat/v1/make-room', () => {
  it('plans K more of a catalog flavor, changing nothing; its moves written in order leave the fit it said', async () => {
    // K counts as capacity does: how many more fit. 2 do now; 4 asked.
    expect(await fitOf('cloud', 'cloud')).toBe(2)
    const before = await snapshot()
    const r = await api.call('POST', MAKE_ROOM, {flavor: 'c4', count: 4})
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const plan = r.body
    expect(plan).toMatchObject({goal: 'flavor', flavor: 'c4', count: 4, in: null, possible: true, fit_before: 2, target: 4})
    // Each c4 more takes one consumer moved off a host with 2 VCPU free: two moves, the fewest.
    expect(plan.moves).toHaveLength(2)
    expect(plan.fit_after).toBeGreaterThanOrEqual(4)
    expect(plan.lower_bound).toBe(2)
    expect(['exact', 'heuristic']).toContain(plan.method)
    expect(['bound', 'search']).toContain(plan.proof)
    expect(plan).toHaveProperty('search')
    expect(plan.why).toBeUndefined()
    plan.moves.forEach((m: any, k: number) => {
      expect(m).toMatchObject({step: k + 1, project_id: 'p', user_id: 'u', consumer_type: 'INSTANCE', status: 'planned'})
      expect(m.from).not.toBe(m.to)
      expect(m.to_uuid).toBe(H(Number(m.to.slice(1))))
      expect(Object.keys(m.allocations)).toEqual([m.to_uuid])
    })
    // Planning wrote nothing.
    expect(await snapshot()).toEqual(before)
    await replay(plan.moves)
    expect(await fitOf('cloud', 'cloud')).toBe(plan.fit_after)
  })

  it('plans in a domain, with the flavor given whole (no catalog needed) as with its name', async () => {
    const bare = await testApi()
    try {
      await cloud(bare)
      const inline = await bare.call('POST', MAKE_ROOM, {flavor: C4, count: 3, in: 'rack:r1'})
      expect(inline.status, JSON.stringify(inline.body)).toBe(200)
      const named = await api.call('POST', MAKE_ROOM, {flavor: 'c4', count: 3, in: 'rack:r1'})
      expect(inline.body).toEqual(named.body)
      // Three in r1: one host emptied (3 moves, 2 fit there) and one consumer off the other.
      expect(named.body).toMatchObject({
        flavor: 'c4',
        in: {level: 'rack', name: 'r1'},
        possible: true,
        fit_before: 0,
        fit_after: 3,
        lower_bound: 4,
        proof: 'bound',
      })
      expect(named.body.moves).toHaveLength(4)
      for (const m of named.body.moves) expect(['h1', 'h2']).toContain(m.from)
      // A flavor by name with no catalog to find it in: as capacity says.
      const none = await bare.call('POST', MAKE_ROOM, {flavor: 'c4', count: 1})
      expect(none.status).toBe(404)
      expect(none.body.errors[0].detail).toContain('start it with --flavors FILE')
    } finally {
      await bare.close()
    }
    await replay((await ok('POST', MAKE_ROOM, {flavor: 'c4', count: 3, in: 'rack:r1'})).moves)
    expect(await fitOf('rack', 'r1')).toBe(3)
  })

  it('plans N hosts empty, the emptiest first', async () => {
    const r = await ok('POST', MAKE_ROOM, {free_hosts: 2})
    expect(r).toMatchObject({goal: 'free_hosts', count: 2, in: null, possible: true, fit_before: 0, fit_after: 2, target: 2})
    // h5 and h6 hold one consumer each: both go to r1's or r2's hosts.
    expect(r.moves.map((m: any) => m.from).sort()).toEqual(['h5', 'h6'])
    for (const m of r.moves) expect(['h1', 'h2', 'h3', 'h4']).toContain(m.to)
    await replay(r.moves)
    for (const n of [5, 6]) expect((await ok('GET', `/resource_providers/${H(n)}/usages`)).usages).toEqual({VCPU: 0, MEMORY_MB: 0})
    const rack = await ok('POST', MAKE_ROOM, {free_hosts: 1, in: 'rack:r3', max_moves: 3})
    expect(rack).toMatchObject({possible: true, fit_before: 2, fit_after: 2, moves: []})
  })

  it('plans a rack drained: every consumer of it placed outside, none left', async () => {
    const r = await ok('POST', MAKE_ROOM, {drain: 'rack:r1'})
    expect(r).toMatchObject({goal: 'drain', in: {level: 'rack', name: 'r1'}, possible: true, fit_before: 6, fit_after: 0, target: 0})
    expect(r.moves).toHaveLength(6)
    for (const m of r.moves) {
      expect(['h1', 'h2']).toContain(m.from)
      expect(['h3', 'h4', 'h5', 'h6']).toContain(m.to)
    }
    await replay(r.moves)
    for (const n of RACKS.r1) expect((await ok('GET', `/resource_providers/${H(n)}/usages`)).usages).toEqual({VCPU: 0, MEMORY_MB: 0})
  })

  it('answers a goal that cannot be met with why, and lower_bound null when no plan can meet it', async () => {
    const before = await snapshot()
    // 10 c4 take 40 VCPU, with 20 free in the whole cloud.
    const never = await ok('POST', MAKE_ROOM, {flavor: 'c4', count: 10})
    expect(never).toMatchObject({possible: false, moves: [], lower_bound: null, fit_before: 2, fit_after: 2})
    expect(never.why).toMatch(/VCPU binds/)
    // row1 is the whole cloud: its consumers have nowhere to go.
    const drain = await ok('POST', MAKE_ROOM, {drain: 'row:row1'})
    expect(drain).toMatchObject({possible: false, lower_bound: null})
    expect(drain.why).toMatch(/^the consumers of row row1 hold 28 VCPU, more than the 0 free .*: VCPU binds$/)
    // Possible, in more moves than allowed: the bound stays.
    const short = await ok('POST', MAKE_ROOM, {flavor: 'c4', count: 4, max_moves: 1})
    expect(short).toMatchObject({possible: false, lower_bound: 2, moves: []})
    expect(short.why).toBe('at least 2 moves are needed, more than the 1 allowed')
    expect(await snapshot()).toEqual(before)
  })

  it('refuses a body that is not one goal (400, in Placement’s error format), and a domain with no hosts (404), changing nothing', async () => {
    const before = await snapshot()
    const bad: Array<[unknown, string]> = [
      [{}, 'Give one goal'],
      [{flavor: 'c4', count: 1, free_hosts: 1}, 'not flavor and free_hosts'],
      [{free_hosts: 1, drain: 'rack:r1'}, 'not free_hosts and drain'],
      [{flavor: 'c4'}, 'flavor needs count'],
      [{count: 2}, 'Give one goal'],
      [{free_hosts: 1, count: 1}, 'count goes with flavor'],
      [{flavor: 'c4', count: -1}, 'JSON does not validate'],
      [{flavor: 'c4', count: 1.5}, 'JSON does not validate'],
      [{flavor: 'c4', count: '2'}, 'JSON does not validate'],
      [{free_hosts: 1, max_moves: -1}, 'JSON does not validate'],
      [{free_hosts: 1, why: 'not a key'}, 'JSON does not validate'],
      [{flavor: 'c4', count: 1, in: 'aisle:a'}, 'Invalid in aisle:a'],
      [{free_hosts: 1, in: 'r1'}, 'Invalid in r1'],
      [{drain: 'rack'}, 'Invalid drain rack'],
      [{drain: 'rack:r1', in: 'rack:r1'}, 'drain names its domain'],
      [{flavor: 'c8', count: 1}, 'No flavor named c8 in the catalog; it has c4, small.'],
      [{flavor: {...C4, VCPUs: -1}, count: 1}, 'flavor c4: VCPUs must be a whole number >= 0, not -1'],
      [{flavor: {VCPUs: 1, RAM: 1}, count: 1}, 'flavor: no name'],
      [{flavor: 7, count: 1}, 'JSON does not validate'],
      ['{"free_hosts": 1', 'Malformed JSON'],
    ]
    for (const [body, detail] of bad) {
      const r = await api.call('POST', MAKE_ROOM, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.errors).toHaveLength(1)
      expect(r.body.errors[0]).toMatchObject({status: 400, title: 'Bad Request', code: 'placement.undefined_code'})
      expect(r.body.errors[0].detail, JSON.stringify(body)).toContain(detail)
    }
    for (const body of [{free_hosts: 1, in: 'rack:nope'}, {drain: 'host:nope'}, {flavor: 'c4', count: 1, in: 'room:nope'}]) {
      const r = await api.call('POST', MAKE_ROOM, body)
      expect(r.status, JSON.stringify(body)).toBe(404)
      expect(r.body.errors[0].detail).toMatch(/No (rack|host|room) named nope with hosts/)
    }
    expect(await snapshot()).toEqual(before)
  })

  it('is an admin’s: a caller who may not write placemat’s API is refused (403) before the body is read', async () => {
    const member = {'x-auth-token': 'user', 'x-roles': 'member,reader', 'x-project-id': 'p1'}
    const r = await api.call('POST', MAKE_ROOM, {free_hosts: 1}, member)
    expect(r.status).toBe(403)
    expect(r.body.errors[0].detail).toContain('placemat:write')
    expect((await api.call('POST', MAKE_ROOM, '{not json', member)).status).toBe(403)
    expect(
      (await api.call('POST', MAKE_ROOM, {free_hosts: 1}, {'x-auth-token': 'user', 'x-roles': 'admin', 'x-project-id': 'p1'})).status,
    ).toBe(200)
    expect((await api.call('GET', MAKE_ROOM)).status).toBe(405)
  })
})
