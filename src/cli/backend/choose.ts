/** Picks the Backend a command talks to; the implementations are loaded only when chosen. */
import {ApiError, type PlacementClient} from '../../client/client.js'
import {PLACEMAT_API, type Backend} from './backend.js'
import {LocalTransport} from './local-transport.js'

/**
 * Which backend `client` reaches: a --db file is placemat; an endpoint is asked once
 * (GET /placemat/v1/health, which needs no token): 404 or 405 means plain Placement.
 */
export async function chooseBackend(client: PlacementClient, opts: {local: boolean}): Promise<Backend> {
  let placemat = opts.local
  if (!placemat) {
    try {
      await client.request('GET', `${PLACEMAT_API}/health`)
      placemat = true
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      // 503: a placemat daemon whose database is down; the command's own calls will say so.
      placemat = !(err.status === 404 || err.status === 405)
    }
  }
  if (placemat && client.transport instanceof LocalTransport)
    return new (await import('./local.js')).LocalPlacematBackend(client, client.transport)
  if (placemat) return new (await import('./placemat.js')).PlacematBackend(client)
  return new (await import('./plain.js')).PlainBackend(client)
}
