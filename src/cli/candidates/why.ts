/**
 * Why a search found no candidate, in one line. The core decides it (core/candidates/why.ts):
 * placemat answers GET /placemat/v1/allocation_candidates/why with the query the search sent
 * (a daemon, or --db in process); on plain Placement the same function runs here on a snapshot
 * of the cloud read through the standard API (every provider's inventories, usages, traits and
 * aggregates: paid only when a search comes back empty), with the --groups file's groups and
 * the --layout file's racks, rows and rooms when given.
 */
import {parseCandidateRequest} from '../../core/candidates/request.js'
import {whyNoCandidates, type NoCandidates} from '../../core/candidates/why.js'
import {layoutNodes} from '../../core/topology.js'
import {loadState, type Endpoint} from '../backend/backend.js'
import {layoutBody, readLayoutFile} from '../topology/layout-file.js'
import type {CandidateFlagValues} from './flags.js'
import {placementGroupOf} from './query.js'
import type {CandidateSearch} from './search.js'

/** The query parameters that are placemat's, not Placement's. */
const PLACEMAT_PARAMS = ['near', 'far', 'group', 'consumer']

/** The newest microversion the command line speaks, for a query sent at "latest". */
const LATEST: readonly [number, number] = [1, 39]

async function explanation(
  endpoint: Endpoint,
  search: CandidateSearch,
  flags: CandidateFlagValues,
  consumer?: string,
): Promise<NoCandidates | null> {
  const backend = await endpoint.backend()
  if (backend.placemat) {
    const r = await backend.placemat.why(search.query)
    return r.why === null ? null : {why: r.why, steps: r.steps}
  }
  const group = placementGroupOf(flags.group)
  const state = flags.groups
    ? await (await import('../groups/file-groups.js')).groupsSnapshot(backend, flags.groups, flags.layout)
    : await loadState(backend, {
        changeable: true,
        topology: flags.layout ? [...layoutNodes(layoutBody(readLayoutFile(flags.layout))).values()] : [],
      })
  const params = new Map(Object.entries(search.query).filter(([k]) => !PLACEMAT_PARAMS.includes(k)))
  const m = /^(\d+)\.(\d+)$/.exec(endpoint.client.version)
  const request = parseCandidateRequest(params, m ? [Number(m[1]), Number(m[2])] : LATEST)
  return whyNoCandidates(state, request, flags.groups ? {consumer, group} : {})
}

/**
 * Why `search` came back empty, or undefined when that cannot be said (the request's own
 * candidates exist and only the command line's checks of --same/--different left them out, or
 * the explanation could not be read: it never hides the answer it explains).
 */
export async function whyEmpty(
  endpoint: Endpoint,
  search: CandidateSearch,
  flags: CandidateFlagValues,
  consumer?: string,
): Promise<string | undefined> {
  try {
    const found = await explanation(endpoint, search, flags, consumer)
    if (found) return found.why
    if (search.rules.length) return 'the candidates found all break the --same/--different rules'
  } catch {
    // Best effort: the search's own answer stands without it.
  }
  return undefined
}
