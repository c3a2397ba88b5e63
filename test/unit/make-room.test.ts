/**
 * make-room (core/make-room/plan.ts) on clouds made by hand: what a plan says (its moves as the
 * writes that make them, in the order they run, the counts before and after, how it is known to be
 * the fewest), why an impossible goal is impossible (the class or the rule that binds), and that
 * the cloud it plans on is left as it was.
 */
import {describe, expect, it} from 'vitest'
import type {Group} from '../../src/core/groups.js'
import {flavorRequest} from '../../src/core/headroom/flavors.js'
import {planDrainDomain, planFreeHosts, planMakeRoom} from '../../src/core/make-room/plan.js'
import {stateFromSnapshot} from '../../src/core/snapshot.js'
import type {State} from '../../src/core/state/state.js'
import {nodeUuid} from '../../src/core/topology.js'
import {inv} from '../helpers/records.js'

const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const C = (n: number) => `cccccccc-0000-4000-8000-${String(n).padStart(12, '0')}`
const SHARES = 'MISC_SHARES_VIA_AGGREGATE'
const DISABLED = 'COMPUTE_STATUS_DISABLED'
const POOL_AGG = 'bbbbbbbb-0000-4000-8000-000000000001'

interface HostSpec {
  rack: string
  vcpus: number
  disabled?: boolean
  pool?: boolean
}

/** Flat hosts of VCPU (and 100 GB of disk), by rack; consumers as {host index: VCPU}; a pool of disk some reach. */
function cloud(hosts: HostSpec[], consumers: Array<{on: number; vcpu: number; pool?: number}>, groups: Group[] = []): State {
  const racks = [...new Set(hosts.map((h) => h.rack))]
  const s = stateFromSnapshot(
    {
      classes: ['VCPU', 'DISK_GB'],
      traits: [SHARES, DISABLED],
      topology: [
        {uuid: nodeUuid('row', 'row1'), name: 'row1', level: 'row', parent: null},
        ...racks.map((r) => ({uuid: nodeUuid('rack', r), name: r, level: 'rack' as const, parent: nodeUuid('row', 'row1')})),
      ],
      providers: [
        ...hosts.map((h, i) => ({
          uuid: U(i + 1),
          name: `h${i + 1}`,
          generation: 1,
          inventories: {VCPU: inv(h.vcpus), DISK_GB: inv(100)},
          traits: h.disabled ? [DISABLED] : [],
          aggregates: [nodeUuid('rack', h.rack), nodeUuid('row', 'row1'), ...(h.pool ? [POOL_AGG] : [])],
        })),
        {uuid: U(99), name: 'ceph', generation: 1, inventories: {DISK_GB: inv(1000)}, traits: [SHARES], aggregates: [POOL_AGG]},
      ],
      consumers: consumers.map((c, k) => ({
        uuid: C(k + 1),
        project_id: 'p',
        user_id: 'u',
        consumer_generation: 2,
        allocations: {
          [U(c.on + 1)]: {resources: {VCPU: c.vcpu}},
          ...(c.pool ? {[U(99)]: {resources: {DISK_GB: c.pool}}} : {}),
        },
      })),
    },
    0,
  )
  for (const g of groups) s.groups.set(g.name, g)
  return s
}

const group = (name: string, policy: Group['policy'], level: Group['level'], members: number[], extra: Partial<Group> = {}): Group => ({
  name,
  policy,
  level,
  soft: false,
  members: new Set(members.map(C)),
  generation: 1,
  createdAt: 0,
  updatedAt: 0,
  ...extra,
})

const four = flavorRequest({name: 'c4', vcpus: 4, ram: 0, disk: 0, ephemeral: 0, swap: 0, properties: {}})
const rackA = {level: 'rack' as const, name: 'a'}

/** What a State holds that a plan must leave as it was. */
const fingerprint = (s: State) =>
  JSON.stringify({
    usage: [...s.providers.values()].map((p) => [p.uuid, p.generation, [...p.usages]]),
    consumers: [...s.consumers.values()].map((c) => [c.uuid, c.generation, [...c.allocations].map(([rp, a]) => [rp, [...a]])]),
    version: s.version,
  })

describe('make-room: K more of a flavor in a domain', () => {
  it('needs no move when K fit already', () => {
    const s = cloud([{rack: 'a', vcpus: 8}], [{on: 0, vcpu: 2}])
    const plan = planMakeRoom(s, {flavor: four, count: 1, domain: rackA})
    expect(plan).toMatchObject({possible: true, moves: [], fitBefore: 1, fitAfter: 1, target: 1, proof: 'bound', lowerBound: 0})
  })

  it('moves the fewest consumers off the domain, each move the write that makes it, and says how it knows it is the fewest', () => {
    // Rack a: two hosts of 8 VCPU, each with 3 + 3 used (room for none of 4); rack b: an empty host of 8.
    const s = cloud(
      [
        {rack: 'a', vcpus: 8},
        {rack: 'a', vcpus: 8},
        {rack: 'b', vcpus: 8},
      ],
      [
        {on: 0, vcpu: 3},
        {on: 0, vcpu: 3},
        {on: 1, vcpu: 3},
        {on: 1, vcpu: 3},
      ],
    )
    const before = fingerprint(s)
    const plan = planMakeRoom(s, {flavor: four, count: 1, domain: rackA})
    expect(plan).toMatchObject({
      possible: true,
      fitBefore: 0,
      fitAfter: 1,
      target: 1,
      method: 'heuristic',
      proof: 'bound',
      lowerBound: 1,
      search: null,
    })
    expect(plan.moves).toHaveLength(1)
    const [m] = plan.moves
    expect(m).toMatchObject({
      fromName: 'h1',
      toName: 'h3',
      host: U(3),
      fromHost: U(1),
      project: 'p',
      user: 'u',
      generation: 2,
      groups: [],
      soft: [],
    })
    expect(m.from).toEqual({[U(1)]: {VCPU: 3}})
    expect(m.to).toEqual({[U(3)]: {VCPU: 3}})
    expect(m.allocations).toEqual({[U(3)]: {VCPU: 3}})
    // Planned on numbers and replayed on a copy: the cloud is as it was.
    expect(fingerprint(s)).toBe(before)
  })

  it('orders the moves so that each is valid when it runs: room made on a host before a consumer goes there', () => {
    // h1 (rack a) holds 5 of 8: one consumer of 5 must leave for the 4 to fit. Only h3 (rack b) could
    // take 5, once its consumer of 4 has gone to h4 (room for 4 only).
    const s = cloud(
      [
        {rack: 'a', vcpus: 8},
        {rack: 'b', vcpus: 8},
        {rack: 'b', vcpus: 8},
        {rack: 'c', vcpus: 4},
      ],
      [
        {on: 0, vcpu: 5},
        {on: 1, vcpu: 8},
        {on: 2, vcpu: 4},
      ],
    )
    const plan = planMakeRoom(s, {flavor: four, count: 1, domain: {level: 'host', name: 'h1'}})
    expect(plan.possible).toBe(true)
    expect(plan.moves.map((m) => `${m.consumer} ${m.fromName}->${m.toName}`)).toEqual([`${C(3)} h3->h4`, `${C(1)} h1->h3`])
    expect(plan.lowerBound).toBe(2)
  })

  it('never moves a consumer onto a disabled host, and keeps what it holds on a pool (its new host must reach it)', () => {
    const s = cloud(
      [
        {rack: 'a', vcpus: 4, pool: true},
        {rack: 'b', vcpus: 8, disabled: true, pool: true},
        {rack: 'b', vcpus: 8},
        {rack: 'c', vcpus: 8, pool: true},
      ],
      [{on: 0, vcpu: 2, pool: 20}],
    )
    const plan = planMakeRoom(s, {flavor: four, count: 1, domain: rackA})
    expect(plan.moves.map((m) => m.toName)).toEqual(['h4'])
    expect(plan.moves[0].allocations).toEqual({[U(99)]: {DISK_GB: 20}, [U(4)]: {VCPU: 2}})
  })

  it('says which class binds when K can never fit, even with every consumer gone', () => {
    const s = cloud(
      [
        {rack: 'a', vcpus: 6},
        {rack: 'b', vcpus: 64},
      ],
      [{on: 0, vcpu: 2}],
    )
    const plan = planMakeRoom(s, {flavor: four, count: 2, domain: rackA})
    expect(plan).toMatchObject({
      possible: false,
      moves: [],
      fitBefore: 1,
      fitAfter: 1,
      method: 'exact',
      proof: 'bound',
      lowerBound: Infinity,
    })
    expect(plan.why).toBe('even with every consumer moved off rack a, 1 more of c4 fit there, not 2: VCPU binds')
  })

  it('says which class binds when K take more than every host has free together', () => {
    const s = cloud(
      [
        {rack: 'a', vcpus: 8},
        {rack: 'b', vcpus: 8},
      ],
      [
        {on: 0, vcpu: 6},
        {on: 1, vcpu: 7},
      ],
    )
    const plan = planMakeRoom(s, {flavor: four, count: 1, domain: rackA})
    expect(plan.why).toBe('1 of c4 take 4 VCPU, more than the 3 free on every enabled host and pool together: VCPU binds')
  })

  it("says which rule binds when the only consumer that could make room must stay for a group's rule", () => {
    // c1 on h1 must leave; h2 and h3 have room but each holds a member of c1's anti-affinity group by host.
    const s = cloud(
      [
        {rack: 'a', vcpus: 6},
        {rack: 'b', vcpus: 8},
        {rack: 'b', vcpus: 8},
      ],
      [
        {on: 0, vcpu: 3},
        {on: 1, vcpu: 1},
        {on: 2, vcpu: 1},
      ],
      [group('db', 'anti-affinity', 'host', [1, 2, 3])],
    )
    const plan = planMakeRoom(s, {flavor: four, count: 1, domain: rackA})
    expect(plan).toMatchObject({possible: false, method: 'exact', proof: 'search'})
    expect(plan.why).toMatch(
      /^consumer cccccccc-0000-4000-8000-000000000001 on h1: every host with room would break group db \(anti-affinity by host\)/,
    )
  })

  it('stops at maxMoves, saying how many are needed', () => {
    const s = cloud(
      [
        {rack: 'a', vcpus: 8},
        {rack: 'b', vcpus: 16},
      ],
      [
        {on: 0, vcpu: 3},
        {on: 0, vcpu: 3},
      ],
    )
    const plan = planMakeRoom(s, {flavor: four, count: 2, domain: rackA, maxMoves: 1})
    expect(plan).toMatchObject({possible: false, lowerBound: 2, why: 'at least 2 moves are needed, more than the 1 allowed'})
  })

  it('refuses a domain with no host, and a count that is not a whole number', () => {
    const s = cloud([{rack: 'a', vcpus: 8}], [])
    expect(() => planMakeRoom(s, {flavor: four, count: 1, domain: {level: 'rack', name: 'nope'}})).toThrow(/No rack named nope/)
    expect(() => planMakeRoom(s, {flavor: four, count: 1.5})).toThrow(/whole number/)
  })
})

describe('make-room: hosts freed, and a domain drained', () => {
  const hosts: HostSpec[] = [
    {rack: 'a', vcpus: 8},
    {rack: 'a', vcpus: 8},
    {rack: 'a', vcpus: 8},
    {rack: 'b', vcpus: 16},
  ]

  it('needs no move when N hosts are empty already', () => {
    const s = cloud(hosts, [{on: 0, vcpu: 1}])
    expect(planFreeHosts(s, {count: 0, domain: rackA})).toMatchObject({possible: true, moves: [], fitBefore: 2, fitAfter: 2})
    expect(planFreeHosts(s, {count: 2, domain: rackA})).toMatchObject({possible: true, moves: [], fitBefore: 2, fitAfter: 2})
  })

  it('empties the emptiest hosts first, those empty already counting', () => {
    const s = cloud(hosts, [
      {on: 0, vcpu: 1},
      {on: 0, vcpu: 1},
      {on: 1, vcpu: 1},
    ])
    const plan = planFreeHosts(s, {count: 2, domain: rackA})
    // h3 is empty; h2 (one consumer) is emptier than h1 (two).
    expect(plan).toMatchObject({possible: true, fitBefore: 1, fitAfter: 2, target: 2, lowerBound: 1, proof: 'bound'})
    expect(plan.moves.map((m) => m.fromName)).toEqual(['h2'])
  })

  it('drains a rack, each consumer off it once, or says which class binds', () => {
    const s = cloud(hosts, [
      {on: 0, vcpu: 4},
      {on: 1, vcpu: 4},
      {on: 2, vcpu: 4},
    ])
    const plan = planDrainDomain(s, rackA)
    expect(plan).toMatchObject({possible: true, fitBefore: 3, fitAfter: 0, target: 0, lowerBound: 3, proof: 'bound'})
    expect(new Set(plan.moves.map((m) => m.toName))).toEqual(new Set(['h4']))

    const full = cloud(hosts, [
      {on: 0, vcpu: 8},
      {on: 1, vcpu: 8},
      {on: 2, vcpu: 8},
    ])
    const none = planDrainDomain(full, rackA)
    expect(none).toMatchObject({possible: false, proof: 'bound', lowerBound: Infinity})
    expect(none.why).toBe(
      'the consumers of rack a hold 24 VCPU, more than the 16 free on the other enabled hosts and the pools: VCPU binds',
    )
  })
})
