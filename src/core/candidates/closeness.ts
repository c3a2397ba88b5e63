/**
 * Soft topology affinity for candidates (placemat's near/far): the candidates ordered by
 * how close their hosts are to a consumer's, then cut to `limit`.
 */
import {byCloseness, consumerPlacement, placementOf} from '../affinity.js'
import type {State} from '../state/state.js'
import type {CandidateResult} from './engine.js'
import {keepCandidates} from './kept.js'

/** Sorts (stably) and cuts the candidates; summaries narrowed to what the kept candidates use. */
export function orderByCloseness(
  s: State,
  result: CandidateResult,
  consumer: string,
  direction: 'near' | 'far',
  limit: number | undefined,
  nested: boolean,
): CandidateResult {
  const anchor = consumerPlacement(s, consumer)
  const sorted = byCloseness(result.allocationRequests, (ar) => placementOf(s, ar.allocations.keys()), anchor, direction)
  return keepCandidates(s, result, sorted, limit, nested)
}
