/**
 * The drain planner (core/drain.ts): where each consumer of a host goes, or why it cannot, on
 * States made in memory. Two racks of two hosts (8 VCPU each); h1 is drained.
 */
import {describe, expect, it} from 'vitest'
import {planDrain, planMove, hostConsumers, isMove} from '../../src/core/drain.js'
import type {Group, GroupLevel, GroupPolicy} from '../../src/core/groups.js'
import {DISABLED_TRAIT} from '../../src/core/host.js'
import {stateFromSnapshot} from '../../src/core/snapshot.js'
import {STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS} from '../../src/core/standard.js'
import type {State} from '../../src/core/state/state.js'
import type {ConsumerRecord, ProviderRecord} from '../../src/core/wire.js'

const U = (name: string) => {
  const hex = [...name]
    .map((ch) => ch.charCodeAt(0).toString(16).padStart(2, '0'))
    .join('')
    .padEnd(12, '0')
    .slice(0, 12)
  return `00000000-0000-4000-8000-${hex}`
}
const RACK_A = 'aaaaaaaa-0000-4000-8000-000000000001'
const RACK_B = 'aaaaaaaa-0000-4000-8000-000000000002'
const ROW = 'aaaaaaaa-0000-4000-8000-000000000003'
const STORAGE_AGG = 'bbbbbbbb-0000-4000-8000-000000000001'

type P = Partial<ProviderRecord> & {name: string}
const host = (name: string, rack: string, extra: Partial<P> = {}): P => ({
  name,
  inventories: {VCPU: {total: 8, reserved: 0, min_unit: 1, max_unit: 8, step_size: 1, allocation_ratio: 1}},
  aggregates: [rack, ROW],
  ...extra,
})

interface Cloud {
  providers: P[]
  /** consumer name -> provider name -> amounts */
  consumers: Record<string, Record<string, Record<string, number>>>
  groups?: Array<{name: string; policy: GroupPolicy; level: GroupLevel; soft?: boolean; maxSkew?: number; members: string[]}>
}

function cloud(c: Cloud): State {
  const providers = c.providers.map((p) => {
    const parent = (p as {parent?: string}).parent
    return {
      uuid: U(p.name),
      name: p.name,
      generation: 1,
      parent_provider_uuid: parent ? U(parent) : null,
      inventories: p.inventories ?? {},
      traits: p.traits ?? [],
      aggregates: p.aggregates ?? [],
    }
  })
  const consumers: ConsumerRecord[] = Object.entries(c.consumers).map(([name, allocs]) => ({
    uuid: U(name),
    project_id: 'proj',
    user_id: 'user',
    consumer_type: 'INSTANCE',
    consumer_generation: 3,
    allocations: Object.fromEntries(Object.entries(allocs).map(([rp, resources]) => [U(rp), {resources}])),
  }))
  const s = stateFromSnapshot({
    classes: [...STANDARD_RESOURCE_CLASSES],
    traits: [...STANDARD_TRAITS],
    providers,
    consumers,
    topology: [
      {uuid: ROW, name: 'row-1', level: 'row', parent: null},
      {uuid: RACK_A, name: 'rack-a', level: 'rack', parent: ROW},
      {uuid: RACK_B, name: 'rack-b', level: 'rack', parent: ROW},
    ],
  })
  for (const g of c.groups ?? []) {
    const group: Group = {
      name: g.name,
      policy: g.policy,
      level: g.level,
      soft: g.soft ?? false,
      members: new Set(g.members.map(U)),
      generation: 1,
      createdAt: 0,
      updatedAt: 0,
    }
    if (g.maxSkew !== undefined) group.maxSkew = g.maxSkew
    s.groups.set(g.name, group)
  }
  return s
}

const four = (extra: Partial<Record<'h1' | 'h2' | 'h3' | 'h4', Partial<P>>> = {}): P[] => [
  host('h1', RACK_A, extra.h1),
  host('h2', RACK_A, extra.h2),
  host('h3', RACK_B, extra.h3),
  host('h4', RACK_B, extra.h4),
]
const disabled = {traits: [DISABLED_TRAIT]}

const name = (s: State, uuid: string) => s.providers.get(uuid)!.name
/** consumer name -> host name it goes to, or 'stuck'. */
function where(s: State, drained = 'h1') {
  const plan = planDrain(s, 0, U(drained))
  const byUuid = (u: string) => [...u.slice(-12)].join('')
  const label = (u: string) => {
    const hex = byUuid(u).replace(/(00)+$/, '')
    return Buffer.from(hex, 'hex').toString()
  }
  return {
    plan,
    to: Object.fromEntries([
      ...plan.moves.map((m) => [label(m.consumer), name(s, m.host)]),
      ...plan.stuck.map((x) => [label(x.consumer), 'stuck']),
    ]),
  }
}

describe('drain plan', () => {
  it('moves plain consumers to another enabled host, the nearest first, keeping project, user, type and generation', () => {
    const s = cloud({providers: four({h2: disabled}), consumers: {c1: {h1: {VCPU: 2}}, c2: {h1: {VCPU: 1}}}})
    const {plan, to} = where(s)
    // h2 (same rack) is disabled: rack-b's first host.
    expect(to).toEqual({c1: 'h3', c2: 'h3'})
    expect(plan.moves[0]).toMatchObject({project: 'proj', user: 'user', type: 'INSTANCE', generation: 3, groups: [], soft: []})
    expect(plan.moves[0].from).toEqual({[U('h1')]: {VCPU: 2}})
    expect(plan.moves[0].to).toEqual({[U('h3')]: {VCPU: 2}})
    // The State holds the moves as planned: the host is empty.
    expect(hostConsumers(s, U('h1'))).toEqual([])
    expect(s.providers.get(U('h3'))!.usages.get('VCPU')).toBe(3)
  })

  it('prefers the same rack, and plans each consumer against the moves before it', () => {
    const s = cloud({providers: four(), consumers: {c1: {h1: {VCPU: 6}}, c2: {h1: {VCPU: 2}}, c3: {h1: {VCPU: 1}}, x: {h2: {VCPU: 1}}}})
    // h2 has 7 free: c1 takes 6 of it, c3 the last; c2 (planned before c3) no longer fits there.
    expect(where(s).to).toEqual({c1: 'h2', c2: 'h3', c3: 'h2'})
  })

  it('never plans a consumer back onto the drained host, even when it is still enabled', () => {
    const s = cloud({providers: four({h2: disabled, h3: disabled, h4: disabled}), consumers: {c1: {h1: {VCPU: 1}}}})
    const {plan, to} = where(s)
    expect(to).toEqual({c1: 'stuck'})
    expect(plan.stuck[0].why).toBe('no other enabled host has room for VCPU=1 on one provider')
    // Nothing of a stuck consumer changes.
    expect(s.consumers.get(U('c1'))!.allocations.get(U('h1'))!.get('VCPU')).toBe(1)
  })

  it('keeps the shape: what is held on each child is found again on one child each, in one other tree', () => {
    const child = (n: string, parent: string, inv: Record<string, number>): P =>
      ({
        name: n,
        parent,
        inventories: Object.fromEntries(
          Object.entries(inv).map(([rc, total]) => [
            rc,
            {total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1},
          ]),
        ),
      }) as P
    const providers: P[] = [
      {name: 'h1', aggregates: [RACK_A]},
      child('h1n0', 'h1', {VCPU: 8, MEMORY_MB: 4096}),
      child('h1pf', 'h1', {SRIOV_NET_VF: 4}),
      {name: 'h2', aggregates: [RACK_A]},
      child('h2n0', 'h2', {VCPU: 8}), // no memory here
      child('h2pf', 'h2', {SRIOV_NET_VF: 4}),
      {name: 'h3', aggregates: [RACK_B]},
      child('h3n0', 'h3', {VCPU: 8, MEMORY_MB: 4096}),
      child('h3pf', 'h3', {SRIOV_NET_VF: 4}),
    ]
    const s = cloud({providers, consumers: {c1: {h1n0: {VCPU: 2, MEMORY_MB: 1024}, h1pf: {SRIOV_NET_VF: 1}}}})
    const {plan} = where(s)
    expect(plan.moves).toHaveLength(1)
    expect(plan.moves[0].to).toEqual({[U('h3n0')]: {VCPU: 2, MEMORY_MB: 1024}, [U('h3pf')]: {SRIOV_NET_VF: 1}})
  })

  it('moves what no class splits as one group too: a NUMA node and its root onto a flat host, a flat host onto a NUMA node and its root', () => {
    const inv = (total: number) => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1})
    const providers: P[] = [
      {name: 'h1', aggregates: [RACK_A], inventories: {DISK_GB: inv(100)}},
      {name: 'h1n0', parent: 'h1', inventories: {VCPU: inv(8), MEMORY_MB: inv(4096)}} as P,
      {name: 'h2', aggregates: [RACK_B], inventories: {VCPU: inv(8), MEMORY_MB: inv(4096), DISK_GB: inv(100)}},
    ]
    const numa = cloud({providers, consumers: {c1: {h1n0: {VCPU: 2, MEMORY_MB: 1024}, h1: {DISK_GB: 10}}}})
    const {plan} = where(numa)
    expect(plan.moves[0].to).toEqual({[U('h2')]: {VCPU: 2, MEMORY_MB: 1024, DISK_GB: 10}})

    const flat = cloud({providers, consumers: {c1: {h2: {VCPU: 2, MEMORY_MB: 1024, DISK_GB: 10}}}})
    const back = planDrain(flat, 0, U('h2'))
    expect(back.moves[0].to).toEqual({[U('h1n0')]: {VCPU: 2, MEMORY_MB: 1024}, [U('h1')]: {DISK_GB: 10}})
  })

  it('keeps what is held outside the tree, and goes only where that shared provider reaches', () => {
    const storage: P = {
      name: 'st',
      inventories: {DISK_GB: {total: 100, reserved: 0, min_unit: 1, max_unit: 100, step_size: 1, allocation_ratio: 1}},
      traits: ['MISC_SHARES_VIA_AGGREGATE'],
      aggregates: [STORAGE_AGG],
    }
    const inStorage = {aggregates: [RACK_B, ROW, STORAGE_AGG]}
    const s = cloud({
      providers: [...four({h1: {aggregates: [RACK_A, ROW, STORAGE_AGG]}, h4: inStorage}), storage],
      consumers: {c1: {h1: {VCPU: 2}, st: {DISK_GB: 10}}},
    })
    const {plan, to} = where(s)
    expect(to).toEqual({c1: 'h4'})
    expect(plan.moves[0].allocations).toEqual({[U('st')]: {DISK_GB: 10}, [U('h4')]: {VCPU: 2}})
    expect(s.providers.get(U('st'))!.usages.get('DISK_GB')).toBe(10)

    const far = cloud({
      providers: [...four({h1: {aggregates: [RACK_A, ROW, STORAGE_AGG]}}), storage],
      consumers: {c1: {h1: {VCPU: 2}, st: {DISK_GB: 10}}},
    })
    const stuck = where(far).plan.stuck
    expect(stuck[0].why).toBe('no enabled host with room shares an aggregate with st, where it keeps DISK_GB=10')
  })

  it('keeps a hard anti-affinity: never beside another member, and says so when every host with room is', () => {
    const groups = [{name: 'db', policy: 'anti-affinity' as const, level: 'host' as const, members: ['a', 'b']}]
    const s = cloud({providers: four(), consumers: {a: {h1: {VCPU: 1}}, b: {h2: {VCPU: 1}}, plain: {h1: {VCPU: 1}}}, groups})
    const {plan, to} = where(s)
    expect(to).toEqual({a: 'h3', plain: 'h2'})
    // Members of hard groups are planned first.
    expect(plan.moves.map((m) => m.groups)).toEqual([['db'], []])

    const full = cloud({
      providers: four(),
      consumers: {a: {h1: {VCPU: 1}}, b: {h2: {VCPU: 1}}, c: {h3: {VCPU: 1}}, d: {h4: {VCPU: 1}}},
      groups: [{name: 'db', policy: 'anti-affinity', level: 'host', members: ['a', 'b', 'c', 'd']}],
    })
    const stuck = where(full).plan.stuck
    expect(stuck).toHaveLength(1)
    expect(stuck[0].why).toMatch(/^every host with room would break group db \(anti-affinity by host\): 2 members in host h2 \(at most 1\)/)
  })

  it('keeps a hard spread across racks, moving within the rack, or not at all', () => {
    const groups = [{name: 'web', policy: 'spread' as const, level: 'rack' as const, maxSkew: 1, members: ['w1', 'w2', 'w3']}]
    const consumers = {w1: {h1: {VCPU: 1}}, w2: {h3: {VCPU: 1}}, w3: {h4: {VCPU: 1}}}
    expect(where(cloud({providers: four(), consumers, groups})).to).toEqual({w1: 'h2'})
    const {plan} = where(cloud({providers: four({h2: disabled}), consumers, groups}))
    expect(plan.stuck[0].why).toMatch(/would break group web \(spread over racks, max skew 1\): skew 3/)
  })

  it('prefers a place that keeps a soft rule over a nearer one that breaks it', () => {
    const groups = [{name: 'soft', policy: 'anti-affinity' as const, level: 'host' as const, soft: true, members: ['a', 'b']}]
    const {plan, to} = where(cloud({providers: four(), consumers: {a: {h1: {VCPU: 1}}, b: {h2: {VCPU: 1}}}, groups}))
    expect(to).toEqual({a: 'h3'})
    expect(plan.moves[0].soft).toEqual([])
    // With no other place, it breaks the soft rule and says so.
    const only = where(cloud({providers: four({h3: disabled, h4: disabled}), consumers: {a: {h1: {VCPU: 1}}, b: {h2: {VCPU: 1}}}, groups}))
    expect(only.to).toEqual({a: 'h2'})
    expect(only.plan.moves[0].soft.map((b) => b.group)).toEqual(['soft'])
  })

  it('plans one consumer alone against the State as it is, changing nothing', () => {
    const s = cloud({providers: four(), consumers: {c1: {h1: {VCPU: 2}}}})
    const m = planMove(s, U('h1'), U('c1'))
    expect(isMove(m) && name(s, m.host)).toBe('h2')
    expect(s.consumers.get(U('c1'))!.allocations.has(U('h1'))).toBe(true)
    expect(() => planMove(s, U('h2'), U('c1'))).toThrow(/holds nothing on host h2/)
    expect(() => planDrain(s, 0, U('nope'))).toThrow(/No resource provider/)
  })
})
