/**
 * Whole-state snapshots: `placemat export` reads everything through the public Placement
 * API (so it works on any endpoint, a real OpenStack Placement included) and what the backend
 * keeps besides (placemat's own records); `placemat import` (snapshot-import.ts) writes a
 * snapshot straight into a new or empty file, keeping every provider and consumer
 * generation exactly.
 *
 * The format (the file's sections, their order, its versions) is core/snapshot-format.ts's; the
 * order and text a snapshot is written in, formats/snapshot-write.ts's.
 */
import type {TopologyLevel} from '../../core/state/state.js'
import {DISABLED_TRAIT} from '../../core/host.js'
import type {Backend} from '../backend/backend.js'
import {mapLimit} from '../../client/map-limit.js'
import type {ConsumerRecord, ProviderRecord} from '../../core/wire.js'
import {
  SNAPSHOT_VERSION,
  type PlacematParts,
  type Snapshot,
  type SnapshotAggregateName,
  type SnapshotConsumer,
  type SnapshotProvider,
} from '../../core/snapshot-format.js'
import {conflictError} from '../failure.js'
import {groupInKeyOrder, inventoryRecord, normalizeSnapshot, topologyOfLayout} from '../formats/snapshot-write.js'

const CUSTOM = 'CUSTOM_'

/**
 * What the backend keeps beyond Placement's records, as a snapshot's parts, and a mark that
 * changes whenever they do; undefined where it keeps none (plain Placement).
 */
export async function readPlacematParts(backend: Backend): Promise<{parts: PlacematParts; mark: string} | undefined> {
  const own = await backend.ownRecords()
  if (!own) return undefined
  const {layout, groups, moved, aggregateNames} = own
  const names: SnapshotAggregateName[] = aggregateNames.map((n) => ({name: n.name, uuid: n.uuid}))
  const mark = JSON.stringify([layout.generation, groups.map((g) => [g.name, g.generation]), moved, names])
  return {
    parts: {topology: topologyOfLayout(layout), groups: groups.map(groupInKeyOrder), moved_consumers: moved, aggregate_names: names},
    mark,
  }
}

/** The providers that can carry a disabled reason: roots with COMPUTE_STATUS_DISABLED. */
export const disabledHosts = (providers: Iterable<{uuid: string; parent: string | null; traits: Iterable<string>}>): string[] =>
  [...providers].filter((p) => p.parent === null && [...p.traits].includes(DISABLED_TRAIT)).map((p) => p.uuid)

interface ProviderListing {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid?: string | null
}

/** Providers and consumers from placemat's own lists (Backend.wholeCloud): two reads. */
function fromRecords(whole: {providers: ProviderRecord[]; consumers: ConsumerRecord[]}) {
  const providers = whole.providers.map(
    (p): SnapshotProvider => ({
      uuid: p.uuid,
      name: p.name,
      generation: p.generation,
      parent_provider_uuid: p.parent_provider_uuid ?? null,
      inventories: Object.fromEntries(Object.entries(p.inventories).map(([rc, i]) => [rc, inventoryRecord({...i})])),
      traits: p.traits,
      aggregates: p.aggregates,
    }),
  )
  // Consumers holding nothing are not carried (the API shows none).
  const consumers = whole.consumers.filter((c) => Object.keys(c.allocations).length > 0).map((c) => consumerOf(c.uuid, c))
  return {listing: whole.providers, providers, consumers}
}

/** Providers and consumers through the public API: four reads a provider, one a consumer. */
async function readOneByOne(client: Backend['client'], progress?: ExportProgress) {
  const listing = (await client.get<{resource_providers: ProviderListing[]}>('/resource_providers')).resource_providers
  const consumerUuids = new Set<string>()
  let read = 0
  const providers = await mapLimit(listing, 8, async (p): Promise<SnapshotProvider> => {
    const base = `/resource_providers/${p.uuid}`
    progress?.(read++, listing.length, 'providers')
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
  let done = 0
  const consumers = await mapLimit([...consumerUuids], 8, async (uuid) => {
    progress?.(done++, consumerUuids.size, 'consumers')
    return consumerOf(uuid, await client.get<ConsumerBody>(`/allocations/${uuid}`))
  })
  return {listing, providers, consumers}
}

/** GET /allocations/{consumer}'s body, or a consumer record of placemat's list. */
interface ConsumerBody {
  allocations: Record<string, {resources: Record<string, number>}>
  project_id?: string
  user_id?: string
  consumer_generation?: number | null
  consumer_type?: string | null
}

const consumerOf = (uuid: string, c: ConsumerBody): SnapshotConsumer => ({
  uuid,
  project_id: c.project_id ?? '',
  user_id: c.user_id ?? '',
  consumer_type: c.consumer_type && c.consumer_type !== 'unknown' ? c.consumer_type : null,
  generation: c.consumer_generation ?? 0,
  allocations: Object.fromEntries(Object.entries(c.allocations).map(([rp, a]) => [rp, a.resources])),
})

/** How far a read one by one is: `done` of `total` providers, then consumers. */
export type ExportProgress = (done: number, total: number, what: 'providers' | 'consumers') => void

async function readOnce(
  backend: Backend,
  progress?: ExportProgress,
): Promise<{snapshot: Snapshot; generations: Map<string, number>; mark: string | undefined}> {
  const {client} = backend
  const own = await readPlacematParts(backend)
  const classes = (await client.get<{resource_classes: {name: string}[]}>('/resource_classes')).resource_classes
    .map((c) => c.name)
    .filter((n) => n.startsWith(CUSTOM))
  const traits = (await client.get<{traits: string[]}>('/traits', {query: {name: `startswith:${CUSTOM}`}})).traits
  const whole = await backend.wholeCloud?.()
  const {listing, providers, consumers} = whole ? fromRecords(whole) : await readOneByOne(client, progress)
  // A reason moves its host's generation when it changes, so the generation check covers it too.
  // Only roots carrying COMPUTE_STATUS_DISABLED can have one.
  const reasons = await backend.disabledReasons(disabledHosts(providers.map((p) => ({...p, parent: p.parent_provider_uuid}))))
  for (const p of providers) {
    const reason = reasons.get(p.uuid)
    if (reason) p.disabled_reason = reason
  }
  const snapshot = normalizeSnapshot({
    placemat_snapshot: SNAPSHOT_VERSION,
    resource_classes: classes,
    traits,
    providers,
    consumers,
    ...own?.parts,
  })
  return {snapshot, generations: new Map(listing.map((p) => [p.uuid, p.generation])), mark: own?.mark}
}

/**
 * Reads the whole state through the public API, and what the backend keeps besides (placemat:
 * its racks, rows, rooms and placement groups, through /placemat/v1). The read is not one
 * transaction, so it is checked afterwards: when any provider generation moved meanwhile
 * (every inventory, trait, aggregate and allocation write moves one), or the topology's or a
 * group's, the whole read is made again. When no pass was quiet the export fails (exit 4): a
 * snapshot mixing states would lose the writes made after its last pass, or hold a provider
 * at a generation older than its allocations.
 */
export async function exportSnapshot(
  backend: Backend,
  opts: {tries?: number; keepsNothing?: () => void; progress?: ExportProgress} = {},
): Promise<Snapshot> {
  const {client} = backend
  const tries = opts.tries ?? 5
  for (let i = 1; ; i++) {
    const {snapshot, generations, mark} = await readOnce(backend, opts.progress)
    // Said once: the backend keeps nothing beyond Placement's records.
    if (i === 1 && mark === undefined) opts.keepsNothing?.()
    const after = (await client.get<{resource_providers: ProviderListing[]}>('/resource_providers')).resource_providers
    const still = new Set(after.map((p) => p.uuid))
    const changed =
      after.filter((p) => generations.get(p.uuid) !== p.generation).length + [...generations.keys()].filter((u) => !still.has(u)).length
    const ownChanged = mark !== undefined && (await readPlacematParts(backend))?.mark !== mark
    if (!changed && !ownChanged) return snapshot
    if (i >= tries) {
      throw conflictError(
        `the cloud changed while it was read: ${changed} provider(s)${ownChanged ? ' and the racks, rows, rooms, placement groups, moved consumers or aggregate names' : ''} changed during the last of ${tries} passes, none of which was quiet; ` +
          'stop the writers (nova-compute, the scheduler, placement-api itself) and export again, ' +
          "or read Placement's database in one transaction: placemat import --from-placement DATABASE_URL",
      )
    }
  }
}

/**
 * What plain OpenStack Placement cannot hold of `parts` and of the hosts' `disabledReasons`
 * (how many have one), in words; undefined when there is none of it.
 */
export function placematOnly(parts: PlacematParts, disabledReasons = 0): string | undefined {
  const nodes = parts.topology?.nodes ?? []
  const count = (level: TopologyLevel) => nodes.filter((n) => n.level === level).length
  const out: string[] = []
  if (nodes.length) {
    out.push(
      `${count('room')} rooms, ${count('row')} rows and ${count('rack')} racks (their names; the hosts' rack, row and room aggregates are kept)`,
    )
  }
  const groups = parts.groups ?? []
  if (groups.length) out.push(`${groups.length} placement groups (${groups.reduce((n, g) => n + g.members.length, 0)} members)`)
  const moved = parts.moved_consumers?.length ?? 0
  if (moved) out.push(`${moved} moved consumers (the project, user and type of consumers that gave their allocations away with claim move)`)
  const names = parts.aggregate_names?.length ?? 0
  if (names) out.push(`${names} aggregate names (given by apply files; the aggregates are kept)`)
  if (disabledReasons) out.push(`${disabledReasons} reasons hosts are disabled (COMPUTE_STATUS_DISABLED is kept)`)
  return out.length ? [out.slice(0, -1).join(', '), out.at(-1)].filter(Boolean).join(' and ') : undefined
}
