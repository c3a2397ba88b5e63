/**
 * Soft topology affinity for candidates (placemat's near/far): the candidates ordered by
 * how close their hosts are to a consumer's, then cut to `limit`.
 */
import {byCloseness, consumerPlacement, placementOf} from '../affinity.js'
import type {State} from '../state.js'
import type {CandidateResult} from './engine.js'

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
  const kept = limit !== undefined ? sorted.slice(0, limit) : sorted
  if (kept.length === result.allocationRequests.length) return {...result, allocationRequests: kept}
  const used = new Set<string>()
  const roots = new Set<string>()
  for (const ar of kept) {
    for (const uuid of ar.allocations.keys()) {
      used.add(uuid)
      const p = s.providers.get(uuid)
      if (p) roots.add(p.root)
    }
  }
  const providerSummaries = result.providerSummaries.filter((p) => (nested ? roots.has(p.rootUuid) : used.has(p.uuid)))
  return {...result, allocationRequests: kept, providerSummaries}
}
