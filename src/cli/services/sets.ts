/**
 * The trait and aggregate sets of a provider: read with the provider generation, change,
 * write back (PUT .../traits or .../aggregates with resource_provider_generation), and run
 * again on a concurrent update so that "add" and "remove" compose with other writers.
 */
import type {PlacementClient} from '../../client/client.js'
import {resolveProvider} from './providers.js'
import {retryOnConcurrentUpdate} from './retry.js'

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
  return (await updateProviderSet(client, p.uuid, 'traits', (cur) => cur.filter((t) => !traits.includes(t)))) as SetBody & {traits: string[]}
}
