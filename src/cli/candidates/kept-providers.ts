/**
 * The providers a candidates table names: those of the candidates kept (and, for the rack
 * column, their roots), instead of the whole provider list, which a large cloud cannot send in
 * one answer. placemat gives them by the hundred (GET /placemat/v1/providers?uuid=...); plain
 * Placement one by one (GET /resource_providers/{uuid}), a few calls in flight.
 */
import {mapLimit} from '../../client/map-limit.js'
import type {ListedProvider} from '../../core/wire.js'
import type {Endpoint, PlacematApi} from '../backend/backend.js'
import {getProvider} from '../services/providers.js'
import type {CandidatesBody} from './search.js'

/** Lookups in flight at once. */
const CONCURRENCY = 16
/** Uuids per placemat call: the URL stays well below a server's 16 KiB of request head. */
const PER_CALL = 200

/** uuid -> provider for every provider of the kept candidates (and their roots when `roots`); one gone meanwhile is left out. */
export async function keptProviders(endpoint: Endpoint, body: CandidatesBody, roots: boolean): Promise<Map<string, ListedProvider>> {
  const wanted = new Set<string>()
  for (const ar of body.allocation_requests) for (const uuid of Object.keys(ar.allocations)) wanted.add(uuid)
  if (roots) {
    for (const uuid of [...wanted]) {
      const root = body.provider_summaries?.[uuid]?.root_provider_uuid
      if (root) wanted.add(root)
    }
  }
  const found = new Map<string, ListedProvider>()
  if (!wanted.size) return found
  const api = (await endpoint.backend()).placemat
  const lookUp = api ? (_: Endpoint, uuids: string[]) => byHundreds(api, uuids) : oneByOne
  for (const p of await lookUp(endpoint, [...wanted])) found.set(p.uuid, p)
  // Roots the summaries did not give (microversions before 1.29).
  const missing = roots ? [...new Set([...found.values()].map((p) => p.root_provider_uuid ?? p.uuid))].filter((u) => !found.has(u)) : []
  if (missing.length) for (const p of await lookUp(endpoint, missing)) found.set(p.uuid, p)
  return found
}

async function oneByOne(endpoint: Endpoint, uuids: string[]): Promise<ListedProvider[]> {
  const records = await mapLimit(uuids, CONCURRENCY, (uuid) => getProvider(endpoint.client, uuid))
  return records.filter((p): p is ListedProvider => p !== null)
}

async function byHundreds(api: PlacematApi, uuids: string[]): Promise<ListedProvider[]> {
  const calls: string[][] = []
  for (let i = 0; i < uuids.length; i += PER_CALL) calls.push(uuids.slice(i, i + PER_CALL))
  const answers = await mapLimit(calls, 4, (part) => api.providers(part))
  return answers.flat()
}
