/**
 * A snapshot as `placemat export` writes it: every list and key in one order, so equal states
 * give equal text, at the lowest version that carries it all, as YAML or JSON. Read back by
 * snapshot-read.ts; the format itself is core/snapshot-format.ts's.
 */
import YAML from 'yaml'
import type {MovedRecord} from '../../core/consumer-moves.js'
import {INVENTORY_FIELDS} from '../../core/placement/inventories.js'
import {SNAPSHOT_VERSION, TOPOLOGY_LEVELS, type Snapshot, type SnapshotGroup, type SnapshotTopology} from '../../core/snapshot-format.js'
import type {Inventory, TopologyLevel} from '../../core/state/state.js'
import {layoutNodes, type Layout} from '../../core/topology.js'

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const sortedRecord = <V>(r: Record<string, V>): Record<string, V> =>
  Object.fromEntries(Object.entries(r).sort(([a], [b]) => byString(a, b)))

/** An inventory with Placement's fields in their order, whatever the source gave besides. */
export function inventoryRecord(raw: Record<string, unknown>): Inventory {
  const inv = {} as Inventory
  for (const f of INVENTORY_FIELDS) inv[f] = raw[f] as number
  return inv
}

/** Parents before children: roots by uuid, then each provider's children by uuid, depth first. */
export function treeOrder<T extends {uuid: string; parent_provider_uuid: string | null}>(providers: T[]): T[] {
  const byUuid = new Map(providers.map((p) => [p.uuid, p]))
  const children = new Map<string | null, T[]>()
  for (const p of providers) {
    const parent = p.parent_provider_uuid !== null && byUuid.has(p.parent_provider_uuid) ? p.parent_provider_uuid : null
    const list = children.get(parent) ?? []
    list.push(p)
    children.set(parent, list)
  }
  const out: T[] = []
  const walk = (parent: string | null) => {
    for (const p of (children.get(parent) ?? []).sort((a, b) => byString(a.uuid, b.uuid))) {
      out.push(p)
      walk(p.uuid)
    }
  }
  walk(null)
  return out
}

/**
 * Sorts every list and key (but a provider's inventories, kept in its order) so equal states give
 * equal text; the version is the lowest that carries it all.
 */
export function normalizeSnapshot(s: Snapshot): Snapshot {
  const topology = s.topology && (s.topology.generation > 0 || s.topology.nodes.length > 0) ? s.topology : undefined
  const groups = s.groups?.length ? s.groups : undefined
  const moved = s.moved_consumers?.length ? s.moved_consumers : undefined
  const names = s.aggregate_names?.length ? s.aggregate_names : undefined
  const reasons = s.providers.some((p) => p.disabled_reason)
  const out: Snapshot = {
    placemat_snapshot: topology || groups || moved || names || reasons ? SNAPSHOT_VERSION : 1,
    resource_classes: [...s.resource_classes].sort(byString),
    traits: [...s.traits].sort(byString),
    providers: treeOrder(s.providers).map((p) => ({
      uuid: p.uuid,
      name: p.name,
      generation: p.generation,
      parent_provider_uuid: p.parent_provider_uuid ?? null,
      // In the provider's own order (the order it lists them, and the tables and rollups show them).
      inventories: Object.fromEntries(
        Object.entries(p.inventories).map(([rc, inv]) => [rc, inventoryRecord(inv as unknown as Record<string, unknown>)]),
      ),
      traits: [...p.traits].sort(byString),
      aggregates: [...p.aggregates].sort(byString),
      ...(p.disabled_reason ? {disabled_reason: p.disabled_reason} : {}),
    })),
    consumers: [...s.consumers]
      .sort((a, b) => byString(a.uuid, b.uuid))
      .map((c) => ({
        uuid: c.uuid,
        project_id: c.project_id,
        user_id: c.user_id,
        consumer_type: c.consumer_type ?? null,
        generation: c.generation,
        allocations: Object.fromEntries(Object.entries(sortedRecord(c.allocations)).map(([rp, amounts]) => [rp, sortedRecord(amounts)])),
      })),
  }
  if (topology) {
    const rank = (level: TopologyLevel) => TOPOLOGY_LEVELS.indexOf(level)
    out.topology = {
      generation: topology.generation,
      nodes: [...topology.nodes]
        .sort((a, b) => rank(a.level) - rank(b.level) || byString(a.name, b.name))
        .map((n) => ({level: n.level, name: n.name, parent: n.parent ?? null})),
    }
  }
  if (groups) out.groups = [...groups].sort((a, b) => byString(a.name, b.name)).map(groupInKeyOrder)
  if (moved) out.moved_consumers = [...moved].sort((a, b) => byString(a.uuid, b.uuid)).map(movedInKeyOrder)
  if (names) out.aggregate_names = [...names].sort((a, b) => byString(a.name, b.name)).map((n) => ({name: n.name, uuid: n.uuid}))
  return out
}

/** The racks, rows and rooms of a layout (GET /placemat/v1/topology/layout), each with its parent's name. */
export function topologyOfLayout(layout: Layout & {generation: number}): SnapshotTopology {
  const nodes = layoutNodes(layout)
  return {
    generation: layout.generation,
    nodes: [...nodes.values()].map((n) => ({level: n.level, name: n.name, parent: n.parent ? (nodes.get(n.parent)?.name ?? null) : null})),
  }
}

/** A group with its keys in the snapshot's order, whatever order the source gave them in. */
export const groupInKeyOrder = (g: SnapshotGroup): SnapshotGroup => ({
  name: g.name,
  policy: g.policy,
  level: g.level,
  ...(g.max_per !== undefined ? {max_per: g.max_per} : {}),
  ...(g.max_skew !== undefined ? {max_skew: g.max_skew} : {}),
  soft: g.soft,
  generation: g.generation,
  created_at: g.created_at,
  updated_at: g.updated_at,
  members: [...g.members],
})

export const movedInKeyOrder = (m: MovedRecord): MovedRecord => ({
  uuid: m.uuid,
  moved_to: m.moved_to,
  project_id: m.project_id,
  user_id: m.user_id,
  consumer_type: m.consumer_type ?? null,
  moved_at: m.moved_at,
})

/** The snapshot as a file's text: YAML, or JSON indented by two. */
export function snapshotText(s: Snapshot, format: 'yaml' | 'json'): string {
  return format === 'json' ? JSON.stringify(s, null, 2) + '\n' : YAML.stringify(s)
}
