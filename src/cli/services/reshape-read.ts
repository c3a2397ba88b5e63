/**
 * What a reshape needs of the current state, read through the client as a Snapshot: the
 * trees of the providers the plan names (every provider in them, with inventories and the
 * allocations against them), the consumers the reshape moves (in full), the providers those
 * consumers use outside the trees, and the resource class names. Only reading: what to do
 * with it is decided in src/core/reshape.
 */
import type {PlacementClient} from '../../client/client.js'
import type {Move} from '../../core/reshape/moves.js'
import {providersOfBody} from '../../core/reshape/generations.js'
import type {ReshaperBody} from '../../core/placement/reshaper.js'
import {fullInventory, type Snapshot} from '../../core/snapshot.js'
import type {ConsumerRecord} from '../../core/wire.js'
import type {ListedProvider} from '../../core/wire.js'
import {mapLimit} from '../../client/map-limit.js'
import {listProviders} from '../backend/standard-reads.js'
import {findProvider, getProvider} from '../backend/provider-lookup.js'

type Resources = Record<string, number>

/** A provider as read: its record, and its allocations by consumer (as the provider lists them). */
interface ProviderRead {
  record: Snapshot['providers'][number]
  allocations: Record<string, {resources: Resources; consumer_generation?: number}>
}

/** The providers a move plan names that exist (a move's parent only where its target does not). */
export async function providersNamedByMoves(client: PlacementClient, moves: Move[]): Promise<ListedProvider[]> {
  const refs = new Map<string, ListedProvider | null>()
  const find = async (ref: string) => {
    if (!refs.has(ref)) refs.set(ref, await findProvider(client, ref))
    return refs.get(ref)
  }
  for (const m of moves) {
    await find(m.from)
    if (!(await find(m.to)) && m.parent) await find(m.parent)
  }
  return [...refs.values()].filter((p): p is ListedProvider => p !== null)
}

/** The providers a reshaper body names that exist (the others stay in the body: the reshaper reports them). */
export async function providersNamedByBody(client: PlacementClient, body: ReshaperBody): Promise<ListedProvider[]> {
  const read = await mapLimit(providersOfBody(body), 8, (uuid) => getProvider(client, uuid))
  return read.filter((p): p is ListedProvider => p !== null)
}

async function readProvider(client: PlacementClient, p: ListedProvider): Promise<ProviderRead> {
  const base = `/resource_providers/${p.uuid}`
  const [inv, alloc] = await Promise.all([
    client.get<{inventories: Record<string, Record<string, unknown>>}>(`${base}/inventories`),
    client.get<{allocations: ProviderRead['allocations']}>(`${base}/allocations`),
  ])
  const inventories = Object.fromEntries(Object.entries(inv.inventories).map(([rc, i]) => [rc, fullInventory(i)]))
  const record = {
    uuid: p.uuid,
    name: p.name,
    generation: p.generation,
    parent_provider_uuid: p.parent_provider_uuid ?? null,
    root_provider_uuid: p.root_provider_uuid ?? p.uuid,
    inventories,
  }
  return {record, allocations: alloc.allocations}
}

async function readConsumer(client: PlacementClient, uuid: string): Promise<ConsumerRecord | null> {
  const c = await client.get<Omit<ConsumerRecord, 'uuid'>>(`/allocations/${uuid}`)
  if (!Object.keys(c.allocations).length) return null // not a consumer (yet)
  const allocations = Object.fromEntries(Object.entries(c.allocations).map(([rp, a]) => [rp, {resources: {...a.resources}}]))
  return {
    uuid,
    project_id: c.project_id,
    user_id: c.user_id,
    consumer_type: c.consumer_type,
    consumer_generation: c.consumer_generation,
    allocations,
  }
}

/**
 * The consumers of the providers read, in the order the providers list them: those read in
 * full as they are, the others with only their allocations on these providers (enough for
 * usages).
 */
function consumersOf(providers: ProviderRead[], full: Map<string, ConsumerRecord>): ConsumerRecord[] {
  const out = new Map<string, ConsumerRecord>()
  for (const p of providers) {
    for (const [uuid, a] of Object.entries(p.allocations)) {
      if (full.has(uuid)) {
        if (!out.has(uuid)) out.set(uuid, full.get(uuid)!)
        continue
      }
      let c = out.get(uuid)
      if (!c) out.set(uuid, (c = {uuid, consumer_generation: a.consumer_generation, allocations: {}}))
      c.allocations[p.record.uuid] = {resources: {...a.resources}}
    }
  }
  for (const [uuid, c] of full) if (!out.has(uuid)) out.set(uuid, c)
  return [...out.values()]
}

/**
 * Reads the trees of `start`, then the consumers `wanted` picks from them (given the trees
 * as read) in full, then every provider those consumers use outside the trees.
 */
export async function readReshapeSnapshot(
  client: PlacementClient,
  start: ListedProvider[],
  wanted: (trees: Snapshot) => string[],
): Promise<Snapshot> {
  const classes = (await client.get<{resource_classes: {name: string}[]}>('/resource_classes')).resource_classes.map((c) => c.name)
  const listed = new Map<string, ListedProvider>()
  for (const root of new Set(start.map((p) => p.root_provider_uuid ?? p.uuid))) {
    const resource_providers = await listProviders(client, {in_tree: root})
    for (const p of resource_providers) listed.set(p.uuid, p)
  }
  for (const p of start) if (!listed.has(p.uuid)) listed.set(p.uuid, p)
  const providers = await mapLimit([...listed.values()], 8, (p) => readProvider(client, p))
  const snapshot = (full: Map<string, ConsumerRecord>): Snapshot => ({
    classes,
    providers: providers.map((p) => p.record),
    consumers: consumersOf(providers, full),
  })

  const full = new Map<string, ConsumerRecord>()
  for (const c of await mapLimit([...new Set(wanted(snapshot(full)))], 8, (uuid) => readConsumer(client, uuid))) if (c) full.set(c.uuid, c)
  // Providers these consumers use elsewhere: their capacity is checked too.
  const outside = new Set<string>()
  for (const c of full.values()) for (const rp of Object.keys(c.allocations)) if (!listed.has(rp)) outside.add(rp)
  const extra = await mapLimit([...outside], 8, async (uuid) =>
    readProvider(client, await client.get<ListedProvider>(`/resource_providers/${uuid}`)),
  )
  providers.push(...extra)
  return snapshot(full)
}
