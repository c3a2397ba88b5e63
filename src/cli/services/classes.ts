/** Resource classes as the class commands read, make and delete them. */
import type {PlacementClient} from '../../client/client.js'

/**
 * Creates each class in turn (POST, a conflict when it exists); with `existOk`, PUT, which
 * leaves one that exists. Each name, and whether this call created it.
 */
export async function createClasses(
  client: PlacementClient,
  names: string[],
  existOk: boolean,
): Promise<Array<{name: string; created: boolean}>> {
  const rows: Array<{name: string; created: boolean}> = []
  for (const name of names) {
    if (existOk) {
      const res = await client.request('PUT', `/resource_classes/${encodeURIComponent(name)}`)
      rows.push({name, created: res.status === 201})
    } else {
      await client.post('/resource_classes', {name})
      rows.push({name, created: true})
    }
  }
  return rows
}

/** Every resource class (Placement's body); only the custom ones with `custom`. */
export async function listClasses(
  client: PlacementClient,
  opts: {custom?: boolean} = {},
): Promise<{resource_classes: Array<{name: string}>} & Record<string, unknown>> {
  const body = await client.get('/resource_classes')
  if (opts.custom) body.resource_classes = body.resource_classes.filter((c: {name: string}) => c.name.startsWith('CUSTOM_'))
  return body
}

/** One resource class (Placement's body; 404 when there is none). */
export function showClass(client: PlacementClient, name: string): Promise<{name: string} & Record<string, unknown>> {
  return client.get(`/resource_classes/${encodeURIComponent(name)}`)
}

/** Deletes each class in turn (stopping at the first refused). */
export async function deleteClasses(client: PlacementClient, names: string[]): Promise<void> {
  for (const name of names) await client.delete(`/resource_classes/${encodeURIComponent(name)}`)
}
