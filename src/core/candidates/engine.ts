/**
 * The allocation-candidates engine: Placement 8.0.0's GET /allocation_candidates search
 * (placement/objects/allocation_candidate.py, research_context.py, rp_candidates.py) over the
 * in-memory State, plus the provider filter of GET /resource_providers.
 *
 * How Placement searches, and how this file mirrors it:
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
 */
import type {Provider, State} from '../state.js'
import {
  anyProviderInAggSets,
  checkClassNames,
  checkTraitNames,
  hasAnyTrait,
  hasTraitSets,
  inAllAggSets,
  inAnyAgg,
  memberScope,
} from './provider-filter.js'
import {capable, groupShell, prepareGroup, type Prepared} from './group-search.js'
import type {CandidateRequest, RequestGroup} from './request.js'
import {SoleAnchor} from './sole-anchor.js'
import {makePlan, type Plan} from './plan.js'
import {AnchorEnum} from './anchor-enum.js'
import {getIndex, type Index} from './provider-index.js'
import {anchorLists, walkAnchors} from './tree-search.js'
import type {AllocationRequest, CandidateOptions, CandidateResult, ProviderSummary} from './types.js'

export type {AllocationRequest, CandidateOptions, CandidateResult, ProviderSummary, SummaryResource} from './types.js'
export {dropIndex} from './provider-index.js'
export {filterProviders} from './provider-filter.js'

/** With group_policy=isolate: can the granular groups get pairwise distinct providers at all? */
function isolationPossible(plan: Plan, choices: number[][]): boolean {
  const slots: number[] = []
  for (let d = 0; d < plan.S; d++) if (plan.slotIsolate[d]) slots.push(d)
  if (slots.length < 2) return true
  const owner = new Map<number, number>() // provider -> slot
  const tryAssign = (d: number, seen: Set<number>): boolean => {
    for (const p of choices[d]) {
      if (seen.has(p)) continue
      seen.add(p)
      const o = owner.get(p)
      if (o === undefined || tryAssign(o, seen)) {
        owner.set(p, d)
        return true
      }
    }
    return false
  }
  for (const d of slots) if (!tryAssign(d, new Set())) return false
  return true
}

/**
 * For each class requested by several slots: can the providers those slots may use hold the
 * summed amount at all? (A necessary condition; spares the search of hopeless trees.)
 */
function capacityPossible(ix: Index, plan: Plan, choices: number[][]): boolean {
  const demand = new Map<string, {amount: number; entries: [number, number][]}>() // rc -> (slot, class index)
  for (let d = 0; d < plan.S; d++) {
    const prep = plan.preps[plan.slotGroup[d]]
    const k0 = plan.slotRc[d]
    const from = k0 < 0 ? 0 : k0
    const to = k0 < 0 ? prep.rcAmounts.length : k0 + 1
    for (let k = from; k < to; k++) {
      const rc = prep.rcNames[k]
      let e = demand.get(rc)
      if (!e) demand.set(rc, (e = {amount: 0, entries: []}))
      e.amount += prep.rcAmounts[k]
      e.entries.push([d, k])
    }
  }
  for (const {amount, entries} of demand.values()) {
    if (entries.length < 2) continue
    const gen = ix.nextStamp()
    let supply = 0
    for (const [d, k] of entries) {
      const slotOf = plan.preps[plan.slotGroup[d]].rcSlotOf[k]
      for (const p of choices[d]) {
        if (ix.stamp[p] === gen) continue
        ix.stamp[p] = gen
        const s = slotOf[p]
        supply += Math.max(0, Math.min(ix.slotCap[s] - ix.used(s), ix.slotMax[s]))
      }
    }
    if (supply < amount) return false
  }
  return true
}

// ---- the search -----------------------------------------------------------------------------

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

  // RequestWideSearchContext: root_required / root forbidden traits filter the anchors.
  let anchorOk: Uint8Array | null = null
  const rootReq = req.rootRequired.map((s) => s[0])
  if (rootReq.length || req.rootForbidden.size) {
    checkTraitNames(state, rootReq)
    checkTraitNames(state, req.rootForbidden)
    anchorOk = new Uint8Array(ix.n)
    let any = false
    for (let i = 0; i < ix.n; i++) {
      if (ix.parent[i] >= 0 || ix.provs[i].parent !== null) continue
      const pt = ix.provs[i].traits
      if (rootReq.every((t) => pt.has(t)) && !hasAnyTrait(ix.provs[i], req.rootForbidden)) {
        anchorOk[i] = 1
        any = true
      }
    }
    if (!any) return none
  }

  // A lone single-path group needs no merging: scan only as far as needed.
  const breadthFirst = opts.strategy === 'breadth-first' && maxCand !== Infinity
  const lone =
    req.groups.length === 1 && !breadthFirst && (req.groups[0].suffix !== '' || (!ix.anySharing && !ix.hasTrees))
  const excludeNested = !nestedAware && ix.hasTrees
  // A limited search without sharing providers prepares the groups tree by tree (see
  // walkAnchors), provided no group would stop the eager search with a 400.
  let lazy = !lone && !breadthFirst && target !== Infinity && !ix.anySharing && !excludeNested
  if (lazy) {
    try {
      for (const g of req.groups) {
        checkClassNames(state, g.resources.keys())
        for (const any of g.requiredTraits) checkTraitNames(state, any)
        checkTraitNames(state, g.forbiddenTraits)
      }
    } catch {
      lazy = false
    }
  }
  const preps: Prepared[] = []
  for (const g of req.groups) {
    let p: Prepared | null
    if (lazy) p = g.memberOf.length && !anyProviderInAggSets(ix, g.memberOf) ? null : groupShell(ix, g)
    else p = prepareGroup(ix, g, anchorOk, lone ? {maxProviders: target} : null)
    if (!p) return none
    preps.push(p)
  }

  const plan = makePlan(preps, req)
  const S = plan.S
  if (!lazy && plan.multiLast >= 0 && preps.length > 1) plan.sole = SoleAnchor.make(ix, preps.find((p) => p.multi)!, anchorOk)
  let found: number[] = [] // S providers per candidate
  let count = 0
  const seen = new Set<string>()
  const emit = (cur: Int32Array): void => {
    if (excludeNested && !distinctTrees(ix, plan, cur)) return
    let allSharing = true
    for (let d = 0; d < S; d++) if (!ix.isSharing[cur[d]]) { allSharing = false; break }
    if (allSharing) {
      // Only candidates made of sharing providers alone can come from several anchors.
      const key = Array.prototype.join.call(cur, ',')
      if (seen.has(key)) return
      seen.add(key)
    }
    for (let d = 0; d < S; d++) found.push(cur[d])
    count++
  }

  // Viable anchors: those every group can serve, in the first group's order.
  const anchors: number[] = []
  if (!lone && !lazy) for (const a of preps[0].byAnchor.keys()) if (preps.every((p) => p.byAnchor.has(a))) anchors.push(a)
  const choicesOf = (a: number, given?: number[][][]): number[][] | null => {
    const choices: number[][] = []
    for (let d = 0; d < S; d++) {
      const prep = preps[plan.slotGroup[d]]
      const lists = given ? given[plan.slotGroup[d]] : prep.byAnchor.get(a)!
      choices.push(prep.multi ? lists[plan.slotRc[d]] : lists[0])
    }
    if (req.groupPolicy === 'isolate' && !isolationPossible(plan, choices)) return null
    if (!capacityPossible(ix, plan, choices)) return null
    return choices
  }
  try {
    if (lone) {
      found = preps[0].lone!
      count = found.length
    } else if (lazy) {
      let e: AnchorEnum | null = null
      const byGroup: number[][][] = new Array(preps.length)
      walkAnchors(ix, preps[0], anchorOk, (a) => {
        for (let gi = 0; gi < preps.length; gi++) {
          const lists = anchorLists(ix, preps[gi], a)
          if (!lists) return false
          byGroup[gi] = lists
        }
        const choices = choicesOf(a, byGroup)
        if (!choices) return false
        if (e) e.reset(a, choices)
        else e = new AnchorEnum(ix, plan, a, choices)
        while (count < target && e.next()) emit(e.cur)
        if (count >= target) {
          e.suspend()
          return true
        }
        return false
      })
    } else if (breadthFirst) {
      // Take turns between trees, one candidate each, until the cap is reached.
      let live: AnchorEnum[] = []
      for (const a of anchors) {
        const choices = choicesOf(a)
        if (choices) live.push(new AnchorEnum(ix, plan, a, choices))
      }
      while (live.length && count < target) {
        const next: AnchorEnum[] = []
        for (const e of live) {
          if (count >= target) break
          e.resume()
          if (e.next()) {
            emit(e.cur)
            e.suspend()
            next.push(e)
          }
        }
        live = next
      }
    } else {
      let e: AnchorEnum | null = null
      for (const a of anchors) {
        const choices = choicesOf(a)
        if (!choices) continue
        if (e) e.reset(a, choices)
        else e = new AnchorEnum(ix, plan, a, choices)
        while (count < target && e.next()) emit(e.cur)
        if (count >= target) {
          e.suspend()
          break
        }
      }
    }
  } catch (e) {
    ix.acc.fill(0) // keep the shared scratch clean for the next request
    ix.isoCount.fill(0)
    throw e
  }

  // limit_results
  let picked: number[] // candidate numbers, in output order
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

  // Provider summaries.
  const gen = ix.nextStamp()
  const rootsUsed: number[] = []
  const markRoots = (c: number) => {
    for (let d = 0; d < S; d++) {
      const prep = preps[plan.slotGroup[d]]
      if (!prep.rcAmounts.length) continue // resourceless: in mappings only
      const r = ix.root[found[c * S + d]]
      if (ix.stamp[r] !== gen) {
        ix.stamp[r] = gen
        rootsUsed.push(r)
      }
    }
  }
  for (const c of picked) markRoots(c)
  const summaries: ProviderSummary[] = []
  rootsUsed.sort((a, b) => a - b)
  if (excludeNested) {
    // exclude_nested_providers: only providers allocated from in any (pre-limit) candidate,
    // then limit_results keeps those in the trees of the returned ones.
    const used = new Uint8Array(ix.n)
    for (let c = 0; c < count; c++) {
      for (let d = 0; d < S; d++) if (preps[plan.slotGroup[d]].rcAmounts.length) used[found[c * S + d]] = 1
    }
    for (let i = 0; i < ix.n; i++) if (used[i] && ix.stamp[ix.root[i]] === gen) summaries.push(ix.summary(i))
  } else {
    for (const r of rootsUsed) {
      for (let k = ix.treeOff[r]; k < ix.treeOff[r + 1]; k++) summaries.push(ix.summary(ix.treeMem[k]))
    }
  }

  // Slot form of the returned candidates; AllocationRequest objects are built only if asked for.
  const rows = new Int32Array(picked.length * S)
  for (let k = 0; k < picked.length; k++) for (let d = 0; d < S; d++) rows[k * S + d] = found[picked[k] * S + d]
  const slotSuffix: string[] = []
  const slotResources: [string, number][][] = []
  for (let d = 0; d < S; d++) {
    const prep = plan.preps[plan.slotGroup[d]]
    const k0 = plan.slotRc[d]
    const ks = k0 < 0 ? prep.rcNames.map((_, k) => k) : [k0]
    slotSuffix.push(prep.g.suffix)
    slotResources.push(ks.map((k) => [prep.rcNames[k], prep.rcAmounts[k]]))
  }
  return withSlots({providerSummaries: summaries, requestedClasses}, {S, rows, providers: ix.provs, slotSuffix, slotResources})
}

/** Below 1.29: a candidate may not take resources from two providers of one tree. */
function distinctTrees(ix: Index, plan: Plan, cur: Int32Array): boolean {
  const S = plan.S
  for (let d = 0; d < S; d++) {
    const p = cur[d]
    for (let e = 0; e < d; e++) {
      const q = cur[e]
      if (q !== p && ix.root[q] === ix.root[p]) return false
    }
  }
  return true
}

/**
 * The returned candidates as slots: candidate k takes slot d from providers[rows[k*S + d]].
 * A slot is one group (or one class of the unsuffixed group when it may spread over a tree).
 */
export interface CandidateSlots {
  S: number
  rows: Int32Array
  providers: readonly Provider[]
  /** Group suffix of each slot ('' for the unsuffixed group). */
  slotSuffix: string[]
  /** Classes and amounts each slot takes (none for a group without resources). */
  slotResources: [string, number][][]
}

const slotsOfResult = new WeakMap<CandidateResult, CandidateSlots>()

/**
 * The slot form behind a result of findCandidates, for writers that need no objects; undefined
 * for any other result (a copy with filtered allocationRequests, say).
 */
export function candidateSlots(result: CandidateResult): CandidateSlots | undefined {
  return slotsOfResult.get(result)
}

function withSlots(rest: Omit<CandidateResult, 'allocationRequests'>, slots: CandidateSlots): CandidateResult {
  const result = rest as CandidateResult
  Object.defineProperty(result, 'allocationRequests', {
    enumerable: true,
    configurable: true,
    get() {
      const list: AllocationRequest[] = []
      const uuids: string[] = new Array(slots.S)
      for (let at = 0; at < slots.rows.length; at += slots.S) {
        for (let d = 0; d < slots.S; d++) uuids[d] = slots.providers[slots.rows[at + d]].uuid
        list.push(allocationRequestOf(slots, uuids))
      }
      Object.defineProperty(result, 'allocationRequests', {value: list, enumerable: true, writable: true})
      return list
    },
  })
  slotsOfResult.set(result, slots)
  return result
}

/**
 * One allocation request from the provider uuid of each slot: amounts of one provider summed
 * over its slots, providers and classes in slot order, each group's providers listed once.
 */
export function allocationRequestOf(slots: Pick<CandidateSlots, 'S' | 'slotSuffix' | 'slotResources'>, uuids: string[]): AllocationRequest {
  const allocations = new Map<string, Map<string, number>>()
  const mappings = new Map<string, string[]>()
  for (let d = 0; d < slots.S; d++) {
    const uuid = uuids[d]
    const taken = slots.slotResources[d]
    if (taken.length) {
      let res = allocations.get(uuid)
      if (!res) allocations.set(uuid, (res = new Map()))
      for (const [rc, n] of taken) res.set(rc, (res.get(rc) ?? 0) + n)
    }
    const suffix = slots.slotSuffix[d]
    const list = mappings.get(suffix)
    if (!list) mappings.set(suffix, [uuid])
    else if (!list.includes(uuid)) list.push(uuid)
  }
  return {allocations, mappings}
}

function shuffle<T>(a: T[]): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    const t = a[i]
    a[i] = a[j]
    a[j] = t
  }
}
