/**
 * Racks, rows and rooms (placemat's own, not Placement's): each is an aggregate with a
 * name, a level and the node that contains it. A host (a root provider) in a rack is a
 * member of its rack's, row's and room's aggregates, so "same rack?" is an aggregate
 * question that any Placement endpoint can answer (member_of).
 */
import {PlacementError, badRequest, concurrentUpdate} from './errors.js'
import {breachRecord, newBreaches, topologyLocator, violationError, type BreachRecord} from './groups.js'
import {racksOf, rowsOf} from './layout-edits.js'
import type {Provider, State, TopologyLevel, TopologyNode} from './state/state.js'
import {LEGACY_TOPOLOGY_NAMESPACE, NAMES_NAMESPACE, canonicalUuid, isUuidLike, uuid5} from './uuids.js'

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

/** Deterministic aggregate uuid for a node: uuid5 of "level:name" in placemat's namespace. */
export const nodeUuid = (level: TopologyLevel, name: string): string => uuid5(`${level}:${name}`, NAMES_NAMESPACE)

/** The uuid a node had before racks, rows and rooms joined placemat's one namespace. */
export const legacyNodeUuid = (level: TopologyLevel, name: string): string => uuid5(`${level}:${name}`, LEGACY_TOPOLOGY_NAMESPACE)

export interface WantedNode {
  uuid: string
  name: string
  level: TopologyLevel
  parent: string | null
}

/** The layout flattened: nodes, and each host's rack/row/room aggregates. */
export interface Resolved {
  nodes: Map<string, WantedNode>
  /** host uuid -> topology aggregates it must be in */
  hosts: Map<string, string[]>
}

/** A host named in a layout: by uuid (any form Placement accepts) or by name. */
function resolveHost(s: State, ref: string): Provider | undefined {
  return s.providers.get(ref) ?? s.providerByName.get(ref) ?? (isUuidLike(ref) ? s.providers.get(canonicalUuid(ref)) : undefined)
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
  if (unknown.length)
    problems.unshift(`unknown host(s): ${unknown.slice(0, 20).join(', ')}${unknown.length > 20 ? ` and ${unknown.length - 20} more` : ''}`)
  if (problems.length) throw badRequest(`Invalid layout: ${problems.join('; ')}`)
  return {nodes, hosts}
}

// ---- planning and applying ----------------------------------------------------------------

export interface TopologyPlan {
  generation: number
  nodes: {create: string[]; update: string[]; delete: string[]}
  hosts: {add: string[]; move: string[]; remove: string[]}
  /** Placement groups the change breaks (hard ones; refused unless allowed). */
  violations: BreachRecord[]
}

const label = (n: {level: string; name: string}) => `${n.level} ${n.name}`

export interface LayoutChanges {
  plan: TopologyPlan
  resolved: Resolved
  /** host uuid -> every aggregate it must have (its other aggregates kept, as the State knows them) */
  hostAggs: Map<string, string[]>
}

export interface LayoutOptions {
  /**
   * The topology becomes exactly the layout: racks, rows and rooms it does not name are
   * deleted and hosts it does not name leave the topology (the default: a PUT replaces).
   * false: what it does not name stays where it is (see keptLayout).
   */
  prune?: boolean
}

/**
 * `layout` with what the topology holds and the layout does not name added where it is
 * now: racks, rows and rooms under their current parents, hosts in their current racks.
 * Applying it changes what the layout names and deletes nothing.
 */
export function keptLayout(s: State, layout: Layout): Layout {
  const out: Layout = structuredClone(layout)
  const named = layoutNodes(layout)
  // The file's nodes by name (the first of a name, as layoutNodes takes it); kept ones join as they are added.
  const rooms = new Map<string, RoomLayout>()
  const rows = new Map<string, RowLayout>()
  const racks = new Map<string, RackLayout>()
  for (const m of out.rooms ?? []) if (!rooms.has(m.name)) rooms.set(m.name, m)
  for (const {row} of rowsOf(out)) if (!rows.has(row.name)) rows.set(row.name, row)
  for (const {rack} of racksOf(out)) if (!racks.has(rack.name)) racks.set(rack.name, rack)
  const namedHosts = new Set<string>()
  for (const rack of racks.values()) {
    for (const ref of rack.hosts ?? []) {
      const p = resolveHost(s, String(ref))
      if (p) namedHosts.add(p.uuid)
    }
  }
  const parentName = (n: TopologyNode) => (n.parent ? s.topology.get(n.parent)?.name : undefined)
  const kept = (level: TopologyLevel) => [...s.topology.values()].filter((n) => n.level === level && !named.has(n.uuid))
  // Top down, so that a kept node's parent (named or kept) is there before it.
  for (const n of kept('room')) {
    const room: RoomLayout = {name: n.name, rows: []}
    ;(out.rooms ??= []).push(room)
    rooms.set(n.name, room)
  }
  for (const n of kept('row')) {
    const row: RowLayout = {name: n.name, racks: []}
    const room = rooms.get(parentName(n) ?? '')
    ;(room ? (room.rows ??= []) : (out.rows ??= [])).push(row)
    rows.set(n.name, row)
  }
  for (const n of kept('rack')) {
    const rack: RackLayout = {name: n.name, hosts: []}
    const row = rows.get(parentName(n) ?? '')
    ;(row ? (row.racks ??= []) : (out.racks ??= [])).push(rack)
    racks.set(n.name, rack)
  }
  // Every rack's hosts the layout does not name stay in it.
  for (const n of s.topology.values()) {
    if (n.level !== 'rack') continue
    const stay = [...(s.aggregateMembers.get(n.uuid) ?? [])].filter((u) => !namedHosts.has(u) && s.providers.get(u)?.parent === null)
    if (stay.length) (racks.get(n.name)!.hosts ??= []).push(...stay.map((u) => s.providers.get(u)!.name).sort())
  }
  return out
}

/** What applying `layout` would change, and the per-host aggregate sets it needs. */
export function layoutChanges(s: State, layout: Layout, opts: LayoutOptions = {}): LayoutChanges {
  const resolved = resolveLayout(s, opts.prune === false ? keptLayout(s, layout) : layout)
  const p: TopologyPlan = {
    generation: s.topologyGeneration,
    nodes: {create: [], update: [], delete: []},
    hosts: {add: [], move: [], remove: []},
    violations: [],
  }
  for (const n of resolved.nodes.values()) {
    const cur = s.topology.get(n.uuid)
    if (!cur) p.nodes.create.push(label(n))
    else if (cur.parent !== n.parent || cur.name !== n.name) p.nodes.update.push(label(n))
  }
  for (const n of s.topology.values()) if (!resolved.nodes.has(n.uuid)) p.nodes.delete.push(label(n))
  const hostAggs = new Map<string, string[]>()
  const rackOf = (aggs: string[]) => aggs.find((a) => (s.topology.get(a) ?? resolved.nodes.get(a))?.level === 'rack')
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
    // A host whose rack moved to another row stays in its rack: the rack's line says it all.
    else if (rackOf(current) !== wanted[0]) p.hosts.move.push(host.name)
  }
  // Where every host would be: its new aggregates in the layout's nodes.
  const after = topologyLocator(
    s,
    (host) => hostAggs.get(host) ?? s.providers.get(host)?.aggregates ?? [],
    (agg) => resolved.nodes.get(agg),
    resolved.nodes.values(),
  )
  p.violations = newBreaches(s, {locator: after}).map(breachRecord)
  return {plan: p, resolved, hostAggs}
}

export function planLayout(s: State, layout: Layout, opts: LayoutOptions = {}): TopologyPlan {
  return layoutChanges(s, layout, opts).plan
}

/** A layout write meant for topology generation `generation`, when the topology is at `current`. */
function staleGeneration(current: number, generation?: number): PlacementError | null {
  if (generation === undefined || generation === current) return null
  return concurrentUpdate(`topology generation conflict: expected ${generation}, found ${current}`)
}

/**
 * Why applying a plan would be refused, or null: the topology is no longer at the pinned
 * `generation` (409 concurrent update), or the change breaks hard placement groups (409
 * affinity violation) unless allowed. The write and its dry run both ask this.
 */
export function layoutRefusal(plan: TopologyPlan, generation?: number, allowViolations = false): PlacementError | null {
  const stale = staleGeneration(plan.generation, generation)
  if (stale) return stale
  return plan.violations.length && !allowViolations ? violationError(plan.violations) : null
}

/**
 * Makes the topology `layout` (exactly, unless `prune: false`): nodes created, re-parented
 * or deleted, and every host's topology aggregates set (its other aggregates kept; its
 * generation bumped as a Placement aggregates write would). Refused as layoutRefusal says.
 */
export function applyLayout(
  s: State,
  now: number,
  layout: Layout,
  generation?: number,
  opts: LayoutOptions & {allowViolations?: boolean} = {},
): TopologyPlan {
  // Before planning: a stale write is refused without the work of a plan.
  const stale = staleGeneration(s.topologyGeneration, generation)
  if (stale) throw stale
  const {plan: p, resolved, hostAggs} = layoutChanges(s, layout, opts)
  const refusal = layoutRefusal(p, generation, opts.allowViolations)
  if (refusal) throw refusal
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
  const hostsOf = (rack: TopologyNode) => [...(s.aggregateMembers.get(rack.uuid) ?? [])].map((u) => s.providers.get(u)!.name).sort()
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

/** The rack, row and room a host is in, by name (null at a level where it is in none). */
export function hostDomains(s: State, host: {aggregates: Iterable<string>} | undefined): Record<TopologyLevel, string | null> {
  const at: Record<TopologyLevel, string | null> = {rack: null, row: null, room: null}
  for (const agg of host?.aggregates ?? []) {
    const node = s.topology.get(agg)
    if (node) at[node.level] = node.name
  }
  return at
}

export function requireNode(s: State, level: TopologyLevel, name: string): TopologyNode {
  const n = s.topology.get(nodeUuid(level, name))
  if (!n) throw new PlacementError(404, `No ${level} named ${name}`)
  return n
}

/** The racks, rows and rooms a layout names, by uuid (no hosts, no checks: the first of a name wins). */
export function layoutNodes(layout: Layout): Map<string, WantedNode> {
  const nodes = new Map<string, WantedNode>()
  const add = (level: TopologyLevel, name: string, parent: string | null) => {
    const uuid = nodeUuid(level, name)
    if (!nodes.has(uuid)) nodes.set(uuid, {uuid, name, level, parent})
    return uuid
  }
  const row = (r: RowLayout, parent: string | null) => {
    const u = add('row', r.name, parent)
    for (const k of r.racks ?? []) add('rack', k.name, u)
  }
  for (const m of layout.rooms ?? []) {
    const u = add('room', m.name, null)
    for (const r of m.rows ?? []) row(r, u)
  }
  for (const r of layout.rows ?? []) row(r, null)
  for (const k of layout.racks ?? []) add('rack', k.name, null)
  return nodes
}

const LEVEL_ABOVE: Record<TopologyLevel, TopologyLevel | null> = {rack: 'row', row: 'room', room: null}

/**
 * The topology as an endpoint that keeps no names shows it (plain Placement: aggregates
 * only): every node of the layout applied before (`previous`), and every node `named` now
 * whose aggregate has members, its parent read from the aggregates its first member is in.
 * `aggregatesOf` gives a provider's aggregates among the nodes known.
 */
export function observedNodes(
  previous: Map<string, WantedNode>,
  named: Map<string, WantedNode>,
  members: (aggregate: string) => string[],
  aggregatesOf: (provider: string) => Iterable<string>,
): WantedNode[] {
  const known = new Map([...previous, ...named])
  const out = [...previous.values()]
  for (const n of named.values()) {
    if (previous.has(n.uuid)) continue
    const first = members(n.uuid)[0]
    if (!first) continue
    const up = LEVEL_ABOVE[n.level]
    const parent = up ? ([...aggregatesOf(first)].find((a) => known.get(a)?.level === up) ?? null) : null
    out.push({...n, parent})
  }
  return out
}
