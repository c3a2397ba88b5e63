/** Candidates reordered or filtered after the search, then cut to `limit`. */
import type {State} from '../state/state.js'
import type {CandidateResult} from './engine.js'

type Request = CandidateResult['allocationRequests'][number]

/** `result` with `requests` (some of its own, in a new order) cut to `limit`; summaries narrowed to what the kept ones use. */
export function keepCandidates(
  s: State,
  result: CandidateResult,
  requests: Request[],
  limit: number | undefined,
  nested: boolean,
): CandidateResult {
  const kept = limit !== undefined ? requests.slice(0, limit) : requests
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
