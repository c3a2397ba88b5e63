/**
 * Candidates for a new member of a placement group (placemat's `group=`): a hard group keeps
 * only the candidates its rule allows with every member where it is; a soft one orders them,
 * those that keep the rule first (an affinity group: the nearest to its members first, as
 * `near` does). Cut to `limit` afterwards.
 */
import {byCloseness, emptyPlacement, placementOf, type Placement} from '../affinity.js'
import {requireGroup} from '../group-writes.js'
import {newBreaches, storedHosts, type Group} from '../groups.js'
import type {State} from '../state.js'
import type {CandidateResult} from './engine.js'
import {keepCandidates} from './kept.js'

/** Stands for the consumer being placed: it holds nothing yet, and is in no group. */
const NEWCOMER = '(candidate)'

export function fitToGroup(s: State, result: CandidateResult, name: string, limit: number | undefined, nested: boolean): CandidateResult {
  const group = requireGroup(s, name)
  // Judged as a hard rule, also for a soft group (which then only orders by it).
  const asHard: Group = {...group, soft: false}
  const breaks = (providers: Iterable<string>) =>
    newBreaches(s, {placements: new Map([[NEWCOMER, providers]]), joins: new Map([[name, [NEWCOMER]]]), groups: [asHard]}).length
  const requests = result.allocationRequests
  if (!group.soft) return keepCandidates(s, result, requests.filter((ar) => breaks(ar.allocations.keys()) === 0), limit, nested)
  if (group.policy === 'affinity' || group.policy === 'anti-affinity') {
    const members: Placement = emptyPlacement()
    for (const m of group.members) {
      const p = placementOf(s, storedHosts(s, m))
      for (const level of ['rack', 'row', 'room'] as const) for (const n of p[level]) members[level].add(n)
    }
    const direction = group.policy === 'affinity' ? 'near' : 'far'
    // Closeness first, then (within a band) those that keep the rule at its own level.
    const keeping = requests.filter((ar) => breaks(ar.allocations.keys()) === 0)
    const kept = new Set(keeping)
    const others = requests.filter((ar) => !kept.has(ar))
    const ordered = [...keeping, ...others]
    return keepCandidates(s, result, byCloseness(ordered, (ar) => placementOf(s, ar.allocations.keys()), members, direction), limit, nested)
  }
  const scored = requests.map((ar, i) => ({ar, i, n: breaks(ar.allocations.keys())}))
  scored.sort((a, b) => a.n - b.n || a.i - b.i)
  return keepCandidates(
    s,
    result,
    scored.map((x) => x.ar),
    limit,
    nested,
  )
}
