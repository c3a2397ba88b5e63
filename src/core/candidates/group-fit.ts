/**
 * Candidates for a consumer under the rules of its placement groups (placemat's `group=` and
 * `consumer=`): the groups it is a member of, and the one it joins. A hard group keeps only the
 * candidates its rule allows with every member where it is (the consumer where the candidate
 * is); a soft one orders them, those that keep the rule first (an affinity group: the nearest to
 * its members first, as `near` does). Cut to `limit` afterwards.
 */
import {byCloseness, placementOf} from '../affinity.js'
import {requireGroup} from '../group-writes.js'
import {NEWCOMER, consumerGroups, placementJudge, type Group} from '../groups.js'
import {consumerHosts} from '../host.js'
import type {State} from '../state/state.js'
import type {CandidateResult} from './engine.js'
import {keepCandidates} from './kept.js'

/** Whose rules a candidate list is judged by: the consumer's groups, and a group it joins. */
export interface GroupFit {
  /** The consumer being placed (its groups' rules apply); absent: a newcomer. */
  consumer?: string
  /** A group the consumer joins (its rule applies too). */
  group?: string
}

/** The groups whose rules apply to `fit`, the group it joins checked to exist. */
export function groupsToKeep(s: State, fit: GroupFit): Group[] {
  const joining = fit.group !== undefined ? requireGroup(s, fit.group) : undefined
  return fit.consumer !== undefined ? consumerGroups(s, fit.consumer, joining) : joining ? [joining] : []
}

/** The candidates of `result` for the consumer of `fit`, cut to `limit`. */
export function fitToGroups(s: State, result: CandidateResult, fit: GroupFit, limit: number | undefined, nested: boolean): CandidateResult {
  return keepCandidates(
    s,
    result,
    forGroups(s, result.allocationRequests, (ar) => ar.allocations.keys(), fit),
    limit,
    nested,
  )
}

/** The candidates of `result` for a new member of group `name`, cut to `limit`. */
export const fitToGroup = (s: State, result: CandidateResult, name: string, limit: number | undefined, nested: boolean) =>
  fitToGroups(s, result, {group: name}, limit, nested)

/**
 * Any list of candidates (each a set of providers), for the consumer of `fit`: hard groups'
 * rules filter it, soft ones' order it. Also what the command line runs on a snapshot for
 * plain Placement's candidates.
 */
export function forGroups<T>(s: State, items: T[], providersOf: (item: T) => Iterable<string>, fit: GroupFit): T[] {
  const groups = groupsToKeep(s, fit)
  if (groups.length === 0) return items
  const consumer = fit.consumer ?? NEWCOMER
  const judge = placementJudge(s, consumer, groups)
  const hard = groups.filter((g) => !g.soft)
  const soft = groups.filter((g) => g.soft)
  const judged = items.map((item, i) => {
    const breaches = judge(providersOf(item))
    return {item, i, hard: breaches.some((b) => !b.soft), soft: breaches.filter((b) => b.soft).length}
  })
  const kept = hard.length ? judged.filter((j) => !j.hard) : judged
  if (soft.length === 0) return kept.map((j) => j.item)
  const one = soft.length === 1 ? soft[0] : undefined
  if (one && (one.policy === 'affinity' || one.policy === 'anti-affinity')) {
    const members = placementOf(
      s,
      [...one.members].filter((m) => m !== consumer).flatMap((m) => consumerHosts(s, m)),
    )
    // Those that keep the rule first, then by closeness (stable): the nearest to the members
    // for affinity, the farthest for anti-affinity.
    const ordered = [...kept.filter((j) => j.soft === 0), ...kept.filter((j) => j.soft > 0)].map((j) => j.item)
    return byCloseness(ordered, (item) => placementOf(s, providersOf(item)), members, one.policy === 'affinity' ? 'near' : 'far')
  }
  return [...kept].sort((a, b) => a.soft - b.soft || a.i - b.i).map((j) => j.item)
}

/** forGroups for a new member of group `name`. */
export const forGroup = <T>(s: State, items: T[], providersOf: (item: T) => Iterable<string>, name: string): T[] =>
  forGroups(s, items, providersOf, {group: name})
