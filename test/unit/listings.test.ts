/**
 * Consumers as a listing, one consumer and one host in full, and the names apply files give
 * aggregates: the core's decisions on small States.
 */
import {describe, expect, it} from 'vitest'
import {aggregateNameEdit, editAggregateNames, namedAggregates} from '../../src/core/aggregate-names.js'
import {planApply} from '../../src/core/apply-plan/plan.js'
import {ApplyRefused, type ApplyFile, type DeclaredProvider} from '../../src/core/apply-plan/types.js'
import {checkConsumerFilter, consumerListing, consumerView} from '../../src/core/consumer-list.js'
import {PlacementError} from '../../src/core/errors.js'
import type {Group} from '../../src/core/groups.js'
import {describeHost} from '../../src/core/host-view.js'
import type {State} from '../../src/core/state/state.js'
import {Changes} from '../../src/core/state/changes.js'
import {nodeUuid} from '../../src/core/topology.js'
import {aggregateUuid} from '../../src/core/uuids.js'
import {U, cloud} from './fixtures.js'

const C = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const RACK = nodeUuid('rack', 'k1')
const ROW = nodeUuid('row', 'r1')

/** h1 (U1) with a NIC (U2), in rack k1 of row r1; h2 (U3) nowhere. c1 on h1 and its NIC, c2 on h2, c3 on both hosts. */
function world(): State {
  const s = cloud(
    [
      {name: 'h1', inventories: {VCPU: 8}, traits: ['HW_CPU_X86_AVX2'], aggregates: [RACK, ROW, aggregateUuid('ceph')]},
      {name: 'h1-nic', parent: 'h1', inventories: {VGPU: 4}},
      {name: 'h2', inventories: {VCPU: 8}, traits: ['COMPUTE_STATUS_DISABLED']},
    ],
    {
      consumers: [
        {
          uuid: C(1),
          project_id: 'p1',
          user_id: 'u1',
          consumer_type: 'INSTANCE',
          consumer_generation: 3,
          allocations: {[U(1)]: {resources: {VCPU: 2}}, [U(2)]: {resources: {VGPU: 1}}},
        },
        {
          uuid: C(2),
          project_id: 'p2',
          user_id: 'u1',
          consumer_type: null,
          consumer_generation: 1,
          allocations: {[U(3)]: {resources: {VCPU: 1}}},
        },
        {
          uuid: C(3),
          project_id: 'p1',
          user_id: 'u2',
          consumer_type: 'INSTANCE',
          consumer_generation: 1,
          allocations: {[U(1)]: {resources: {VCPU: 1}}, [U(3)]: {resources: {VCPU: 1}}},
        },
      ],
      topology: [
        {uuid: ROW, name: 'r1', level: 'row', parent: null},
        {uuid: RACK, name: 'k1', level: 'rack', parent: ROW},
      ],
      aggregateNames: [{uuid: aggregateUuid('ceph'), name: 'ceph'}],
    },
  )
  const group = (name: string, members: string[]): Group => ({
    name,
    policy: 'anti-affinity',
    level: 'host',
    soft: false,
    members: new Set(members),
    generation: 1,
    createdAt: 0,
    updatedAt: 0,
  })
  s.groups.set('web', group('web', [C(1), C(2)]))
  s.groups.set('db', group('db', [C(1)]))
  return s
}

describe('consumerListing', () => {
  it('lists every consumer with its hosts and groups; filters by tree, project and group add up', () => {
    const s = world()
    const all = consumerListing(s)
    expect(all.map((c) => [c.uuid, c.hosts, c.groups])).toEqual([
      [C(1), ['h1'], ['db', 'web']],
      [C(2), ['h2'], ['web']],
      [C(3), ['h1', 'h2'], []],
    ])
    expect(all[0]).toMatchObject({project_id: 'p1', user_id: 'u1', consumer_type: 'INSTANCE', consumer_generation: 3})
    const uuids = (f: Parameters<typeof consumerListing>[1]) => consumerListing(s, f).map((c) => c.uuid)
    // A host's tree holds what its children hold; a child provider's tree only its own.
    expect(uuids({inTree: U(1)})).toEqual([C(1), C(3)])
    expect(uuids({inTree: U(2)})).toEqual([C(1)])
    expect(uuids({project: 'p1'})).toEqual([C(1), C(3)])
    expect(uuids({group: 'web'})).toEqual([C(1), C(2)])
    expect(uuids({group: 'web', project: 'p2'})).toEqual([C(2)])
    expect(uuids({group: 'web', inTree: U(3)})).toEqual([C(2)])
  })

  it('says groups are unknown where they are (plain Placement), and refuses filters naming nothing', () => {
    const s = world()
    expect(consumerListing(s, {}, {groups: false}).map((c) => c.groups)).toEqual([null, null, null])
    expect(() => checkConsumerFilter(s, {group: 'nope'})).toThrow(PlacementError)
    expect(() => checkConsumerFilter(s, {inTree: U(9)})).toThrow(/No resource provider/)
    expect(() => checkConsumerFilter(s, {inTree: U(1), group: 'web', project: 'anything'})).not.toThrow()
  })
})

describe('consumerView', () => {
  it('shows what a consumer holds on each provider, its hosts with where they are, and its groups', () => {
    const v = consumerView(world(), C(3))!
    expect(v.providers).toEqual([
      {uuid: U(1), name: 'h1', host: 'h1', resources: {VCPU: 1}},
      {uuid: U(3), name: 'h2', host: 'h2', resources: {VCPU: 1}},
    ])
    expect(v.hosts).toEqual([
      {uuid: U(1), name: 'h1', rack: 'k1', row: 'r1', room: null, disabled: false},
      {uuid: U(3), name: 'h2', rack: null, row: null, room: null, disabled: true},
    ])
    expect(v.groups).toEqual([])
    expect(consumerView(world(), C(1))!.providers.map((p) => [p.name, p.host])).toEqual([
      ['h1', 'h1'],
      ['h1-nic', 'h1'],
    ])
    expect(consumerView(world(), C(9))).toBeUndefined()
    expect(consumerView(world(), C(1), {groups: false})!.groups).toBeNull()
  })
})

describe('describeHost', () => {
  it('gives each provider of the tree with usage, the named aggregates, and the consumers with what they hold there', () => {
    const d = describeHost(world(), U(1))
    expect(d).toMatchObject({
      name: 'h1',
      disabled: false,
      rack: 'k1',
      row: 'r1',
      room: null,
      traits: ['HW_CPU_X86_AVX2'],
      capacity: {VCPU: 8, VGPU: 4},
      used: {VCPU: 3, VGPU: 1},
    })
    // In listing order (named ones, then racks, rows, rooms), not the order the host was given them in.
    expect(d.aggregates).toEqual([
      {uuid: aggregateUuid('ceph'), name: 'ceph', level: null, label: 'ceph'},
      {uuid: RACK, name: 'k1', level: 'rack', label: 'rack k1'},
      {uuid: ROW, name: 'r1', level: 'row', label: 'row r1'},
    ])
    expect(d.providers.map((p) => [p.name, p.inventories])).toEqual([
      ['h1', {VCPU: expect.objectContaining({total: 8, capacity: 8, used: 3})}],
      ['h1-nic', {VGPU: expect.objectContaining({total: 4, capacity: 4, used: 1})}],
    ])
    // c3 also holds on h2: only what it holds here counts.
    expect(d.consumers.map((c) => [c.uuid, c.resources, c.groups])).toEqual([
      [C(1), {VCPU: 2, VGPU: 1}, ['db', 'web']],
      [C(3), {VCPU: 1}, []],
    ])
    expect(describeHost(world(), U(3), {groups: false})).toMatchObject({
      disabled: true,
      consumers: [
        {uuid: C(2), groups: null},
        {uuid: C(3), groups: null},
      ],
    })
    expect(() => describeHost(world(), U(2))).toThrow(/not a host/)
  })
})

describe('aggregate names', () => {
  const inTx = (s: State, fn: () => void) => {
    s.changes = new Changes()
    try {
      fn()
    } finally {
      s.changes = null
    }
  }

  it('a name names one aggregate: given to another, it leaves the first; prune forgets names not wanted', () => {
    const s = world()
    const other = aggregateUuid('other')
    const edit = aggregateNameEdit(s, new Map([[other, 'ceph']]), false)
    expect(edit).toEqual({set: [{uuid: other, name: 'ceph'}], forget: []})
    inTx(s, () => editAggregateNames(s, 1, edit))
    expect([...s.aggregateNames.values()].map((n) => [n.uuid, n.name])).toEqual([[other, 'ceph']])
    expect(aggregateNameEdit(s, new Map([[other, 'ceph']]), true)).toEqual({set: [], forget: []})
    expect(aggregateNameEdit(s, new Map(), false)).toEqual({set: [], forget: []})
    expect(aggregateNameEdit(s, new Map(), true)).toEqual({set: [], forget: [other]})
    expect(() =>
      inTx(s, () =>
        editAggregateNames(s, 1, {
          set: [
            {uuid: U(1), name: 'x'},
            {uuid: U(2), name: 'x'},
          ],
          forget: [],
        }),
      ),
    ).toThrow(/cannot both be named x/)
    expect(() => inTx(s, () => editAggregateNames(s, 1, {set: [{uuid: U(1), name: U(2)}], forget: []}))).toThrow(/cannot be a uuid/)
  })

  it('racks, rows and rooms come first and win over a name an apply file gave the same aggregate', () => {
    const s = world()
    inTx(s, () => editAggregateNames(s, 1, {set: [{uuid: RACK, name: 'not-the-rack'}], forget: []}))
    expect(namedAggregates(s)).toEqual([
      {uuid: RACK, name: 'k1', level: 'rack'},
      {uuid: ROW, name: 'r1', level: 'row'},
      {uuid: aggregateUuid('ceph'), name: 'ceph', level: null},
    ])
  })

  const file = (providers: DeclaredProvider[], names: Record<string, string> = {}): ApplyFile => ({
    resourceClasses: [],
    traits: [],
    aggregateNames: new Map(Object.entries(names)),
    providers,
  })
  const at = (name: string, aggregates: string[]): DeclaredProvider => ({where: `providers (${name})`, name, aggregates})

  it('apply keeps the names a file gives (its map and names in lists) only where they can be kept, once', () => {
    const s = cloud([{name: 'h1'}])
    const f = file([at('h1', ['ceph', 'fast'])], {ceph: U(7)})
    const kept = planApply(f, s, {prune: false, keepAggregateNames: true})
    expect(kept.summary.aggregate_names).toBe(2)
    expect(kept.changes.filter((c) => c.kind === 'aggregate_name')).toEqual([
      {action: 'create', kind: 'aggregate_name', uuid: U(7), name: 'ceph'},
      {action: 'create', kind: 'aggregate_name', uuid: aggregateUuid('fast'), name: 'fast'},
    ])
    expect(kept.stages().names).toEqual([
      {
        op: 'set_aggregate_names',
        names: [
          {uuid: U(7), name: 'ceph'},
          {uuid: aggregateUuid('fast'), name: 'fast'},
        ],
        forget: [],
      },
    ])
    // Plain Placement: nothing to keep them in, and the plan does not pretend to.
    const plain = planApply(f, s, {prune: false})
    expect(plain.summary.aggregate_names).toBe(0)
    expect(plain.namedAggregates).toBe(2)
    // Once kept, the same file plans nothing; a new name for one is an update, and --prune drops the others.
    const after = cloud([{name: 'h1', aggregates: [U(7), aggregateUuid('fast')]}], {
      aggregateNames: [
        {uuid: U(7), name: 'ceph'},
        {uuid: aggregateUuid('fast'), name: 'fast'},
      ],
    })
    expect(planApply(f, after, {prune: false, keepAggregateNames: true}).operationCount).toBe(0)
    const renamed = planApply(file([at('h1', [U(7)])], {'ceph-a': U(7)}), after, {prune: true, keepAggregateNames: true})
    expect(renamed.changes.filter((c) => c.kind === 'aggregate_name')).toEqual([
      {action: 'update', kind: 'aggregate_name', uuid: U(7), name: 'ceph-a', from: 'ceph'},
      {action: 'delete', kind: 'aggregate_name', uuid: aggregateUuid('fast'), name: 'fast'},
    ])
  })

  it('refuses a file that gives one aggregate two names', () => {
    try {
      planApply(file([at('h1', ['b'])], {a: aggregateUuid('b')}), cloud([{name: 'h1'}]), {prune: false, keepAggregateNames: true})
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(ApplyRefused)
      expect((err as ApplyRefused).problems).toEqual([
        `providers (h1).aggregates: aggregate ${aggregateUuid('b')} is named both 'a' and 'b' (an aggregate has one name)`,
      ])
    }
  })
})
