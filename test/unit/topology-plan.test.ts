/**
 * Layout plans on snapshots, as the plain-Placement path makes them (the topology observed
 * from aggregates), layout edits, and the affinity rules every path decides with.
 */
import {describe, expect, it} from 'vitest'
import {byCloseness, closeness, emptyPlacement, ruleViolation, type Placement} from '../../src/core/affinity.js'
import {edits} from '../../src/core/layout-edits.js'
import {PlacementError} from '../../src/core/errors.js'
import {
  keptLayout,
  layoutChanges,
  layoutNodes,
  layoutRefusal,
  nodeUuid,
  observedNodes,
  type Layout,
  type TopologyPlan,
} from '../../src/core/topology.js'
import {topologyView} from '../../src/core/topology-view.js'
import {stateFromSnapshot} from '../../src/core/snapshot.js'
import {exitCodeOf, messageOf, usageError, Failure} from '../../src/cli/failure.js'
import {ApiError, UnreachableError} from '../../src/client/client.js'
import {U, cloud} from './fixtures.js'

const rack = (n: string) => nodeUuid('rack', n)
const row = (n: string) => nodeUuid('row', n)

const LAYOUT: Layout = {
  rooms: [
    {
      name: 'm1',
      rows: [
        {
          name: 'r1',
          racks: [
            {name: 'k1', hosts: ['cn1']},
            {name: 'k2', hosts: ['cn2']},
          ],
        },
      ],
    },
  ],
}

describe('layout plans on a snapshot (plain Placement)', () => {
  it('nodes whose aggregates have members exist, with parents read from their members; the rest are created', () => {
    const named = layoutNodes(LAYOUT)
    const members = new Map([
      [rack('k1'), [U(1)]],
      [row('r1'), [U(1)]],
    ])
    const aggs = new Map([[U(1), [rack('k1'), row('r1')]]])
    const nodes = observedNodes(
      new Map(),
      named,
      (a) => members.get(a) ?? [],
      (p) => aggs.get(p) ?? [],
    )
    expect(nodes.map((n) => [n.level, n.name, n.parent])).toEqual([
      ['row', 'r1', null],
      ['rack', 'k1', row('r1')],
    ])
    const s = cloud([{name: 'cn1', aggregates: [rack('k1'), row('r1')]}, {name: 'cn2'}], {topology: nodes})
    const {plan, hostAggs} = layoutChanges(s, LAYOUT)
    expect(plan.nodes).toEqual({create: ['room m1', 'rack k2'], update: ['row r1'], delete: []})
    expect(plan.hosts).toEqual({add: ['cn2'], move: [], remove: []}) // cn1 stays in k1; its room aggregate is added
    expect(hostAggs.get(U(1))!.sort()).toEqual([rack('k1'), row('r1'), nodeUuid('room', 'm1')].sort())
    expect(hostAggs.get(U(2))!.sort()).toEqual([rack('k2'), row('r1'), nodeUuid('room', 'm1')].sort())
  })

  it('a rack moved to another row is one change: its hosts are written but not listed as moved', () => {
    const nodes = layoutNodes({
      rows: [
        {name: 'r1', racks: [{name: 'k1', hosts: []}]},
        {name: 'r2', racks: []},
      ],
    })
    const s = cloud([{name: 'cn1', aggregates: [rack('k1'), row('r1')]}], {topology: [...nodes.values()]})
    const {plan, hostAggs} = layoutChanges(s, {
      rows: [
        {name: 'r1', racks: []},
        {name: 'r2', racks: [{name: 'k1', hosts: ['cn1']}]},
      ],
    })
    expect(plan.nodes.update).toEqual(['rack k1'])
    expect(plan.hosts).toEqual({add: [], move: [], remove: []})
    expect(hostAggs.get(U(1))).toEqual([rack('k1'), row('r2')])
  })

  it('the previous layout tells what to empty; hosts out of the layout leave; unknown hosts are refused', () => {
    const before = layoutNodes(LAYOUT)
    const s = cloud([{name: 'cn1', aggregates: [rack('k1'), row('r1'), nodeUuid('room', 'm1')]}, {name: 'cn2'}], {
      topology: [...before.values()],
    })
    const {plan, hostAggs} = layoutChanges(s, {rooms: []})
    expect(plan.nodes.delete).toEqual(['room m1', 'row r1', 'rack k1', 'rack k2'])
    expect(plan.hosts.remove).toEqual(['cn1'])
    expect(hostAggs.get(U(1))).toEqual([])
    expect(() => layoutChanges(s, {racks: [{name: 'k9', hosts: ['nope']}]})).toThrow(/unknown host\(s\): nope/)
  })

  it('the rolled-up view of a snapshot counts whole trees, only classes in use', () => {
    const s = stateFromSnapshot({
      providers: [
        {
          uuid: U(1),
          name: 'cn1',
          generation: 0,
          root_provider_uuid: U(1),
          aggregates: [rack('k1')],
          inventories: {VCPU: {total: 8}},
          usages: {VCPU: 2, DISK_GB: 0},
        },
        {
          uuid: U(2),
          name: 'gpu',
          generation: 0,
          parent_provider_uuid: U(1),
          root_provider_uuid: U(1),
          inventories: {VGPU: {total: 4}},
          usages: {},
        },
      ],
      topology: [{uuid: rack('k1'), name: 'k1', level: 'rack', parent: null}],
    })
    expect(topologyView(s)).toEqual([
      {
        uuid: rack('k1'),
        name: 'k1',
        level: 'rack',
        capacity: {VCPU: 8, VGPU: 4},
        used: {VCPU: 2},
        hosts: [{uuid: U(1), name: 'cn1', capacity: {VCPU: 8, VGPU: 4}, used: {VCPU: 2}, disabled: false}],
      },
    ])
  })
})

describe('what a layout leaves out (prune)', () => {
  const room = (n: string) => nodeUuid('room', n)
  /** m1 > r1 > k1 (cn1), k2 (cn2); cn3 in no rack. */
  const placed = () =>
    cloud(
      [
        {name: 'cn1', aggregates: [rack('k1'), row('r1'), room('m1')]},
        {name: 'cn2', aggregates: [rack('k2'), row('r1'), room('m1'), U(99)]},
        {name: 'cn3'},
      ],
      {topology: [...layoutNodes(LAYOUT).values()]},
    )

  it('without prune, a file with one new room creates it and deletes nothing; with prune it is the whole topology', () => {
    const s = placed()
    const kept = layoutChanges(s, {rooms: [{name: 'm2'}]}, {prune: false})
    expect(kept.plan.nodes).toEqual({create: ['room m2'], update: [], delete: []})
    expect(kept.plan.hosts).toEqual({add: [], move: [], remove: []})
    expect(kept.hostAggs.size).toBe(0)
    const pruned = layoutChanges(s, {rooms: [{name: 'm2'}]}, {prune: true})
    expect(pruned.plan.nodes).toEqual({create: ['room m2'], update: [], delete: ['room m1', 'row r1', 'rack k1', 'rack k2']})
    expect(pruned.plan.hosts.remove.sort()).toEqual(['cn1', 'cn2'])
    expect(layoutChanges(s, {rooms: [{name: 'm2'}]}).plan).toEqual(pruned.plan) // a PUT replaces
  })

  it('without prune, what the file names moves and what it does not stays where it is', () => {
    const s = placed()
    expect(keptLayout(s, {racks: [{name: 'k1', hosts: ['cn2', 'cn3']}]})).toEqual({
      rooms: [{name: 'm1', rows: [{name: 'r1', racks: [{name: 'k2', hosts: []}]}]}],
      racks: [{name: 'k1', hosts: ['cn2', 'cn3', 'cn1']}],
    })
    // A row moved to a new room takes its racks and their hosts along; cn2 keeps its other aggregate.
    const {plan, hostAggs} = layoutChanges(s, {rooms: [{name: 'm2', rows: [{name: 'r1'}]}]}, {prune: false})
    expect(plan.nodes).toEqual({create: ['room m2'], update: ['row r1'], delete: []})
    expect(plan.hosts).toEqual({add: [], move: [], remove: []})
    expect(hostAggs.get(U(1))!.sort()).toEqual([rack('k1'), row('r1'), room('m2')].sort())
    expect(hostAggs.get(U(2))!.sort()).toEqual([U(99), rack('k2'), row('r1'), room('m2')].sort())
    // A host named in another rack moves there; the rest of its old rack stays.
    const moved = layoutChanges(s, {racks: [{name: 'k3', hosts: ['cn1', 'cn3']}]}, {prune: false})
    expect(moved.plan.nodes).toEqual({create: ['rack k3'], update: [], delete: []})
    expect(moved.plan.hosts).toEqual({add: ['cn3'], move: ['cn1'], remove: []})
    expect(moved.hostAggs.has(U(2))).toBe(false)
  })
})

describe('layoutRefusal: what a write, and so its dry run, is refused for', () => {
  const plan = (generation: number, violations: TopologyPlan['violations'] = []): TopologyPlan => ({
    generation,
    nodes: {create: ['rack k1'], update: [], delete: []},
    hosts: {add: [], move: [], remove: []},
    violations,
  })
  const breach = {
    group: 'db',
    rule: 'anti-affinity by row',
    soft: false,
    why: '2 members in row r1 (at most 1)',
    domains: [{name: 'r1', members: [U(1), U(2)]}],
  }

  it('a stale pinned generation first, then a broken hard group unless allowed', () => {
    expect(layoutRefusal(plan(3))).toBeNull()
    expect(layoutRefusal(plan(3), 3)).toBeNull()
    expect(layoutRefusal(plan(3), 2)).toMatchObject({
      status: 409,
      code: 'placement.concurrent_update',
      detail: 'topology generation conflict: expected 2, found 3',
    })
    expect(layoutRefusal(plan(3, [breach]), 2)).toMatchObject({code: 'placement.concurrent_update'})
    expect(layoutRefusal(plan(3, [breach]))).toMatchObject({status: 409, code: 'placemat.affinity_violation'})
    expect(layoutRefusal(plan(3, [breach]))!.detail).toMatch(/^Placement group rule violated: group db \(anti-affinity by row\)/)
    expect(layoutRefusal(plan(3, [breach]), undefined, true)).toBeNull()
  })
})

describe('layout edits', () => {
  it('adding a host elsewhere moves it; deleting a row leaves its racks standing alone', () => {
    const doc = structuredClone(LAYOUT)
    edits.rackAdd(doc, 'k2', ['cn1'])
    expect(doc.rooms![0].rows![0].racks!.map((k) => k.hosts)).toEqual([[], ['cn2', 'cn1']])
    edits.rowDelete(doc, 'r1')
    expect(doc.rooms![0].rows).toEqual([])
    expect(doc.racks!.map((k) => k.name)).toEqual(['k1', 'k2'])
  })

  it('a missing name is a 404, one that exists a 409 (exit 3 and 4)', () => {
    const doc = structuredClone(LAYOUT)
    const missing = (() => {
      try {
        edits.rackDelete(doc, 'k9')
      } catch (err) {
        return err
      }
    })()
    expect(missing).toBeInstanceOf(PlacementError)
    expect(exitCodeOf(missing)).toBe(3)
    expect(() => edits.rackCreate(doc, 'k1')).toThrow(/already exists/)
  })
})

describe('affinity', () => {
  const at = (r: string, w: string): Placement => {
    const p = emptyPlacement()
    p.rack.add(rack(r))
    p.row.add(row(w))
    return p
  }
  it('same and different hold or say why; same with an anchor nowhere cannot hold', () => {
    const anchor = at('k1', 'r1')
    expect(ruleViolation(at('k1', 'r1'), anchor, {relation: 'same', level: 'rack', consumer: U(9)})).toBeNull()
    expect(ruleViolation(at('k2', 'r1'), anchor, {relation: 'same', level: 'rack', consumer: U(9)})).toBe(
      `not in the same rack as consumer ${U(9)}`,
    )
    expect(ruleViolation(at('k2', 'r1'), anchor, {relation: 'different', level: 'row', consumer: U(9)})).toBe(
      `in the same row as consumer ${U(9)}`,
    )
    expect(ruleViolation(at('k2', 'r1'), emptyPlacement(), {relation: 'same', level: 'row', consumer: U(9)})).toMatch(
      /has no allocations in any row/,
    )
  })
  it('closeness orders near and far stably', () => {
    const anchor = at('k1', 'r1')
    const items = [at('k9', 'r9'), at('k2', 'r1'), at('k1', 'r1'), at('k8', 'r8')]
    expect(items.map((p) => closeness(p, anchor))).toEqual([3, 1, 0, 3])
    expect(byCloseness(items, (p) => p, anchor, 'near').map((p) => closeness(p, anchor))).toEqual([0, 1, 3, 3])
    expect(byCloseness(items, (p) => p, anchor, 'far')).toEqual([items[0], items[3], items[1], items[2]])
  })
})

describe('exit codes', () => {
  it('are computed in one place from every kind of failure', () => {
    expect(exitCodeOf(usageError('x'))).toBe(2)
    expect(exitCodeOf(new Failure('bad_request', 'x'))).toBe(6)
    expect(exitCodeOf(new ApiError(409, 'stale', 'placement.concurrent_update', 'PUT', '/x'))).toBe(4)
    expect(exitCodeOf(new PlacementError(400, 'bad'))).toBe(6)
    expect(exitCodeOf(new UnreachableError('down'))).toBe(5)
    expect(exitCodeOf(new Error('bug'))).toBe(1)
    expect(exitCodeOf(new ApiError(401, 'who', undefined, 'GET', '/'))).toBe(10)
    expect(exitCodeOf(new ApiError(403, 'no', undefined, 'GET', '/'))).toBe(11)
    expect(messageOf(new ApiError(409, 'stale', 'placement.concurrent_update', 'PUT', '/x'))).toBe(
      '409 [placement.concurrent_update]: stale',
    )
  })
})
