/**
 * Candidates for a new member of a placement group (placemat's `group=`): a hard group keeps
 * only the candidates its rule allows with every member where it is; a soft one orders them,
 * those that keep the rule first (an affinity group: the nearest to its members first, as
 * `near` does). Cut to `limit` afterwards.
 */
import {byCloseness, placementOf} from '../affinity.js'
import {requireGroup} from '../group-writes.js'
import {newcomerJudge, storedHosts} from '../groups.js'
import type {State} from '../state.js'
import type {CandidateResult} from './engine.js'
import {keepCandidates} from './kept.js'

/** The candidates of `result` for a new member of group `name`, cut to `limit`. */
export function fitToGroup(s: State, result: CandidateResult, name: string, limit: number | undefined, nested: boolean): CandidateResult {
  return keepCandidates(s, result, forGroup(s, result.allocationRequests, (ar) => ar.allocations.keys(), name), limit, nested)
}

/**
 * Any list of candidates (each a set of providers), for a new member of group `name`: a hard
 * group's rule filters it, a soft one's orders it. Also what the command line runs on a
 * snapshot for plain Placement's candidates.
 */
export function forGroup<T>(s: State, items: T[], providersOf: (item: T) => Iterable<string>, name: string): T[] {
  const group = requireGroup(s, name)
  const judge = newcomerJudge(s, group)
  const breaks = (item: T) => judge(providersOf(item)).length
  if (!group.soft) return items.filter((item) => breaks(item) === 0)
  if (group.policy === 'affinity' || group.policy === 'anti-affinity') {
    const members = placementOf(s, [...group.members].flatMap((m) => storedHosts(s, m)))
    // Those that keep the rule first, then by closeness (stable): the nearest to the members
    // for affinity, the farthest for anti-affinity.
    const keeping = items.filter((item) => breaks(item) === 0)
    const kept = new Set(keeping)
    const ordered = [...keeping, ...items.filter((item) => !kept.has(item))]
    return byCloseness(ordered, (item) => placementOf(s, providersOf(item)), members, group.policy === 'affinity' ? 'near' : 'far')
  }
  const scored = items.map((item, i) => ({item, i, n: breaks(item)}))
  scored.sort((a, b) => a.n - b.n || a.i - b.i)
  return scored.map((x) => x.item)
}
