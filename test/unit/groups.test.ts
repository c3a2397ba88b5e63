/**
 * The placement group rules as pure functions over a State: what each policy counts as a
 * breach, which breaches a proposed change would add (and not the ones already there), and
 * the per-candidate judge agreeing with the general check.
 */
import {describe, expect, it} from 'vitest'
import {createGroup, type GroupSpec} from '../../src/core/group-writes.js'
import {
  OUTSIDE_TOPOLOGY,
  consumerGroups,
  groupBreaches,
  newBreaches,
  newcomerJudge,
  placementJudge,
  ruleText,
  stateLocator,
  topologyLocator,
} from '../../src/core/groups.js'
import {consumerHosts} from '../../src/core/host.js'
import {stateFromSnapshot} from '../../src/core/snapshot.js'
import type {State} from '../../src/core/state/state.js'
import {Changes} from '../../src/core/state/changes.js'
import {nodeUuid} from '../../src/core/topology.js'

const H = (i: number) => `aaaaaaaa-0000-4000-8000-${String(i).padStart(12, '0')}`
const C = (i: number) => `cccccccc-0000-4000-8000-${String(i).padStart(12, '0')}`

/**
 * Rooms m1, m2, m3; rows m1-r1, m1-r2 (in m1), m2-r1 (m2), m3-r1 (m3); one rack per row; two
 * hosts per rack: H(1..8). H(9) is in no rack. Consumers sit where `placed` says.
 */
function cloud(placed: Record<number, number[]>): State {
  const rows = [
    ['m1', 'm1-r1'],
    ['m1', 'm1-r2'],
    ['m2', 'm2-r1'],
    ['m3', 'm3-r1'],
  ]
  const topology = [
    ...['m1', 'm2', 'm3'].map((name) => ({uuid: nodeUuid('room', name), name, level: 'room' as const, parent: null})),
    ...rows.map(([room, name]) => ({uuid: nodeUuid('row', name), name, level: 'row' as const, parent: nodeUuid('room', room)})),
    ...rows.map(([, row]) => ({
      uuid: nodeUuid('rack', `k-${row}`),
      name: `k-${row}`,
      level: 'rack' as const,
      parent: nodeUuid('row', row),
    })),
  ]
  const providers = Array.from({length: 9}, (_, k) => {
    const i = k + 1
    const r = i <= 8 ? rows[Math.floor(k / 2)] : undefined
    const aggregates = r ? [nodeUuid('room', r[0]), nodeUuid('row', r[1]), nodeUuid('rack', `k-${r[1]}`)] : []
    return {
      uuid: H(i),
      name: `h${i}`,
      generation: 1,
      parent_provider_uuid: null,
      root_provider_uuid: H(i),
      inventories: {VCPU: {total: 8} as any},
      aggregates,
    }
  })
  const consumers = Object.entries(placed).map(([c, hosts]) => ({
    uuid: C(Number(c)),
    allocations: Object.fromEntries(hosts.map((h) => [H(h), {resources: {VCPU: 1}}])),
  }))
  const s = stateFromSnapshot({classes: ['VCPU'], providers, consumers, topology})
  s.changes = new Changes()
  return s
}

const group = (s: State, spec: Omit<GroupSpec, 'name'> & {name?: string}) =>
  createGroup(s, 0, {name: 'g', ...spec}, {allowViolations: true})
const whys = (s: State, name = 'g') => groupBreaches(s.groups.get(name)!, (m) => consumerHosts(s, m), stateLocator(s)).map((b) => b.why)

describe('placement group rules', () => {
  it('say what they are', () => {
    expect(ruleText({policy: 'anti-affinity', level: 'row', soft: false})).toBe('anti-affinity by row')
    expect(ruleText({policy: 'max-per', level: 'host', maxPer: 2, soft: true})).toBe('at most 2 per host (soft)')
    expect(ruleText({policy: 'spread', level: 'room', maxSkew: 1, soft: false})).toBe('spread over rooms, max skew 1')
  })

  it('anti-affinity and max-per count members per domain; a member on two hosts counts in both domains once each', () => {
    const s = cloud({1: [1], 2: [2], 3: [3], 4: [4, 5]})
    group(s, {policy: 'anti-affinity', level: 'rack', members: [C(1), C(2), C(3)]})
    expect(whys(s)).toEqual(['2 members in rack k-m1-r1 (at most 1)'])
    group(s, {name: 'per-room', policy: 'max-per', level: 'room', maxPer: 3, members: [C(1), C(2), C(3), C(4)]})
    expect(whys(s, 'per-room')).toEqual(['4 members in room m1 (at most 3)'])
    group(s, {name: 'per-host', policy: 'max-per', level: 'host', maxPer: 1, members: [C(1), C(2), C(3), C(4)]})
    expect(whys(s, 'per-host')).toEqual([])
  })

  it('affinity wants one common domain; unplaced members count nowhere', () => {
    const s = cloud({1: [1], 2: [2], 3: [3]})
    group(s, {policy: 'affinity', level: 'rack', members: [C(1), C(2), C(7)]})
    expect(whys(s)).toEqual([])
    group(s, {name: 'far', policy: 'affinity', level: 'rack', members: [C(1), C(3)]})
    expect(whys(s, 'far')).toEqual(['members are not in one rack: 1 in k-m1-r1, 1 in k-m1-r2'])
  })

  it('a member on a host outside the topology at the rule level breaks every policy, hard or soft, once per member; by host never', () => {
    // C3 on h9 (in no rack, row or room); C4 on h1 and h9.
    const s = cloud({1: [1], 2: [3], 3: [9], 4: [1, 9]})
    const outside = (host: string, level: string) =>
      `a member is on host ${host}, in no ${level}: outside the topology, where a rule by ${level} cannot be kept`
    for (const spec of [
      {policy: 'anti-affinity', level: 'row'},
      {policy: 'max-per', level: 'rack', maxPer: 3},
      {policy: 'spread', level: 'room', maxSkew: 5},
      {policy: 'affinity', level: 'room', soft: true},
    ] as const) {
      const name = `${spec.policy}-${spec.level}`
      group(s, {name, ...spec, members: [C(3)]})
      const g = s.groups.get(name)!
      const breaches = groupBreaches(g, (m) => consumerHosts(s, m), stateLocator(s))
      expect(
        breaches.map((b) => b.why),
        name,
      ).toEqual([outside('h9', spec.level)])
      expect(breaches[0].domains, name).toEqual([{domain: '', name: OUTSIDE_TOPOLOGY, members: [C(3)]}])
      expect(breaches[0].soft, name).toBe(spec.policy === 'affinity')
    }
    // Affinity counts only the members inside: C1 and C4 share rack k-m1-r1; C4's other host is outside.
    group(s, {name: 'aff', policy: 'affinity', level: 'rack', members: [C(1), C(4)]})
    expect(whys(s, 'aff')).toEqual([outside('h9', 'rack')])
    // Every host is its own domain.
    group(s, {name: 'by-host', policy: 'anti-affinity', level: 'host', members: [C(1), C(2), C(3)]})
    expect(whys(s, 'by-host')).toEqual([])
    // Placing a member outside is a new breach; a write bringing one in, or leaving one out, is not.
    group(s, {name: 'web', policy: 'anti-affinity', level: 'row', members: [C(1), C(3)]})
    expect(
      newBreaches(s, {placements: new Map([[C(1), [H(9)]]])})
        .filter((b) => b.group === 'web')
        .map((b) => b.why),
    ).toEqual([outside('h9', 'row')])
    expect(newBreaches(s, {placements: new Map([[C(3), [H(5)]]])}).filter((b) => b.group === 'web')).toEqual([])
    expect(newBreaches(s, {placements: new Map([[C(1), [H(6)]]])}).filter((b) => b.group === 'web')).toEqual([])
    // A layout change that takes C1's host out of the topology.
    const moved = topologyLocator(
      s,
      (h) => (h === H(1) ? [] : [...s.providers.get(h)!.aggregates]),
      (agg) => s.topology.get(agg),
    )
    expect(
      newBreaches(s, {locator: moved})
        .filter((b) => b.group === 'web')
        .map((b) => b.why),
    ).toEqual([outside('h1', 'row')])
  })

  it("a consumer's judge counts it where the candidate is, in every group it is a member of and the one it joins", () => {
    const s = cloud({1: [1], 2: [3], 3: [5]})
    group(s, {name: 'rows', policy: 'anti-affinity', level: 'row', members: [C(1), C(2)]})
    group(s, {name: 'rooms', policy: 'max-per', level: 'room', maxPer: 2, members: [C(2), C(3)]})
    group(s, {name: 'other', policy: 'anti-affinity', level: 'host', members: [C(3)]})
    expect(consumerGroups(s, C(2)).map((g) => g.name)).toEqual(['rooms', 'rows'])
    const judge = placementJudge(s, C(2), consumerGroups(s, C(2)))
    // C2 moving within its row and room breaks nothing; next to C1 (row m1-r1) breaks rows.
    expect(judge([H(4)])).toEqual([])
    expect(judge([H(2)]).map((b) => `${b.group}: ${b.why}`)).toEqual(['rows: 2 members in row m1-r1 (at most 1)'])
    // Outside the topology: both rules by row and by room.
    expect(judge([H(9)]).map((b) => b.group)).toEqual(['rooms', 'rows'])
    // The general check agrees, candidate by candidate.
    for (let h = 1; h <= 9; h++) {
      const general = newBreaches(s, {placements: new Map([[C(2), [H(h)]]])})
      expect(
        judge([H(h)])
          .map((b) => b.why)
          .sort(),
        `h${h}`,
      ).toEqual(general.map((b) => b.why).sort())
    }
    // Joining 'other' (C3 on h5) as well: the same host as C3 breaks it.
    const joining = placementJudge(s, C(2), consumerGroups(s, C(2), s.groups.get('other')))
    expect(joining([H(5)]).map((b) => b.group)).toEqual(['other'])
  })

  it('spread measures across every domain of the level, those with no member included', () => {
    const s = cloud({1: [1], 2: [3], 3: [5]})
    group(s, {policy: 'spread', level: 'room', maxSkew: 1, members: [C(1), C(2)]})
    // m1 has 2, m2 and m3 none.
    expect(whys(s)).toEqual(['skew 2 (at most 1): 2 in m1, 0 in m2, m3'])
    group(s, {name: 'ok', policy: 'spread', level: 'room', maxSkew: 1, members: [C(1), C(3)]})
    expect(whys(s, 'ok')).toEqual([])
  })

  it('spread counts only domains that have hosts: an empty room added breaks nothing; a room whose hosts are full counts', () => {
    // m1 holds 2 members, m2 and m3 one each (skew 1); C5..C12 fill h9 (8 VCPU, outside the topology).
    const fillers = Object.fromEntries([5, 6, 7, 8, 9, 10, 11, 12].map((c) => [c, [9]]))
    const s = cloud({1: [1], 2: [3], 3: [5], 4: [7], ...fillers})
    group(s, {policy: 'spread', level: 'room', maxSkew: 1, members: [C(1), C(2), C(3), C(4)]})
    expect(whys(s)).toEqual([])
    // A layout adding room m4, with `hosts` in it.
    const m4 = {uuid: nodeUuid('room', 'm4'), name: 'm4', level: 'room' as const, parent: null, createdAt: 0, updatedAt: 0}
    const nodes = new Map([...s.topology, [m4.uuid, m4]])
    const withM4 = (hosts: string[]) =>
      topologyLocator(
        s,
        (h) => (hosts.includes(h) ? [m4.uuid] : [...s.providers.get(h)!.aggregates]),
        (agg) => nodes.get(agg),
        nodes.values(),
      )
    // No host there: it can hold no member, so it is not counted (as Kubernetes' maxSkew).
    expect(newBreaches(s, {locator: withM4([])})).toEqual([])
    expect(groupBreaches(s.groups.get('g')!, (m) => consumerHosts(s, m), withM4([]))).toEqual([])
    // h9 there, with no room left on it: a room with a host counts, full or not.
    expect(newBreaches(s, {locator: withM4([H(9)])}).map((b) => b.why)).toEqual(['skew 2 (at most 1): 2 in m1, 0 in m4'])
  })

  it('a spread by host over 200,000 hosts: counted in a loop, a few of the emptiest named', () => {
    const n = 200_000
    const providers = Array.from({length: n}, (_, k) => ({
      uuid: H(k + 1),
      name: `h${k + 1}`,
      generation: 1,
      inventories: {VCPU: {total: 8} as any},
    }))
    const s = stateFromSnapshot({
      classes: ['VCPU'],
      providers,
      consumers: [1, 2].map((i) => ({uuid: C(i), allocations: {[H(1)]: {resources: {VCPU: 1}}}})),
    })
    s.changes = new Changes()
    group(s, {policy: 'spread', level: 'host', maxSkew: 1, members: [C(1), C(2)]})
    expect(whys(s)).toEqual([`skew 2 (at most 1): 2 in h1, 0 in h2, h3, h4, h5, h6 and ${n - 6} more`])
  })

  it('a change is refused for the breaches it adds, not for those already there', () => {
    const s = cloud({1: [1], 2: [3], 3: [5], 4: [2]})
    group(s, {policy: 'anti-affinity', level: 'row', members: [C(1), C(2), C(3)]})
    // Moving C3 next to C1 adds a breach; moving it within its row does not.
    expect(newBreaches(s, {placements: new Map([[C(3), [H(2)]]])}).map((b) => b.why)).toEqual(['2 members in row m1-r1 (at most 1)'])
    expect(newBreaches(s, {placements: new Map([[C(3), [H(6)]]])})).toEqual([])
    // A consumer outside every group is never looked at; joining makes it count.
    expect(newBreaches(s, {placements: new Map([[C(4), [H(1)]]])})).toEqual([])
    expect(newBreaches(s, {joins: new Map([['g', [C(4)]]])})).toHaveLength(1)
    // Hosts moved: rack k-m1-r2 (C2's) into row m1-r1 (C1's).
    const moved = topologyLocator(
      s,
      (h) =>
        h === H(3) || h === H(4)
          ? [nodeUuid('room', 'm1'), nodeUuid('row', 'm1-r1'), nodeUuid('rack', 'k-m1-r2')]
          : [...s.providers.get(h)!.aggregates],
      (agg) => s.topology.get(agg),
    )
    expect(newBreaches(s, {locator: moved}).map((b) => b.domains)).toEqual([
      [{domain: nodeUuid('row', 'm1-r1'), name: 'm1-r1', members: [C(1), C(2)].sort()}],
    ])
    // Already broken that way, the same move adds nothing new; a soft group is never refused.
    const t = cloud({1: [1], 2: [2]})
    group(t, {policy: 'anti-affinity', level: 'row', members: [C(1), C(2)]})
    expect(whys(t)).toHaveLength(1)
    expect(newBreaches(t, {locator: stateLocator(t)})).toEqual([])
    group(t, {name: 'soft', policy: 'anti-affinity', level: 'host', soft: true, members: [C(1)]})
    expect(newBreaches(t, {placements: new Map([[C(1), [H(2)]]]), joins: new Map([['soft', [C(2)]]])})).toEqual([])
  })

  it("a newcomer's judge agrees with the general check, candidate by candidate", () => {
    const s = cloud({1: [1], 2: [3], 3: [5]})
    for (const spec of [
      {policy: 'anti-affinity', level: 'row'},
      {policy: 'max-per', level: 'room', maxPer: 2},
      {policy: 'spread', level: 'room', maxSkew: 1},
      {policy: 'affinity', level: 'room'},
    ] as const) {
      const name = `${spec.policy}-${spec.level}`
      group(s, {name, ...spec, members: [C(1), C(2), C(3)]})
      const judge = newcomerJudge(s, s.groups.get(name)!)
      for (let h = 1; h <= 9; h++) {
        const general = newBreaches(s, {placements: new Map([[C(99), [H(h)]]]), joins: new Map([[name, [C(99)]]])}).filter(
          (b) => b.group === name,
        )
        expect(
          judge([H(h)]).map((b) => b.why),
          `${name} on h${h}`,
        ).toEqual(general.map((b) => b.why))
      }
    }
  })
})
