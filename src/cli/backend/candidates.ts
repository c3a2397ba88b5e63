/**
 * Asking for allocation candidates: a search of Placement's own parameters goes to the route
 * every endpoint serves (no backend need be chosen for it, which costs a request); anything
 * more to the backend. And the work the command line does itself where the endpoint does not:
 * judging a --groups file's placement groups, ordering by closeness on the racks a --layout
 * file names, and then the cut to the limit.
 */
import type {PlacementClient} from '../../client/client.js'
import {byCloseness} from '../../core/affinity.js'
import {forGroups} from '../../core/candidates/group-fit.js'
import type {State} from '../../core/state/state.js'
import type {Query} from '../candidates/query.js'
import type {CandidatesBody} from '../candidates/search.js'
import type {CandidateOrder, CandidatesAnswer, CandidatesAsk, Endpoint} from './backend.js'

export const PLACEMENT_CANDIDATES = '/allocation_candidates'

/** The candidates `ask` finds, from Placement's route when it asks nothing more of it. */
export async function candidatesAt(endpoint: Endpoint, ask: CandidatesAsk): Promise<CandidatesAnswer> {
  if (ask.order || ask.group !== undefined || ask.consumer !== undefined) return (await endpoint.backend()).candidates(ask)
  return askCandidates(endpoint.client, ask, {path: PLACEMENT_CANDIDATES})
}

/** What a backend leaves to the command line. */
export interface WorkHere {
  /** The route asked: Placement's, or placemat's with its own parameters (`extra`). */
  path: string
  extra?: Query
  /** The State holding the placement groups to judge the candidates by here. */
  groups?: Promise<State>
  /** The order to sort them in here. */
  order?: CandidateOrder
}

/** Asks `path` and does `here`'s work on the answer; what is judged or ordered here is cut here. */
export async function askCandidates(client: PlacementClient, ask: CandidatesAsk, here: WorkHere): Promise<CandidatesAnswer> {
  const limit = ask.query.limit === undefined ? undefined : Number(ask.query.limit.at(-1))
  const cutHere = limit !== undefined && (here.groups !== undefined || here.order !== undefined)
  const query: Query = {...ask.query}
  if (cutHere) delete query.limit
  Object.assign(query, here.extra)
  const body = await client.get<CandidatesBody>(here.path, {query})
  let ars = body.allocation_requests
  if (here.groups) ars = forGroups(await here.groups, ars, (ar) => Object.keys(ar.allocations), {consumer: ask.consumer, group: ask.group})
  if (here.order) ars = byCloseness(ars, here.order.place.of(body), await here.order.place.anchor(), here.order.direction)
  if (cutHere && ars.length > limit) ars = ars.slice(0, limit)
  if (ars !== body.allocation_requests) body.allocation_requests = ars
  return {body, query, path: here.path}
}
