/**
 * The whole cloud as one structure, for commands that look at everything at once
 * (apply, audit, top). On a placemat endpoint (or --db) it is read in one or two calls
 * (GET /placemat/v1/providers, /placemat/v1/consumers); on a plain OpenStack Placement
 * endpoint, which has neither, it falls back to the standard API, provider by provider,
 * with a few calls in flight.
 */
import {ApiError, type PlacementClient} from '../../client/client.js'
import {mapLimit} from './providers.js'

export const PLACEMAT_API = '/placemat/v1'

export interface FullInventory {
  total: number
  reserved: number
  min_unit: number
  max_unit: number
  step_size: number
  allocation_ratio: number
}

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
  allocations: Record<string, {resources: Record<string, number>}>
  project_id?: string
  user_id?: string
  consumer_type?: string
  consumer_generation?: number
}

export interface Snapshot {
  /** True when read through placemat's own API. */
  placemat: boolean
  providers: Map<string, ProviderState>
  consumers?: Map<string, ConsumerState>
}

export interface LoadOptions {
  /** false: use only the standard API; true: only placemat's; undefined: try placemat's first. */
  placemat?: boolean
  /** Also read every consumer's allocations. */
  consumers?: boolean
  /** With consumers on the standard API: also read each consumer's project, user, type and generation. */
  consumerOwners?: boolean
  /** Which per-provider parts to read on the standard API (all by default). */
  parts?: Partial<Record<'inventories' | 'usages' | 'traits' | 'aggregates', boolean>>
  concurrency?: number
  onProgress?: (done: number, total: number) => void
}

async function placematProviders(client: PlacementClient): Promise<Map<string, ProviderState>> {
  const body = await client.get<{providers: ProviderState[]}>(`${PLACEMAT_API}/providers`)
  return new Map(body.providers.map((p) => [p.uuid, p]))
}

/** Reads the whole state; `placemat` says which way it was read. */
export async function loadSnapshot(client: PlacementClient, opts: LoadOptions = {}): Promise<Snapshot> {
  let placemat = opts.placemat
  let providers: Map<string, ProviderState> | undefined
  if (placemat !== false) {
    try {
      providers = await placematProviders(client)
      placemat = true
    } catch (err) {
      if (!(err instanceof ApiError && (err.status === 404 || err.status === 405))) throw err
      placemat = false
    }
  }
  if (placemat && providers) {
    const snap: Snapshot = {placemat: true, providers}
    if (opts.consumers) {
      const body = await client.get<{consumers: ConsumerState[]}>(`${PLACEMAT_API}/consumers`)
      snap.consumers = new Map(body.consumers.map((c) => [c.uuid, c]))
    }
    return snap
  }
  return loadStandard(client, opts)
}

/** The same structure from the standard Placement API (one list, then a few GETs per provider). */
async function loadStandard(client: PlacementClient, opts: LoadOptions): Promise<Snapshot> {
  const parts = {inventories: true, usages: true, traits: true, aggregates: true, ...opts.parts}
  const {resource_providers: list} = await client.get<{
    resource_providers: {uuid: string; name: string; generation: number; parent_provider_uuid?: string | null; root_provider_uuid?: string}[]
  }>('/resource_providers')
  const perProvider = Object.values(parts).filter(Boolean).length + (opts.consumers ? 1 : 0)
  let done = 0
  let total = list.length * perProvider
  const tick = () => opts.onProgress?.(++done, total)
  const get = async (path: string): Promise<any> => {
    const body = await client.get(path)
    tick()
    return body
  }
  const providers = new Map<string, ProviderState>()
  const consumers = new Map<string, ConsumerState>()
  await mapLimit(list, opts.concurrency ?? 16, async (p) => {
    const base = `/resource_providers/${p.uuid}`
    const [inv, use, tr, ag, al] = await Promise.all([
      parts.inventories ? get(`${base}/inventories`) : undefined,
      parts.usages ? get(`${base}/usages`) : undefined,
      parts.traits ? get(`${base}/traits`) : undefined,
      parts.aggregates ? get(`${base}/aggregates`) : undefined,
      opts.consumers ? get(`${base}/allocations`) : undefined,
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
    for (const [consumer, a] of Object.entries((al?.allocations ?? {}) as Record<string, {resources: Record<string, number>}>)) {
      let c = consumers.get(consumer)
      if (!c) consumers.set(consumer, (c = {uuid: consumer, allocations: {}}))
      c.allocations[p.uuid] = {resources: a.resources}
    }
  })
  // Keep the order of the provider list (mapLimit finishes out of order).
  const ordered = new Map(list.filter((p) => providers.has(p.uuid)).map((p) => [p.uuid, providers.get(p.uuid)!]))
  const snap: Snapshot = {placemat: false, providers: ordered}
  if (opts.consumers) {
    if (opts.consumerOwners) {
      total += consumers.size
      await mapLimit([...consumers.values()], opts.concurrency ?? 16, async (c) => {
        const body = await get(`/allocations/${encodeURIComponent(c.uuid)}`)
        c.project_id = body.project_id
        c.user_id = body.user_id
        c.consumer_type = body.consumer_type
        c.consumer_generation = body.consumer_generation
      })
    }
    snap.consumers = consumers
  }
  return snap
}

/** Placement's capacity: int((total - reserved) * allocation_ratio). */
export const capacityOf = (inv: Partial<FullInventory> & {total: number}) =>
  Math.trunc((inv.total - (inv.reserved ?? 0)) * (inv.allocation_ratio ?? 1))
