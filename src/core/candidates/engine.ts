/**
 * The allocation-candidates engine: Placement 8.0.0's GET /allocation_candidates search
 * (placement/objects/allocation_candidate.py, research_context.py, rp_candidates.py) over the
 * in-memory State, plus the provider filter of GET /resource_providers.
 *
 * How Placement searches, and how this engine mirrors it:
 *  - Each request group is searched on its own. A suffixed (granular) group, or any group when
 *    the deployment has neither provider trees nor sharing providers, is satisfied by one
 *    provider that has every requested class, trait and aggregate ("single path"). The
 *    unsuffixed group otherwise picks one provider per resource class among the providers of
 *    one tree plus the sharing providers associated with that tree ("multi path"); its required
 *    traits must be covered by the union of the chosen providers' traits and none of them may
 *    have a forbidden trait.
 *  - Every per-group result is keyed by an "anchor": the root of the tree it belongs to; a
 *    sharing provider (trait MISC_SHARES_VIA_AGGREGATE) also anchors at the root of every
 *    provider that shares one of its aggregates. Candidates are the products, per anchor, of one
 *    result from each group, filtered by group_policy=isolate (granular groups on distinct
 *    providers), same_subtree (one of the group providers is an ancestor-or-self of the others)
 *    and the combined capacity/max_unit of amounts that land on the same provider and class.
 *    Identical candidates from different anchors are returned once.
 *  - provider_summaries: every provider of every tree that contains a provider allocated from
 *    in a returned candidate (below 1.29 with trees: only the providers allocated from).
 *
 * Placement quirks reproduced: a resourceless group with neither required traits nor member_of
 * matches nothing and ignores in_tree; traits of the unsuffixed group are checked on the union
 * of the providers it uses (root traits do not flow down); an unsuffixed result made of sharing
 * providers only is kept under a single anchor (see SoleAnchor); max_unit and capacity are
 * re-checked on amounts summed across groups but min_unit/step_size are not.
 * Not reproduced (Placement's answer there depends on Python's hash seed or is a 500): amounts
 * corrupted by in-place consolidation when group_policy is absent or isolate and the unsuffixed
 * group and a granular group take the same class from the same provider (we return the true
 * sums); KeyError 500s with sharing providers that are not tree roots.
 *
 * Speed: an index of the providers (typed arrays of capacities, tree layout, lazy sharing
 * anchors and summaries) is cached per State in a WeakMap, revalidated cheaply when only usages
 * changed. Candidates are enumerated lazily, depth first per anchor with incremental pruning,
 * and the enumeration stops as soon as `limit` (or maxCandidates) distinct candidates exist
 * when the answer does not depend on the rest. Such a limited search without sharing providers
 * does not even search the groups over the whole cloud: it prepares them tree by tree, in the
 * eager search's anchor order, only for the trees it enumerates (walkAnchors, anchorLists).
 *
 * Layout: this file picks a strategy (findCandidates) and re-exports the public names.
 * provider-index.ts holds the index, provider-filter.ts the per-provider filters (and
 * filterProviders), group-search.ts / tree-search.ts the per-group search (eager / tree by
 * tree), plan.ts and anchor-enum.ts the combination of groups into candidates, sole-anchor.ts
 * and python-set.ts the one-anchor quirk, strategies/ the four ways of enumerating anchors,
 * summaries.ts and slots.ts the shape of the result; types.ts the public types.
 */
import type {State} from '../state/state.js'
import {namesKnown, prepareGroups} from './group-search.js'
import {planEnumeration} from './plan.js'
import {rootAnchors} from './provider-filter.js'
import {getIndex} from './provider-index.js'
import type {CandidateRequest} from './request.js'
import {slotsOf, withSlots} from './slots.js'
import {SoleAnchor} from './sole-anchor.js'
import {enumerateBreadthFirst} from './strategies/breadth-first.js'
import {enumerateDepthFirst} from './strategies/depth-first.js'
import {enumerateLone} from './strategies/lone.js'
import type {Search} from './strategies/search.js'
import {CandidateSink} from './strategies/sink.js'
import {enumerateTreeByTree} from './strategies/tree-by-tree.js'
import {providerSummaries} from './summaries.js'
import type {CandidateOptions, CandidateResult} from './types.js'

export type {AllocationRequest, CandidateOptions, CandidateResult, ProviderSummary, SummaryResource} from './types.js'
export {allocationRequestOf, candidateSlots, type CandidateSlots} from './slots.js'
export {dropIndex} from './provider-index.js'
export {filterProviders} from './provider-filter.js'

/**
 * GET /allocation_candidates: every allocation request satisfying `req`, with the provider
 * summaries Placement returns for them. Throws PlacementError(400) for unknown resource classes
 * ("Invalid resource class in resources parameter: ...") and traits ("No such trait(s): X.").
 */
export function findCandidates(state: State, req: CandidateRequest, opts: CandidateOptions = {}): CandidateResult {
  const ix = getIndex(state)
  const requestedClasses = new Set<string>()
  for (const g of req.groups) for (const rc of g.resources.keys()) requestedClasses.add(rc)
  const none: CandidateResult = {allocationRequests: [], providerSummaries: [], requestedClasses}
  if (!req.groups.length) return none
  const nestedAware = req.nestedAware ?? true
  const randomize = !!opts.randomize
  const limit = req.limit && req.limit > 0 ? req.limit : undefined
  const maxCand = opts.maxCandidates && opts.maxCandidates > 0 ? opts.maxCandidates : Infinity
  // Summaries below 1.29 (with trees) depend on every candidate, not only the returned ones.
  const fullSetNeeded = randomize || (!nestedAware && ix.hasTrees)
  const target = Math.min(maxCand, limit !== undefined && !fullSetNeeded ? limit : Infinity)
  const anchorOk = rootAnchors(ix, req)
  if (anchorOk === false) return none

  // A lone single-path group needs no merging: scan only as far as needed.
  const breadthFirst = opts.strategy === 'breadth-first' && maxCand !== Infinity
  const lone = req.groups.length === 1 && !breadthFirst && (req.groups[0].suffix !== '' || (!ix.anySharing && !ix.hasTrees))
  const excludeNested = !nestedAware && ix.hasTrees
  // A limited search without sharing providers prepares the groups tree by tree (see
  // walkAnchors), provided no group would stop the eager search with a 400.
  const lazy = !lone && !breadthFirst && target !== Infinity && !ix.anySharing && !excludeNested && namesKnown(state, req.groups)
  const preps = prepareGroups(ix, req.groups, anchorOk, lazy, lone ? {maxProviders: target} : null)
  if (!preps) return none

  const plan = planEnumeration(preps, req)
  if (!lazy && plan.multiLast >= 0 && preps.length > 1) plan.sole = SoleAnchor.make(ix, preps.find((p) => p.multi)!, anchorOk)
  const sink = new CandidateSink(ix, plan, excludeNested)
  const search: Search = {ix, plan, anchorOk, target, isolate: req.groupPolicy === 'isolate', sink}
  const enumerate = lone ? enumerateLone : lazy ? enumerateTreeByTree : breadthFirst ? enumerateBreadthFirst : enumerateDepthFirst
  try {
    enumerate(search)
  } catch (e) {
    ix.acc.fill(0) // keep the shared scratch clean for the next request
    ix.isoCount.fill(0)
    throw e
  }

  const picked = limitResults(sink.count, limit, randomize)
  const summaries = providerSummaries(ix, plan, sink.found, sink.count, picked, excludeNested)
  // Slot form of the returned candidates; AllocationRequest objects are built only if asked for.
  return withSlots({providerSummaries: summaries, requestedClasses}, slotsOf(ix, plan, sink.found, picked))
}

/** limit_results: the numbers of the candidates returned, in output order. */
function limitResults(count: number, limit: number | undefined, randomize: boolean): number[] {
  let picked: number[]
  const all = Array.from({length: count}, (_, i) => i)
  if (limit !== undefined && limit < count) {
    if (randomize) {
      shuffle(all)
      picked = all.slice(0, limit)
    } else picked = all.slice(0, limit)
  } else {
    picked = all
    if (randomize) shuffle(picked)
  }
  return picked
}

function shuffle<T>(a: T[]): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    const t = a[i]
    a[i] = a[j]
    a[j] = t
  }
}
