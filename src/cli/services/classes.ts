/** Custom resource classes as `class create` makes them. */
import type {PlacementClient} from '../../client/client.js'

/**
 * Creates each class in turn (POST, a conflict when it exists); with `existOk`, PUT, which
 * leaves one that exists. Each name, and whether this call created it.
 */
export async function createClasses(client: PlacementClient, names: string[], existOk: boolean): Promise<Array<{name: string; created: boolean}>> {
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
