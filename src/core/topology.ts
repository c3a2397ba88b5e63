/**
 * Racks, rows and rooms (placemat's own, not Placement's): each is an aggregate with a
 * name, a level and the node that contains it. A host (a root provider) in a rack is a
 * member of its rack's, row's and room's aggregates, so "same rack?" is an aggregate
 * question that any Placement endpoint can answer (member_of).
 */
import {createHash} from 'node:crypto'
import {PlacementError, badRequest} from './errors.js'
import {capacityOf, type Provider, type State, type TopologyLevel, type TopologyNode} from './state.js'

export const LEVELS: readonly TopologyLevel[] = ['room', 'row', 'rack']
const CHILD_LEVEL: Record<TopologyLevel, TopologyLevel | null> = {room: 'row', row: 'rack', rack: null}

// ---- layout documents -------------------------------------------------------------------

export interface RackLayout {
  name: string
  hosts?: string[]
}
export interface RowLayout {
  name: string
  racks?: RackLayout[]
}
export interface RoomLayout {
  name: string
  rows?: RowLayout[]
}
/** A whole layout. Rows and racks may also stand alone (not yet in a room / row). */
export interface Layout {
  rooms?: RoomLayout[]
  rows?: RowLayout[]
  racks?: RackLayout[]
}

const NAMESPACE = Buffer.from('5b0c7d1e9a3f4e2b8c6d0f1a2b3c4d5e', 'hex')

/** Deterministic aggregate uuid for a node (uuid v5 of "level:name" in placemat's namespace). */
export function nodeUuid(level: TopologyLevel, name: string): string {
  const h = createHash('sha1').update(NAMESPACE).update(`${level}:${name}`).digest()
  h[6] = (h[6] & 0x0f) | 0x50
  h[8] = (h[8] & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`
}

interface WantedNode {
  uuid: string
  name: string
  level: TopologyLevel
  parent: string | null
}

/** The layout flattened: nodes, and each host's rack/row/room aggregates. */
interface Resolved {
  nodes: Map<string, WantedNode>
  /** host uuid -> topology aggregates it must be in */
  hosts: Map<string, string[]>
}

function resolveHost(s: State, ref: string): Provider | undefined {
  return s.providers.get(ref) ?? s.providerByName.get(ref)
}

function resolveLayout(s: State, layout: Layout): Resolved {
  const nodes = new Map<string, WantedNode>()
  const hosts = new Map<string, string[]>()
  const hostRack = new Map<string, string>()
  const unknown: string[] = []
  const problems: string[] = []
  const add = (level: TopologyLevel, name: unknown, parent: WantedNode | null): WantedNode | null => {
    if (typeof name !== 'string' || name.trim() === '') {
      problems.push(`a ${level} has no name`)
      return null
    }
    const uuid = nodeUuid(level, name)
    if (nodes.has(uuid)) {
      problems.push(`${level} ${name} appears twice`)
      return null
    }
    const node = {uuid, name, level, parent: parent?.uuid ?? null}
    nodes.set(uuid, node)
    return node
  }
  const chain = (node: WantedNode): string[] => {
    const out: string[] = []
    for (let n: WantedNode | undefined = node; n; n = n.parent ? nodes.get(n.parent) : undefined) out.push(n.uuid)
    return out
  }
  const rack = (r: RackLayout, parent: WantedNode | null) => {
    const node = add('rack', r?.name, parent)
    if (!node) return
    for (const ref of r.hosts ?? []) {
      const p = resolveHost(s, String(ref))
      if (!p) {
        unknown.push(String(ref))
        continue
      }
      if (p.parent !== null) {
        problems.push(`host ${ref} is not a root provider`)
        continue
      }
      const prev = hostRack.get(p.uuid)
      if (prev) {
        problems.push(`host ${ref} is in two racks (${prev} and ${node.name})`)
        continue
      }
      hostRack.set(p.uuid, node.name)
      hosts.set(p.uuid, chain(node))
    }
  }
  const row = (r: RowLayout, parent: WantedNode | null) => {
    const node = add('row', r?.name, parent)
    if (node) for (const k of r.racks ?? []) rack(k, node)
  }
  for (const m of layout.rooms ?? []) {
    const node = add('room', m?.name, null)
    if (node) for (const r of m.rows ?? []) row(r, node)
  }
  for (const r of layout.rows ?? []) row(r, null)
  for (const k of layout.racks ?? []) rack(k, null)
  if (unknown.length) problems.unshift(`unknown host(s): ${unknown.slice(0, 20).join(', ')}${unknown.length > 20 ? ` and ${unknown.length - 20} more` : ''}`)
  if (problems.length) throw badRequest(`Invalid layout: ${problems.join('; ')}`)
  return {nodes, hosts}
}

// ---- planning and applying ----------------------------------------------------------------

export interface TopologyPlan {
  generation: number
  nodes: {create: string[]; update: string[]; delete: string[]}
  hosts: {add: string[]; move: string[]; remove: string[]}
}

const label = (n: {level: string; name: string}) => `${n.level} ${n.name}`

/** What applying `layout` would change, and the per-host aggregate sets it needs. */
function plan(s: State, layout: Layout): {plan: TopologyPlan; resolved: Resolved; hostAggs: Map<string, string[]>} {
  const resolved = resolveLayout(s, layout)
  const p: TopologyPlan = {
    generation: s.topologyGeneration,
    nodes: {create: [], update: [], delete: []},
    hosts: {add: [], move: [], remove: []},
  }
  for (const n of resolved.nodes.values()) {
    const cur = s.topology.get(n.uuid)
    if (!cur) p.nodes.create.push(label(n))
    else if (cur.parent !== n.parent || cur.name !== n.name) p.nodes.update.push(label(n))
  }
  for (const n of s.topology.values()) if (!resolved.nodes.has(n.uuid)) p.nodes.delete.push(label(n))
  const hostAggs = new Map<string, string[]>()
  const touched = new Set<string>(resolved.hosts.keys())
  for (const uuid of s.topology.keys()) for (const member of s.aggregateMembers.get(uuid) ?? []) touched.add(member)
  for (const uuid of touched) {
    const host = s.providers.get(uuid)!
    const wanted = resolved.hosts.get(uuid) ?? []
    const current = [...host.aggregates].filter((a) => s.topology.has(a) || resolved.nodes.has(a))
    const same = wanted.length === current.length && wanted.every((a) => host.aggregates.has(a))
    if (same) continue
    const others = [...host.aggregates].filter((a) => !s.topology.has(a) && !resolved.nodes.has(a))
    hostAggs.set(uuid, [...others, ...wanted])
    if (current.length === 0) p.hosts.add.push(host.name)
    else if (wanted.length === 0) p.hosts.remove.push(host.name)
    else p.hosts.move.push(host.name)
  }
  return {plan: p, resolved, hostAggs}
}

export function planLayout(s: State, layout: Layout): TopologyPlan {
  return plan(s, layout).plan
}

/**
 * Makes the topology exactly `layout`: nodes created, re-parented or deleted, and every
 * host's topology aggregates set (its other aggregates kept; its generation bumped as a
 * Placement aggregates write would). With `generation`, a concurrent layout change is a 409.
 */
export function applyLayout(s: State, now: number, layout: Layout, generation?: number): TopologyPlan {
  if (generation !== undefined && generation !== s.topologyGeneration) {
    throw new PlacementError(409, `topology generation conflict: expected ${generation}, found ${s.topologyGeneration}`, 'placement.concurrent_update')
  }
  const {plan: p, resolved, hostAggs} = plan(s, layout)
  const changed = p.nodes.create.length + p.nodes.update.length + p.nodes.delete.length + hostAggs.size > 0
  if (!changed) return p
  for (const n of s.topology.values()) if (!resolved.nodes.has(n.uuid)) s.removeTopologyNode(n.uuid)
  for (const n of resolved.nodes.values()) {
    const cur = s.topology.get(n.uuid)
    if (cur && cur.parent === n.parent && cur.name === n.name) continue
    s.setTopologyNode({...n, createdAt: cur?.createdAt ?? now, updatedAt: now})
  }
  for (const [uuid, aggs] of hostAggs) {
    const host = s.providers.get(uuid)!
    s.setAggregates(host, aggs)
    s.bumpProvider(host, now)
  }
  s.bumpTopology()
  p.generation = s.topologyGeneration
  return p
}

/** The current topology as a layout document (hosts by name), for read-modify-write edits. */
export function currentLayout(s: State): Layout & {generation: number} {
  const children = new Map<string | null, TopologyNode[]>()
  for (const n of s.topology.values()) {
    const list = children.get(n.parent) ?? []
    list.push(n)
    children.set(n.parent, list)
  }
  const sorted = (parent: string | null, level: TopologyLevel) =>
    (children.get(parent) ?? []).filter((n) => n.level === level).sort((a, b) => a.name.localeCompare(b.name))
  const hostsOf = (rack: TopologyNode) =>
    [...(s.aggregateMembers.get(rack.uuid) ?? [])].map((u) => s.providers.get(u)!.name).sort()
  const rackDoc = (k: TopologyNode): RackLayout => ({name: k.name, hosts: hostsOf(k)})
  const rowDoc = (r: TopologyNode): RowLayout => ({name: r.name, racks: sorted(r.uuid, 'rack').map(rackDoc)})
  const out: Layout & {generation: number} = {generation: s.topologyGeneration}
  out.rooms = sorted(null, 'room').map((m) => ({name: m.name, rows: sorted(m.uuid, 'row').map(rowDoc)}))
  const rows = sorted(null, 'row')
  if (rows.length) out.rows = rows.map(rowDoc)
  const racks = sorted(null, 'rack')
  if (racks.length) out.racks = racks.map(rackDoc)
  return out
}

// ---- views ---------------------------------------------------------------------------------

export interface Rollup {
  capacity: Record<string, number>
  used: Record<string, number>
}

export interface TopologyView extends Rollup {
  uuid: string
  name: string
  level: TopologyLevel
  children?: TopologyView[]
  hosts?: Array<{uuid: string; name: string} & Rollup>
}

function addInto(into: Rollup, from: Rollup): void {
  for (const [rc, n] of Object.entries(from.capacity)) into.capacity[rc] = (into.capacity[rc] ?? 0) + n
  for (const [rc, n] of Object.entries(from.used)) into.used[rc] = (into.used[rc] ?? 0) + n
}

/** Capacity and usage of a host's whole tree. */
export function hostRollup(s: State, host: Provider): Rollup {
  const r: Rollup = {capacity: {}, used: {}}
  for (const p of s.subtree(host.uuid)) {
    for (const [rc, inv] of p.inventories) r.capacity[rc] = (r.capacity[rc] ?? 0) + capacityOf(inv)
    for (const [rc, n] of p.usages) r.used[rc] = (r.used[rc] ?? 0) + n
  }
  return r
}

/** The topology tree with capacity and usage rolled up per rack, row and room. */
export function topologyView(s: State): TopologyView[] {
  const build = (n: TopologyNode): TopologyView => {
    const v: TopologyView = {uuid: n.uuid, name: n.name, level: n.level, capacity: {}, used: {}}
    const childLevel = CHILD_LEVEL[n.level]
    if (childLevel) {
      v.children = [...s.topology.values()]
        .filter((c) => c.parent === n.uuid && c.level === childLevel)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map(build)
      for (const c of v.children) addInto(v, c)
    } else {
      v.hosts = [...(s.aggregateMembers.get(n.uuid) ?? [])]
        .map((u) => s.providers.get(u)!)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((h) => ({uuid: h.uuid, name: h.name, ...hostRollup(s, h)}))
      for (const h of v.hosts) addInto(v, h)
    }
    return v
  }
  const tops = [...s.topology.values()].filter((n) => n.parent === null)
  const order = (n: TopologyNode) => LEVELS.indexOf(n.level)
  return tops.sort((a, b) => order(a) - order(b) || a.name.localeCompare(b.name)).map(build)
}

// ---- placement of hosts and consumers ------------------------------------------------------------

export type Placement = Record<TopologyLevel, Set<string>>

const emptyPlacement = (): Placement => ({room: new Set(), row: new Set(), rack: new Set()})

/** The racks, rows and rooms of the host (tree root) a provider belongs to. */
export function providerPlacement(s: State, providerUuid: string, into: Placement = emptyPlacement()): Placement {
  const p = s.providers.get(providerUuid)
  const root = p ? s.providers.get(p.root) : undefined
  if (!root) return into
  for (const agg of root.aggregates) {
    const node = s.topology.get(agg)
    if (node) into[node.level].add(node.uuid)
  }
  return into
}

/** Where a consumer's allocations are, by level (empty sets when it has none). */
export function consumerPlacement(s: State, consumerUuid: string): Placement {
  const out = emptyPlacement()
  const c = s.consumers.get(consumerUuid)
  if (c) for (const puuid of c.allocations.keys()) providerPlacement(s, puuid, out)
  return out
}

export interface AffinityRule {
  relation: 'same' | 'different'
  level: TopologyLevel
  consumer: string
}

/**
 * Checks a set of providers (a candidate) against affinity rules at this moment. Returns
 * null when every rule holds, else why not. A 'same' rule whose anchor consumer has no
 * allocations (or no topology) cannot hold.
 */
export function affinityViolation(s: State, providerUuids: Iterable<string>, rules: AffinityRule[]): string | null {
  if (rules.length === 0) return null
  const mine = emptyPlacement()
  for (const u of providerUuids) providerPlacement(s, u, mine)
  for (const rule of rules) {
    const anchor = consumerPlacement(s, rule.consumer)[rule.level]
    const here = mine[rule.level]
    if (rule.relation === 'same') {
      if (anchor.size === 0) return `consumer ${rule.consumer} has no allocations in any ${rule.level}`
      if (![...here].some((n) => anchor.has(n))) return `not in the same ${rule.level} as consumer ${rule.consumer}`
    } else if ([...here].some((n) => anchor.has(n))) {
      return `in the same ${rule.level} as consumer ${rule.consumer}`
    }
  }
  return null
}

/** How close a set of providers is to a consumer: 0 same rack, 1 same row, 2 same room, 3 elsewhere. */
export function closeness(s: State, providerUuids: Iterable<string>, anchor: Placement): number {
  const mine = emptyPlacement()
  for (const u of providerUuids) providerPlacement(s, u, mine)
  const shares = (level: TopologyLevel) => [...mine[level]].some((n) => anchor[level].has(n))
  return shares('rack') ? 0 : shares('row') ? 1 : shares('room') ? 2 : 3
}

export function requireNode(s: State, level: TopologyLevel, name: string): TopologyNode {
  const n = s.topology.get(nodeUuid(level, name))
  if (!n) throw new PlacementError(404, `No ${level} named ${name}`)
  return n
}

