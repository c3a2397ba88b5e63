/**
 * Candidates on plain Placement, which keeps no placement groups and no names of racks: its
 * GET /allocation_candidates, with the --groups file's groups judged here and closeness worked
 * out on the --layout file's racks; why a search finds none, decided by the core on a snapshot
 * read through the standard API (paid only when a search comes back empty); providers looked
 * up one by one.
 */
import {mapLimit} from '../../client/map-limit.js'
import {parseCandidateRequest} from '../../core/candidates/request.js'
import {whyNoCandidates, type NoCandidates} from '../../core/candidates/why.js'
import type {ListedProvider} from '../../core/wire.js'
import {usageError} from '../failure.js'
import {NO_GROUPS_HERE} from '../groups/groups.js'
import {getProvider} from './provider-lookup.js'
import type {Backend, CandidatesAnswer, CandidatesAsk} from './backend.js'
import {askCandidates, PLACEMENT_CANDIDATES} from './candidates.js'

/** The newest microversion the command line speaks, for a query sent at "latest". */
const LATEST: readonly [number, number] = [1, 39]

/** Lookups in flight at once. */
const CONCURRENCY = 16

export function plainCandidates(backend: Backend, ask: CandidatesAsk): Promise<CandidatesAnswer> {
  if (ask.group !== undefined && !ask.files?.groups) throw usageError(`--group ${ask.group}: ${NO_GROUPS_HERE}`)
  // The groups of the file, when the candidates are for a member (or a new one) of some.
  const judged = ask.files?.groups !== undefined && (ask.group !== undefined || ask.consumer !== undefined)
  const groups = judged ? backend.stateWithGroups(ask.files!) : undefined
  groups?.catch(() => undefined)
  return askCandidates(backend.client, ask, {path: PLACEMENT_CANDIDATES, groups, order: ask.order})
}

/** The core's answer on a snapshot, with the --groups file's groups and the --layout file's racks when given. */
export async function plainWhy(backend: Backend, ask: CandidatesAsk): Promise<NoCandidates | null> {
  const files = ask.files ?? {}
  const state = await backend.stateWithGroups(files)
  const m = /^(\d+)\.(\d+)$/.exec(backend.client.version)
  const request = parseCandidateRequest(new Map(Object.entries(ask.query)), m ? [Number(m[1]), Number(m[2])] : LATEST)
  return whyNoCandidates(state, request, files.groups ? {consumer: ask.consumer, group: ask.group} : {})
}

/** GET /resource_providers/{uuid} for each, a few calls in flight. */
export async function providersOneByOne(backend: Backend, uuids: string[]): Promise<ListedProvider[]> {
  const records = await mapLimit(uuids, CONCURRENCY, (uuid) => getProvider(backend.client, uuid))
  return records.filter((p): p is ListedProvider => p !== null)
}
