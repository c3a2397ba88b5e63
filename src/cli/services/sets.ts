/**
 * The trait and aggregate sets of a provider: read with the provider generation, change,
 * write back (PUT .../traits or .../aggregates with resource_provider_generation), and run
 * again on a concurrent update so that "add" and "remove" compose with other writers.
 */
import type {PlacementClient} from '../../client/client.js'
import {resolveProvider} from '../backend/provider-lookup.js'
import {retryOnConcurrentUpdate} from '../backend/retry.js'

export type SetKind = 'traits' | 'aggregates'

/** The tables the set's commands print: the set after the change, one member a line. */
export const setColumns: Record<SetKind, Array<{key: string; header?: string}>> = {
  traits: [{key: 'name'}],
  aggregates: [{key: 'uuid', header: 'aggregate'}],
}

export interface SetBody {
  resource_provider_generation: number
  traits?: string[]
  aggregates?: string[]
}

/**
 * Applies `change` to the provider's current set; writes only when the set differs.
 * Returns the body Placement answered (or the current one when nothing changed).
 */
export async function updateProviderSet(
  client: PlacementClient,
  uuid: string,
  kind: SetKind,
  change: (current: string[]) => string[],
): Promise<SetBody> {
  const path = `/resource_providers/${uuid}/${kind}`
  return retryOnConcurrentUpdate(async () => {
    const current = await client.get<SetBody>(path)
    const before = current[kind] ?? []
    const after = [...new Set(change(before))]
    const same = after.length === before.length && after.every((x) => before.includes(x))
    if (same) return current
    return client.put<SetBody>(path, {[kind]: after, resource_provider_generation: current.resource_provider_generation})
  })
}

/** Removes `traits` (or every trait) from the provider `ref` names; the traits it has after. */
export async function removeTraits(client: PlacementClient, ref: string, traits: string[] | 'all'): Promise<SetBody & {traits: string[]}> {
  const p = await resolveProvider(client, ref)
  if (traits === 'all') {
    await client.delete(`/resource_providers/${p.uuid}/traits`)
    return client.get(`/resource_providers/${p.uuid}/traits`)
  }
  return (await updateProviderSet(client, p.uuid, 'traits', (cur) => cur.filter((t) => !traits.includes(t)))) as SetBody & {
    traits: string[]
  }
}

/** The traits of the provider `ref` names (Placement's body). */
export async function readTraits(client: PlacementClient, ref: string): Promise<SetBody & {traits: string[]}> {
  const p = await resolveProvider(client, ref)
  return client.get(`/resource_providers/${p.uuid}/traits`)
}

/** Adds `traits` to the provider `ref` names, custom ones created first; the traits it has after. */
export async function addTraits(client: PlacementClient, ref: string, traits: string[]): Promise<SetBody & {traits: string[]}> {
  const p = await resolveProvider(client, ref)
  // PUT /traits/CUSTOM_X creates a custom trait (and is a no-op when it exists); standard ones always exist.
  await Promise.all([...new Set(traits.filter((t) => t.startsWith('CUSTOM_')))].map((t) => client.put(`/traits/${encodeURIComponent(t)}`)))
  return (await updateProviderSet(client, p.uuid, 'traits', (cur) => [...cur, ...traits])) as SetBody & {traits: string[]}
}

/** The aggregates of the provider `ref` names (Placement's body). */
export async function readAggregates(client: PlacementClient, ref: string): Promise<SetBody & {aggregates: string[]}> {
  const p = await resolveProvider(client, ref)
  return client.get(`/resource_providers/${p.uuid}/aggregates`)
}

/**
 * Makes `aggregates` the aggregates of the provider `ref` names: at the generation read (and
 * again on a concurrent update), or at `generation` when given (a conflict then is the caller's).
 */
export async function setAggregates(
  client: PlacementClient,
  ref: string,
  aggregates: string[],
  generation?: number,
): Promise<SetBody & {aggregates: string[]}> {
  const p = await resolveProvider(client, ref)
  const body =
    generation === undefined
      ? await updateProviderSet(client, p.uuid, 'aggregates', () => aggregates)
      : await client.put(`/resource_providers/${p.uuid}/aggregates`, {aggregates, resource_provider_generation: generation})
  return body as SetBody & {aggregates: string[]}
}
