/** Traits as the trait commands read, make and delete them. */
import type {PlacementClient} from '../../client/client.js'

/** The traits (Placement's body), filtered as GET /traits filters them. */
export function listTraits(client: PlacementClient, filter: {name?: string; associated?: boolean} = {}): Promise<{traits: string[]}> {
  return client.get('/traits', {query: {name: filter.name, associated: filter.associated ? 'true' : undefined}})
}

/** Whether the trait exists: nothing when it does, a 404 when it does not. */
export async function checkTrait(client: PlacementClient, name: string): Promise<void> {
  await client.request('GET', `/traits/${encodeURIComponent(name)}`)
}

/** Creates each trait in turn (PUT: one that exists stays); each name, and whether this call created it. */
export async function createTraits(client: PlacementClient, names: string[]): Promise<Array<{name: string; created: boolean}>> {
  const rows: Array<{name: string; created: boolean}> = []
  for (const name of names) {
    const res = await client.request('PUT', `/traits/${encodeURIComponent(name)}`)
    rows.push({name, created: res.status === 201})
  }
  return rows
}

/** Deletes each trait in turn (stopping at the first refused). */
export async function deleteTraits(client: PlacementClient, names: string[]): Promise<void> {
  for (const name of names) await client.delete(`/traits/${encodeURIComponent(name)}`)
}
