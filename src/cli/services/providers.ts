/**
 * Providers as the provider commands make, change, show and delete them (those named are looked
 * up by backend/provider-lookup.ts), and their aggregates with the names placemat keeps.
 */
import type {PlacementClient} from '../../client/client.js'
import {listedAggregates} from '../../core/aggregate-names.js'
import type {Backend, Endpoint} from '../backend/backend.js'
import {resolveProvider, resolveProviderUuid} from '../backend/provider-lookup.js'

/**
 * The keys of a provider record as provider create and set print it (Placement's, without
 * links); an older microversion's record has no parent or root, printed empty.
 */
export const PROVIDER_KEYS = ['uuid', 'name', 'generation', 'parent_provider_uuid', 'root_provider_uuid']

/**
 * A provider's aggregates in listing order, each with how it is shown beside its uuid: "rack k1"
 * for placemat's racks, rows and rooms, the name an apply file gave for others; null where there
 * is none (always on plain Placement, which keeps no names).
 */
export async function providerAggregates(backend: Backend, uuids: string[]): Promise<Array<{uuid: string; label: string | null}>> {
  return listedAggregates(uuids, (await backend.namedAggregates?.()) ?? [])
}

/** Creates a provider (`parent` a name or uuid); Placement's answer. */
export async function createProvider(
  client: PlacementClient,
  spec: {name: string; uuid?: string; parent?: string},
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {name: spec.name}
  if (spec.uuid) body.uuid = spec.uuid
  if (spec.parent) body.parent_provider_uuid = await resolveProviderUuid(client, spec.parent)
  return client.post('/resource_providers', body)
}

/** Renames the provider `ref` names and/or gives it another parent (null: none); Placement's answer. */
export async function updateProvider(
  client: PlacementClient,
  ref: string,
  change: {name?: string; parent?: string | null},
): Promise<Record<string, unknown>> {
  const p = await resolveProvider(client, ref)
  const body: Record<string, unknown> = {name: change.name ?? p.name}
  if (change.parent !== undefined)
    body.parent_provider_uuid = change.parent === null ? null : await resolveProviderUuid(client, change.parent)
  return client.put(`/resource_providers/${p.uuid}`, body)
}

/** Deletes the providers `refs` name, one after the other (stopping at the first refused). */
export async function deleteProviders(client: PlacementClient, refs: string[]): Promise<void> {
  for (const ref of refs) {
    const p = await resolveProvider(client, ref)
    await client.delete(`/resource_providers/${p.uuid}`)
  }
}

export type ProviderAllocations = Record<string, {resources: Record<string, number>; consumer_generation?: number}>

/** The provider `ref` names as Placement shows it, with its allocations (by consumer) when asked. */
export async function showProvider(
  client: PlacementClient,
  ref: string,
  opts: {allocations?: boolean} = {},
): Promise<{record: Record<string, unknown>; uuid: string; allocations?: ProviderAllocations}> {
  const p = await resolveProvider(client, ref)
  const record: Record<string, unknown> = {...p}
  let allocations: ProviderAllocations | undefined
  if (opts.allocations) {
    allocations = (await client.get(`/resource_providers/${p.uuid}/allocations`)).allocations
    record.allocations = allocations
  }
  return {record, uuid: p.uuid, allocations}
}

/** The provider's aggregates, each with its name where placemat has one (see providerAggregates). */
export async function labelledAggregates(endpoint: Endpoint, uuid: string): Promise<Array<{uuid: string; label: string | null}>> {
  const aggregates = await endpoint.client.get<{aggregates: string[]}>(`/resource_providers/${uuid}/aggregates`)
  return providerAggregates(await endpoint.backend(), aggregates.aggregates)
}
