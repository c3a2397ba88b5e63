/**
 * The providers a candidates table names: those of the candidates kept (and, for the rack
 * column, their roots), instead of the whole provider list, which a large cloud cannot send in
 * one answer; the backend looks them up (placemat by the hundred, plain Placement one by one).
 */
import type {ListedProvider} from '../../core/wire.js'
import type {Endpoint} from '../backend/backend.js'
import type {CandidatesBody} from './search.js'

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
  const backend = await endpoint.backend()
  for (const p of await backend.providers([...wanted])) found.set(p.uuid, p)
  // Roots the summaries did not give (microversions before 1.29).
  const missing = roots ? [...new Set([...found.values()].map((p) => p.root_provider_uuid ?? p.uuid))].filter((u) => !found.has(u)) : []
  if (missing.length) for (const p of await backend.providers(missing)) found.set(p.uuid, p)
  return found
}
