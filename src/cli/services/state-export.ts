/**
 * Whole-state snapshots: `placemat export` reads everything through the public Placement
 * API (so it works on any endpoint, a real OpenStack Placement included), and
 * `placemat import` (snapshot-import.ts) writes a snapshot straight into a new or empty
 * file, keeping every provider and consumer generation exactly.
 *
 * The snapshot is plain data, in a fixed order, so export -> import -> export gives the
 * same text:
 *
 *   placemat_snapshot: 1
 *   resource_classes: [CUSTOM_...]         # custom classes (standard ones are built in)
 *   traits: [CUSTOM_...]                   # custom traits
 *   providers:                             # parents before children; roots by uuid, children by uuid
 *     - uuid, name, generation, parent_provider_uuid,
 *       inventories: {CLASS: {total, reserved, min_unit, max_unit, step_size, allocation_ratio}},
 *       traits: [sorted], aggregates: [sorted]
 *   consumers:                             # by uuid
 *     - uuid, project_id, user_id, consumer_type (null: none), generation,
 *       allocations: {provider uuid: {CLASS: amount}}
 *
 * Not carried: created/updated times (the API does not show them) and consumers that hold
 * no allocations (the API cannot see them).
 */
import YAML from 'yaml'
import type {PlacementClient} from '../../client/client.js'
import type {Inventory} from '../../core/state.js'
import {INVENTORY_FIELDS} from '../../core/inventories.js'
import {mapLimit} from '../../client/map-limit.js'
import {conflictError} from '../failure.js'

export const SNAPSHOT_VERSION = 1

export interface SnapshotProvider {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid: string | null
  inventories: Record<string, Inventory>
  traits: string[]
  aggregates: string[]
}

export interface SnapshotConsumer {
  uuid: string
  project_id: string
  user_id: string
  consumer_type: string | null
  generation: number
  allocations: Record<string, Record<string, number>>
}

export interface Snapshot {
  placemat_snapshot: number
  resource_classes: string[]
  traits: string[]
  providers: SnapshotProvider[]
  consumers: SnapshotConsumer[]
}

const CUSTOM = 'CUSTOM_'
const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const sortedRecord = <V>(r: Record<string, V>): Record<string, V> =>
  Object.fromEntries(Object.entries(r).sort(([a], [b]) => byString(a, b)))

function inventoryRecord(raw: Record<string, unknown>): Inventory {
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

/** Sorts every list and key so equal states give equal text. */
export function normalizeSnapshot(s: Snapshot): Snapshot {
  return {
    placemat_snapshot: s.placemat_snapshot,
    resource_classes: [...s.resource_classes].sort(byString),
    traits: [...s.traits].sort(byString),
    providers: treeOrder(s.providers).map((p) => ({
      uuid: p.uuid,
      name: p.name,
      generation: p.generation,
      parent_provider_uuid: p.parent_provider_uuid ?? null,
      inventories: Object.fromEntries(
        Object.entries(sortedRecord(p.inventories)).map(([rc, inv]) => [rc, inventoryRecord(inv as unknown as Record<string, unknown>)]),
      ),
      traits: [...p.traits].sort(byString),
      aggregates: [...p.aggregates].sort(byString),
    })),
    consumers: [...s.consumers]
      .sort((a, b) => byString(a.uuid, b.uuid))
      .map((c) => ({
        uuid: c.uuid,
        project_id: c.project_id,
        user_id: c.user_id,
        consumer_type: c.consumer_type ?? null,
        generation: c.generation,
        allocations: Object.fromEntries(
          Object.entries(sortedRecord(c.allocations)).map(([rp, amounts]) => [rp, sortedRecord(amounts)]),
        ),
      })),
  }
}

interface ProviderListing {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid?: string | null
}

async function readOnce(client: PlacementClient): Promise<{snapshot: Snapshot; generations: Map<string, number>}> {
  const classes = (await client.get<{resource_classes: {name: string}[]}>('/resource_classes')).resource_classes
    .map((c) => c.name)
    .filter((n) => n.startsWith(CUSTOM))
  const traits = (await client.get<{traits: string[]}>('/traits', {query: {name: `startswith:${CUSTOM}`}})).traits
  const listing = (await client.get<{resource_providers: ProviderListing[]}>('/resource_providers')).resource_providers
  const consumerUuids = new Set<string>()
  const providers = await mapLimit(listing, 8, async (p): Promise<SnapshotProvider> => {
    const base = `/resource_providers/${p.uuid}`
    const [inv, tr, agg, alloc] = await Promise.all([
      client.get<{inventories: Record<string, Record<string, unknown>>}>(`${base}/inventories`),
      client.get<{traits: string[]}>(`${base}/traits`),
      client.get<{aggregates: string[]}>(`${base}/aggregates`),
      client.get<{allocations: Record<string, unknown>}>(`${base}/allocations`),
    ])
    for (const c of Object.keys(alloc.allocations)) consumerUuids.add(c)
    return {
      uuid: p.uuid,
      name: p.name,
      generation: p.generation,
      parent_provider_uuid: p.parent_provider_uuid ?? null,
      inventories: Object.fromEntries(Object.entries(inv.inventories).map(([rc, i]) => [rc, inventoryRecord(i)])),
      traits: tr.traits,
      aggregates: agg.aggregates,
    }
  })
  const consumers = await mapLimit([...consumerUuids], 8, async (uuid): Promise<SnapshotConsumer> => {
    const c = await client.get<{
      allocations: Record<string, {resources: Record<string, number>}>
      project_id: string
      user_id: string
      consumer_generation?: number
      consumer_type?: string
    }>(`/allocations/${uuid}`)
    return {
      uuid,
      project_id: c.project_id,
      user_id: c.user_id,
      consumer_type: c.consumer_type && c.consumer_type !== 'unknown' ? c.consumer_type : null,
      generation: c.consumer_generation ?? 0,
      allocations: Object.fromEntries(Object.entries(c.allocations).map(([rp, a]) => [rp, a.resources])),
    }
  })
  const snapshot = normalizeSnapshot({placemat_snapshot: SNAPSHOT_VERSION, resource_classes: classes, traits, providers, consumers})
  return {snapshot, generations: new Map(listing.map((p) => [p.uuid, p.generation]))}
}

/**
 * Reads the whole state through the public API. The read is not one transaction, so it
 * is checked afterwards: when any provider generation moved meanwhile (every inventory,
 * trait, aggregate and allocation write moves one), the whole read is made again. When no
 * pass was quiet the export fails (exit 4): a snapshot mixing states would lose the writes made
 * after its last pass, or hold a provider at a generation older than its allocations.
 */
export async function exportSnapshot(client: PlacementClient, tries = 5): Promise<Snapshot> {
  for (let i = 1; ; i++) {
    const {snapshot, generations} = await readOnce(client)
    const after = (await client.get<{resource_providers: ProviderListing[]}>('/resource_providers')).resource_providers
    const still = new Set(after.map((p) => p.uuid))
    const changed = after.filter((p) => generations.get(p.uuid) !== p.generation).length + [...generations.keys()].filter((u) => !still.has(u)).length
    if (!changed) return snapshot
    if (i >= tries) {
      throw conflictError(
        `the cloud changed while it was read: ${changed} provider(s) changed during the last of ${tries} passes, none of which was quiet; ` +
          'stop the writers (nova-compute, the scheduler, placement-api itself) and export again, ' +
          "or read Placement's database in one transaction: placemat import --from-placement DATABASE_URL",
      )
    }
  }
}

export function snapshotText(s: Snapshot, format: 'yaml' | 'json'): string {
  return format === 'json' ? JSON.stringify(s, null, 2) + '\n' : YAML.stringify(s)
}
