/**
 * The whole cloud as one structure, for commands that look at everything at once
 * (apply, audit, top). On a placemat endpoint (or --db) it is read in one or two calls
 * (GET /placemat/v1/providers, /placemat/v1/consumers); on a plain OpenStack Placement
 * endpoint, which has neither (404), it falls back to the standard API, provider by
 * provider, with a few calls in flight.
 */
import {ApiError, type PlacementClient} from '../../client/client.js'
import type {InventoryRecord} from './inventory.js'
import {mapLimit, type ProviderRecord} from './providers.js'

export const PLACEMAT_API = '/placemat/v1'

/** Every inventory field, as Placement returns them. */
export type FullInventory = Required<InventoryRecord>

export interface ProviderState {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid: string | null
  root_provider_uuid: string
  inventories: Record<string, FullInventory>
  usages: Record<string, number>
  traits: string[]
  aggregates: string[]
}

export interface ConsumerState {
  uuid: string
  project_id?: string
  user_id?: string
  consumer_type?: string | null
  consumer_generation?: number | null
  /** ISO times; only a placemat endpoint reports them. */
  created_at?: string
  updated_at?: string
  allocations: Record<string, {resources: Record<string, number>}>
}

export interface CloudView {
  /** true: a placemat endpoint (batch and dump API available). */
  placemat: boolean
  providers: Map<string, ProviderState>
  /** Only when asked for. */
  consumers?: Map<string, ConsumerState>
}

export interface LoadOptions {
  /** On the standard API: which per-provider details to read (default all). */
  parts?: {inventories?: boolean; usages?: boolean; traits?: boolean; aggregates?: boolean}
  consumers?: boolean
  /** On a plain Placement endpoint: also read each consumer's project and user (one GET each). */
  consumerOwners?: boolean
  concurrency?: number
  /** Progress on the standard API: calls done so far and the calls known to be needed. */
  onProgress?: (done: number, total: number) => void
  /** Known from an earlier call, to skip the detection. */
  placemat?: boolean
}

const notThere = (err: unknown) => err instanceof ApiError && (err.status === 404 || err.status === 405)

/** Reads the whole state; `placemat` says which way it was read. */
export async function loadCloud(client: PlacementClient, opts: LoadOptions = {}): Promise<CloudView> {
  if (opts.placemat !== false) {
    let providers: ProviderState[] | undefined
    try {
      providers = (await client.get<{providers: ProviderState[]}>(`${PLACEMAT_API}/providers`)).providers
    } catch (err) {
      if (!notThere(err)) throw err
    }
    if (providers) {
      const view: CloudView = {placemat: true, providers: new Map(providers.map((p) => [p.uuid, p]))}
      if (opts.consumers) {
        const body = await client.get<{consumers: ConsumerState[]}>(`${PLACEMAT_API}/consumers`)
        view.consumers = new Map(body.consumers.map((c) => [c.uuid, c]))
      }
      return view
    }
  }
  return loadStandard(client, opts)
}

/** The same structure from the standard Placement API (one list, then a few GETs per provider). */
async function loadStandard(client: PlacementClient, opts: LoadOptions): Promise<CloudView> {
  const parts = {inventories: true, usages: true, traits: true, aggregates: true, ...opts.parts}
  const {resource_providers: list} = await client.get<{resource_providers: ProviderRecord[]}>('/resource_providers')
  const perProvider = Object.values(parts).filter(Boolean).length + (opts.consumers ? 1 : 0)
  let done = 0
  let total = list.length * perProvider
  const get = async <T>(path: string): Promise<T> => {
    const body = await client.get<T>(path)
    opts.onProgress?.(++done, total)
    return body
  }
  const providers = new Map<string, ProviderState>()
  const consumers = new Map<string, ConsumerState>()
  await mapLimit(list, opts.concurrency ?? 16, async (p) => {
    const base = `/resource_providers/${p.uuid}`
    const [inv, use, tr, ag, al] = await Promise.all([
      parts.inventories ? get<{inventories: Record<string, FullInventory>}>(`${base}/inventories`) : undefined,
      parts.usages ? get<{usages: Record<string, number>}>(`${base}/usages`) : undefined,
      parts.traits ? get<{traits: string[]}>(`${base}/traits`) : undefined,
      parts.aggregates ? get<{aggregates: string[]}>(`${base}/aggregates`) : undefined,
      opts.consumers ? get<{allocations: Record<string, {resources: Record<string, number>}>}>(`${base}/allocations`) : undefined,
    ])
    providers.set(p.uuid, {
      uuid: p.uuid,
      name: p.name,
      generation: p.generation,
      parent_provider_uuid: p.parent_provider_uuid ?? null,
      root_provider_uuid: p.root_provider_uuid ?? p.uuid,
      inventories: inv?.inventories ?? {},
      usages: use?.usages ?? {},
      traits: tr?.traits ?? [],
      aggregates: ag?.aggregates ?? [],
    })
    for (const [consumer, a] of Object.entries(al?.allocations ?? {})) {
      let c = consumers.get(consumer)
      if (!c) consumers.set(consumer, (c = {uuid: consumer, allocations: {}}))
      c.allocations[p.uuid] = {resources: a.resources}
    }
  })
  // The order of the provider list (the reads finish out of order).
  const ordered = new Map(list.filter((p) => providers.has(p.uuid)).map((p) => [p.uuid, providers.get(p.uuid)!]))
  const view: CloudView = {placemat: false, providers: ordered}
  if (opts.consumers) {
    if (opts.consumerOwners) {
      total += consumers.size
      await mapLimit([...consumers.values()], opts.concurrency ?? 16, async (c) => {
        const body = await get<{project_id?: string; user_id?: string; consumer_type?: string; consumer_generation?: number}>(
          `/allocations/${encodeURIComponent(c.uuid)}`,
        )
        c.project_id = body.project_id
        c.user_id = body.user_id
        c.consumer_type = body.consumer_type
        c.consumer_generation = body.consumer_generation
      })
    }
    view.consumers = consumers
  }
  return view
}

/** Placement's capacity: int((total - reserved) * allocation_ratio). */
export const capacityOf = (inv: {total: number; reserved?: number; allocation_ratio?: number}) =>
  Math.trunc((inv.total - (inv.reserved ?? 0)) * (inv.allocation_ratio ?? 1))
