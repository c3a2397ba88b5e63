/**
 * Reading a cloud through Placement's standard API only: one provider list, then a few
 * GETs per provider (or per aggregate), with a bounded number of calls in flight.
 */
import {ApiError, type PlacementClient} from '../../client/client.js'
import {DISABLED_TRAIT, SHARES_VIA_AGGREGATE} from '../../core/host.js'
import type {Inventory} from '../../core/state/state.js'
import type {ConsumerRecord, ListedProvider, ProviderRecord} from '../../core/wire.js'
import {mapLimit} from '../../client/map-limit.js'
import type {CloudView, LoadOptions} from './backend.js'

export async function listProviders(client: PlacementClient, query?: Record<string, string>): Promise<ListedProvider[]> {
  return (await client.get<{resource_providers: ListedProvider[]}>('/resource_providers', {query})).resource_providers
}

/**
 * The providers that carry COMPUTE_STATUS_DISABLED (hosts out of service), in one call; none
 * where the endpoint cannot be asked (before microversion 1.18, or a Placement without the trait).
 */
export async function disabledProviders(client: PlacementClient): Promise<Set<string>> {
  try {
    return new Set((await listProviders(client, {required: DISABLED_TRAIT})).map((p) => p.uuid))
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) return new Set()
    throw err
  }
}

/**
 * The providers that share their inventory through aggregates (MISC_SHARES_VIA_AGGREGATE), in
 * one call; none where the endpoint cannot be asked (as disabledProviders).
 */
export async function sharingProviders(client: PlacementClient): Promise<Set<string>> {
  try {
    return new Set((await listProviders(client, {required: SHARES_VIA_AGGREGATE})).map((p) => p.uuid))
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) return new Set()
    throw err
  }
}

/** Members of each aggregate (GET /resource_providers?member_of=UUID), a few calls in flight. */
export async function membersOf(
  client: PlacementClient,
  aggs: string[],
  concurrency: number,
  progress?: () => void,
): Promise<Map<string, string[]>> {
  const lists = await mapLimit(aggs, concurrency, async (agg) => {
    const list = await listProviders(client, {member_of: agg})
    progress?.()
    return list.map((p) => p.uuid)
  })
  return new Map(aggs.map((a, i) => [a, lists[i]]))
}

/** The whole cloud from the standard API, in the shape placemat's bulk reads give. */
export async function loadStandard(client: PlacementClient, opts: LoadOptions = {}): Promise<CloudView> {
  const parts = {inventories: true, usages: true, traits: true, aggregates: true, ...opts.parts}
  const list = await listProviders(client, opts.inTree ? {in_tree: opts.inTree} : undefined)
  const perProvider = Object.values(parts).filter(Boolean).length + (opts.consumers ? 1 : 0)
  let done = 0
  let total = list.length * perProvider
  const get = async <T>(path: string): Promise<T> => {
    const body = await client.get<T>(path)
    opts.onProgress?.(++done, total)
    return body
  }
  const providers = new Map<string, ProviderRecord>()
  const consumers = new Map<string, ConsumerRecord>()
  await mapLimit(list, opts.concurrency ?? 16, async (p) => {
    const base = `/resource_providers/${p.uuid}`
    const [inv, use, tr, ag, al] = await Promise.all([
      parts.inventories ? get<{inventories: Record<string, Inventory>}>(`${base}/inventories`) : undefined,
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
  const view: CloudView = {providers: ordered}
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
