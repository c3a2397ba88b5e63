/**
 * Placement groups through the HTTP API (inject): a rule given once stays true. Claims that
 * name a group are checked with every member where it is; a layout change that would break a
 * group is refused (409 placemat.affinity_violation naming the group, its rule and members),
 * listed by the dry run, and reported by GET /placemat/v1/groups when forced.
 *
 * The cloud: 3 rooms x 2 rows x 2 racks x 2 hosts (24 hosts, 8 VCPU each).
 */
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {Store} from '../../src/store/store.js'
import {buildApp} from '../../src/http/app.js'
import {tempFiles} from '../helpers/temp-files.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'
import {threeRooms} from '../helpers/three-rooms.js'
import {nodeUuid} from '../../src/core/topology.js'

const LAYOUT = '/placemat/v1/topology/layout'
const GROUPS = '/placemat/v1/groups'
const H = (i: number) => `11111111-0000-4000-8000-${String(i).padStart(12, '0')}`
const C = (i: number) => `22222222-0000-4000-8000-${String(i).padStart(12, '0')}`

const {hosts: hostNames, layout} = threeRooms('host')
const hostUuid = (name: string) => H(hostNames.indexOf(name) + 1)
const H_INDEX = (uuid: string) => Number(uuid.slice(-12)) - 1

let api: TestApi

async function ok(method: string, url: string, body?: unknown) {
  const res = await api.call(method, url, body)
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBeLessThan(300)
  return res.body
}

/** POST /placemat/v1/claims for `consumer` on `host`, in `group`. */
const claim = (consumer: string, host: string, group?: string, query = '') =>
  api.call('POST', `/placemat/v1/claims${query}`, {
    consumer_uuid: consumer,
    project_id: 'p',
    user_id: 'u',
    consumer_generation: null,
    allocations: {[hostUuid(host)]: {resources: {VCPU: 1}}},
    ...(group ? {group} : {}),
  })

async function seed(a: TestApi) {
  api = a
  const operations = hostNames.flatMap((name, i) => [
    {op: 'create_provider', uuid: H(i + 1), name},
    {op: 'set_inventories', uuid: H(i + 1), inventories: {VCPU: {total: 8}}},
  ])
  await ok('POST', '/placemat/v1/batch', {operations})
  await ok('PUT', LAYOUT, layout)
}

beforeEach(async () => seed(await testApi()))
afterEach(() => api.close())

describe('placement groups', () => {
  it('are made, listed, changed and deleted; bad ones are refused with Placement’s error format', async () => {
    const made = await api.call('POST', GROUPS, {name: 'db', policy: 'spread', level: 'row', max_skew: 1})
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({
      name: 'db',
      policy: 'spread',
      level: 'row',
      max_skew: 1,
      soft: false,
      generation: 1,
      members: [],
      violations: [],
    })
    expect(made.body.rule).toBe('spread over rows, max skew 1')
    for (const [body, words] of [
      [{name: 'x', policy: 'max-per', level: 'rack'}, /needs max_per/],
      [{name: 'x', policy: 'affinity', level: 'rack', max_skew: 2}, /max_skew applies only/],
      [{name: 'x', policy: 'affinity', level: 'shelf'}, /JSON does not validate/],
      [{name: '../x', policy: 'affinity', level: 'rack'}, /JSON does not validate/],
    ] as const) {
      const r = await api.call('POST', GROUPS, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.errors[0].detail).toMatch(words)
    }
    expect((await api.call('POST', GROUPS, {name: 'db', policy: 'affinity', level: 'host'})).status).toBe(409)
    const added = await ok('POST', `${GROUPS}/db/members`, {add: [C(1), C(2)]})
    expect(added).toMatchObject({generation: 2, members: [C(1), C(2)]})
    expect((await api.call('POST', `${GROUPS}/db/members`, {remove: [C(1)], generation: 1})).status).toBe(409)
    expect(await ok('POST', `${GROUPS}/db/members`, {remove: [C(1)], generation: 2})).toMatchObject({generation: 3, members: [C(2)]})
    expect((await ok('GET', GROUPS)).groups.map((g: any) => g.name)).toEqual(['db'])
    expect((await api.call('DELETE', `${GROUPS}/db?generation=2`)).status).toBe(409)
    expect((await api.call('DELETE', `${GROUPS}/db`)).status).toBe(204)
    expect((await api.call('GET', `${GROUPS}/db`)).status).toBe(404)
  })

  it('three replicas spread by row: a rack move that would put two in one row is refused, shown by the dry run, and reported when forced', async () => {
    await ok('POST', GROUPS, {name: 'replicas', policy: 'anti-affinity', level: 'row'})
    expect((await claim(C(1), 'host-1111', 'replicas')).status).toBe(200)
    expect((await claim(C(2), 'host-1211', 'replicas')).status).toBe(200)
    // A third in row-12 is refused; in row-21 it is taken.
    const refused = await claim(C(3), 'host-1221', 'replicas')
    expect(refused.status).toBe(409)
    expect(refused.body.errors[0].code).toBe('placemat.affinity_violation')
    expect(refused.body.errors[0].detail).toMatch(/group replicas \(anti-affinity by row\): 2 members in row row-12/)
    expect((await claim(C(3), 'host-2111', 'replicas')).status).toBe(200)
    expect((await ok('GET', `${GROUPS}/replicas`)).placements).toEqual([
      {consumer: C(1), hosts: ['host-1111'], rack: ['rack-111'], row: ['row-11'], room: ['room-1'], hostless: false},
      {consumer: C(2), hosts: ['host-1211'], rack: ['rack-121'], row: ['row-12'], room: ['room-1'], hostless: false},
      {consumer: C(3), hosts: ['host-2111'], rack: ['rack-211'], row: ['row-21'], room: ['room-2'], hostless: false},
    ])

    // Move rack-121 (C2's) into row-11 (C1's).
    const moved = structuredClone(layout)
    const row11 = moved.rooms![0].rows![0]
    const row12 = moved.rooms![0].rows![1]
    row11.racks!.push(row12.racks!.shift()!)
    const before = await ok('GET', LAYOUT)
    const dry = await ok('PUT', `${LAYOUT}?dry_run=true`, moved)
    expect(dry.plan.violations).toEqual([
      {
        group: 'replicas',
        rule: 'anti-affinity by row',
        soft: false,
        why: '2 members in row row-11 (at most 1)',
        domains: [{name: 'row-11', members: [C(1), C(2)].sort()}],
      },
    ])
    const put = await api.call('PUT', LAYOUT, moved)
    expect(put.status).toBe(409)
    expect(put.body.errors[0].code).toBe('placemat.affinity_violation')
    expect(put.body.errors[0].detail).toContain('group replicas (anti-affinity by row)')
    // The dry run's error is the write's; allowed, there is none.
    expect(dry.error).toMatchObject({status: 409, code: 'placemat.affinity_violation'})
    expect(put.body.errors[0].detail).toContain(dry.error.detail) // the write's detail comes in Placement's wrapping
    expect((await ok('PUT', `${LAYOUT}?dry_run=true&allow_violations=true`, moved)).error).toBeNull()
    expect(await ok('GET', LAYOUT)).toEqual(before)
    expect((await ok('GET', GROUPS)).groups[0].violations).toEqual([])

    const forced = await ok('PUT', `${LAYOUT}?allow_violations=true`, moved)
    expect(forced.plan.violations).toHaveLength(1)
    const [group] = (await ok('GET', GROUPS)).groups
    expect(group.violations).toEqual(dry.plan.violations)
    // Other changes go on: a move that breaks nothing new is not refused for an old breach.
    const back = structuredClone(moved)
    back.rooms![2].rows![1].racks!.push(back.rooms![2].rows![0].racks!.shift()!)
    expect((await api.call('PUT', LAYOUT, back)).status).toBe(200)
  })

  it('max-per 2 by room and spread by room with max skew 1, on 3 rooms', async () => {
    await ok('POST', GROUPS, {name: 'web', policy: 'max-per', level: 'room', max_per: 2})
    const webHosts = ['host-1111', 'host-1211', 'host-2111', 'host-2211', 'host-3111', 'host-3211']
    for (const [i, h] of webHosts.entries()) expect((await claim(C(10 + i), h, 'web')).status, h).toBe(200)
    const third = await claim(C(16), 'host-1112', 'web')
    expect(third.status).toBe(409)
    expect(third.body.errors[0].detail).toMatch(/at most 2 per room\): 3 members in room room-1/)

    await ok('POST', GROUPS, {name: 'cache', policy: 'spread', level: 'room', max_skew: 1})
    expect((await claim(C(20), 'host-1111', 'cache')).status).toBe(200)
    // room-1 again: 2, 0, 0 is a skew of 2.
    const skewed = await claim(C(21), 'host-1212', 'cache')
    expect(skewed.status).toBe(409)
    expect(skewed.body.errors[0].detail).toMatch(/spread over rooms, max skew 1\): skew 2 \(at most 1\): 2 in room-1, 0 in room-2, room-3/)
    expect((await claim(C(21), 'host-2111', 'cache')).status).toBe(200)
    expect((await claim(C(22), 'host-3111', 'cache')).status).toBe(200)
    expect((await claim(C(23), 'host-1212', 'cache')).status).toBe(200)
    // Forced, a breach is kept and reported.
    expect((await claim(C(24), 'host-1221', 'cache', '?allow_violations=true')).status).toBe(200)
    const cache = await ok('GET', `${GROUPS}/cache`)
    expect(cache.violations.map((v: any) => v.why)).toEqual(['skew 2 (at most 1): 3 in room-1, 1 in room-2, room-3'])
  })

  it('several members claimed together are all or nothing; affinity keeps them in one rack', async () => {
    await ok('POST', GROUPS, {name: 'pair', policy: 'affinity', level: 'rack'})
    const two = (hosts: [string, string]) =>
      api.call('POST', '/placemat/v1/claims', {
        claims: hosts.map((h, i) => ({
          consumer_uuid: C(30 + i),
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          allocations: {[hostUuid(h)]: {resources: {VCPU: 1}}},
          group: 'pair',
        })),
      })
    const apart = await two(['host-1111', 'host-1121'])
    expect(apart.status).toBe(409)
    expect(apart.body.errors[0].detail).toMatch(/members are not in one rack/)
    expect((await ok('GET', `${GROUPS}/pair`)).members).toEqual([])
    expect((await api.call('GET', `/allocations/${C(30)}`)).body.allocations).toEqual({})
    expect((await two(['host-1111', 'host-1112'])).status).toBe(200)
    expect((await ok('GET', `${GROUPS}/pair`)).members).toEqual([C(30), C(31)])
  })
})

describe('placement groups and the other writes', () => {
  const put = (consumer: string, host: string) =>
    api.call('PUT', `/allocations/${consumer}`, {
      allocations: {[hostUuid(host)]: {resources: {VCPU: 1}}},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    })

  it("Placement's own writes are never refused for a group; GET /placemat/v1/groups reports what they break", async () => {
    await ok('POST', GROUPS, {name: 'solo', policy: 'anti-affinity', level: 'rack'})
    expect((await claim(C(40), 'host-1111', 'solo')).status).toBe(200)
    expect((await claim(C(41), 'host-1121', 'solo')).status).toBe(200)
    // nova rewrites C41's allocations onto C40's rack through PUT /allocations: Placement's answer.
    const rewrite = await api.call('PUT', `/allocations/${C(41)}`, {
      allocations: {[hostUuid('host-1112')]: {resources: {VCPU: 1}}},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: 1,
      consumer_type: 'INSTANCE',
    })
    expect(rewrite.status).toBe(204)
    const [g] = (await ok('GET', GROUPS)).groups
    expect(g.violations.map((v: any) => v.why)).toEqual(['2 members in rack rack-111 (at most 1)'])
  })

  it("placemat's POST /placemat/v1/allocations (claim move) and a batch reshape refuse to break a group unless allowed", async () => {
    await ok('POST', GROUPS, {name: 'solo', policy: 'anti-affinity', level: 'rack'})
    expect((await claim(C(50), 'host-1111', 'solo')).status).toBe(200)
    expect((await claim(C(51), 'host-1121', 'solo')).status).toBe(200)
    const body = {
      [C(51)]: {
        allocations: {[hostUuid('host-1112')]: {resources: {VCPU: 1}}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: 1,
        consumer_type: 'INSTANCE',
      },
    }
    // Asked first, as a dry run asks: what would it break?
    const check = await ok('POST', `${GROUPS}/check`, {placements: {[C(51)]: [hostUuid('host-1112')]}})
    expect(check.violations.map((v: any) => v.why)).toEqual(['2 members in rack rack-111 (at most 1)'])
    expect((await ok('POST', `${GROUPS}/check`, {placements: {[C(51)]: [hostUuid('host-1211')]}})).violations).toEqual([])
    const refused = await api.call('POST', '/placemat/v1/allocations', body)
    expect(refused.status).toBe(409)
    expect(refused.body.errors[0].code).toBe('placemat.affinity_violation')
    expect(refused.body.errors[0].detail).toContain('group solo (anti-affinity by rack): 2 members in rack rack-111')
    expect(Object.keys((await ok('GET', `/allocations/${C(51)}`)).allocations)).toEqual([hostUuid('host-1121')])
    // Elsewhere it is taken, as Placement's POST /allocations would.
    body[C(51)].allocations = {[hostUuid('host-1211')]: {resources: {VCPU: 1}}}
    expect((await api.call('POST', '/placemat/v1/allocations', body)).status).toBe(204)
    // A reshape in a batch that takes C50's allocation onto C51's rack.
    const target = hostUuid('host-1212')
    const reshape = async (query = '') =>
      api.call('POST', `/placemat/v1/batch${query}`, {
        operations: [
          {
            op: 'reshape',
            microversion: '1.38',
            inventories: {
              [target]: {
                resource_provider_generation: (await ok('GET', `/resource_providers/${target}`)).generation,
                inventories: {VCPU: {total: 8}},
              },
            },
            allocations: {
              [C(50)]: {
                allocations: {[hostUuid('host-1212')]: {resources: {VCPU: 1}}},
                project_id: 'p',
                user_id: 'u',
                consumer_generation: 1,
                consumer_type: 'INSTANCE',
              },
            },
          },
        ],
      })
    const r = await reshape()
    expect(r.status, JSON.stringify(r.body)).toBe(409)
    expect(r.body.errors[0].detail).toContain('group solo (anti-affinity by rack): 2 members in rack rack-121')
    expect((await reshape('?allow_violations=true')).status).toBe(200)
    expect((await ok('GET', `${GROUPS}/solo`)).violations).toHaveLength(1)
  })

  it('GET /placemat/v1/allocation_candidates?group= keeps what a hard rule allows and orders for a soft one', async () => {
    await ok('POST', GROUPS, {name: 'hard', policy: 'max-per', level: 'room', max_per: 1})
    expect((await claim(C(60), 'host-1111', 'hard')).status).toBe(200)
    const hosts = async (query: string) => {
      const body = await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&${query}`)
      return body.allocation_requests.map((ar: any) => hostNames[H_INDEX(Object.keys(ar.allocations)[0])])
    }
    const allowed = await hosts('group=hard')
    expect(allowed).toHaveLength(16)
    expect(allowed.some((h: string) => h.startsWith('host-1'))).toBe(false)
    expect(await hosts('group=hard&limit=2')).toEqual(allowed.slice(0, 2))
    await ok('POST', GROUPS, {name: 'near', policy: 'affinity', level: 'rack', soft: true})
    expect((await put(C(61), 'host-3211')).status).toBe(204)
    await ok('POST', `${GROUPS}/near/members`, {add: [C(61)]})
    const ordered = await hosts('group=near')
    expect(ordered).toHaveLength(24)
    expect(ordered.slice(0, 2).sort()).toEqual(['host-3211', 'host-3212'])
    expect(ordered.slice(2, 4).sort()).toEqual(['host-3221', 'host-3222'])
    expect((await api.call('GET', '/placemat/v1/allocation_candidates?resources=VCPU:1&group=nope')).status).toBe(404)
    expect((await api.call('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&group=near&near=${C(61)}`)).status).toBe(400)
  })

  it('a host outside the topology takes no member of a hard group by rack; consumer= applies the groups a consumer is in; /why says what empties the candidates', async () => {
    // host-out: a host in no rack, row or room.
    await ok('POST', '/placemat/v1/batch', {
      operations: [
        {op: 'create_provider', uuid: H(99), name: 'host-out'},
        {op: 'set_inventories', uuid: H(99), inventories: {VCPU: {total: 8}}},
      ],
    })
    await ok('POST', GROUPS, {name: 'racks', policy: 'anti-affinity', level: 'rack'})
    const onOut = await api.call('POST', '/placemat/v1/claims', {
      consumer_uuid: C(70),
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      allocations: {[H(99)]: {resources: {VCPU: 1}}},
      group: 'racks',
    })
    expect(onOut.status).toBe(409)
    expect(onOut.body.errors[0].detail).toContain(
      'group racks (anti-affinity by rack): a member is on host host-out, in no rack: outside the topology, where a rule by rack cannot be kept [(outside the topology): ' +
        C(70),
    )
    // A rule by host is not concerned.
    await ok('POST', GROUPS, {name: 'hosts', policy: 'anti-affinity', level: 'host'})
    expect(
      (await api.call('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&group=hosts`)).body.allocation_requests,
    ).toHaveLength(25)
    expect(
      (await api.call('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&group=racks`)).body.allocation_requests,
    ).toHaveLength(24)

    // C71 in rack-111; a claim of C71 again (without group) is checked against its group.
    expect((await claim(C(71), 'host-1111', 'racks')).status).toBe(200)
    expect((await claim(C(72), 'host-1121', 'racks')).status).toBe(200)
    const again = await api.call('POST', '/placemat/v1/claims', {
      consumer_uuid: C(72),
      project_id: 'p',
      user_id: 'u',
      consumer_generation: 1,
      allocations: {[hostUuid('host-1112')]: {resources: {VCPU: 1}}},
    })
    expect(again.status).toBe(409)
    expect(again.body.errors[0].detail).toContain('2 members in rack rack-111')
    const inRack = `member_of=${nodeUuid('rack', 'rack-111')}`
    const candidates = async (query: string) =>
      (await ok('GET', `/placemat/v1/allocation_candidates?resources=VCPU:1&${query}`)).allocation_requests.length
    expect(await candidates(inRack)).toBe(2)
    expect(await candidates(`${inRack}&consumer=${C(72)}`)).toBe(0)
    // C71 itself may stay in its rack; a consumer in no group is not concerned.
    expect(await candidates(`${inRack}&consumer=${C(71)}`)).toBe(2)
    expect(await candidates(`${inRack}&consumer=${C(79)}`)).toBe(2)
    expect((await api.call('GET', '/placemat/v1/allocation_candidates?resources=VCPU:1&consumer=nope')).status).toBe(400)

    const why = async (query: string) => (await ok('GET', `/placemat/v1/allocation_candidates/why?${query}`)).why
    expect(await why(`resources=VCPU:1&${inRack}&consumer=${C(72)}`)).toBe(
      '2 hosts fit; the anti-affinity rule of group racks (by rack) excludes them',
    )
    expect(await why('resources=VCPU:64')).toBe('no provider has 64 VCPU free (the most free: host-1112 with 8)')
    expect(await why('resources=VCPU:1')).toBeNull()
  })
})

describe('placement groups on disk', () => {
  const newFile = tempFiles('placemat-groups-')
  it('survive a restart with their members in order', async () => {
    const outer = api // the one afterEach closes
    const file = newFile()
    const store = await Store.open(file, {migrate: true})
    const app = await buildApp({store, auth: 'noauth2'})
    const a: TestApi = {
      app,
      store,
      call: async (method, url, body) => {
        const res = await app.inject({
          method: method as any,
          url,
          headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'},
          payload: body === undefined ? undefined : JSON.stringify(body),
        })
        return {status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers}
      },
      close: async () => {
        await app.close()
        await store.close()
      },
    }
    await seed(a)
    await ok('POST', GROUPS, {name: 'g', policy: 'max-per', level: 'host', max_per: 2, soft: true, members: [C(3), C(1), C(2)]})
    await api.close()
    const again = await Store.open(file)
    const g = await again.read((s) => s.groups.get('g'))
    expect(g).toMatchObject({name: 'g', policy: 'max-per', level: 'host', maxPer: 2, soft: true, generation: 1})
    expect([...g!.members]).toEqual([C(3), C(1), C(2)])
    await again.close()
    api = outer
  })
})
