/**
 * Where a placemat daemon's pages are, for the command that talks to it: the address requests go
 * to (its base path included, as given: `--url https://cloud.example/placement`) and the token
 * they carry. Only a daemon serves pages: a `--db` file is worked on in process, and plain
 * Placement has none.
 */
import {usageError} from '../failure.js'
import type {Endpoint} from './backend.js'
import {LocalTransport} from './local-transport.js'

export async function pageAddress(endpoint: Endpoint): Promise<{url: string; token: string | undefined}> {
  const transport = endpoint.client.transport
  if (transport instanceof LocalTransport)
    throw usageError(`--db works on ${transport.description} in this process: the map is served by a daemon (placemat daemon start)`)
  const backend = await endpoint.backend()
  if (backend.kind !== 'placemat') throw usageError(`${transport.description} is not a placemat daemon: only placemat serves the map`)
  const address = await transport.address?.()
  if (!address) throw usageError(`${transport.description} has no address to give a browser`)
  return address
}
