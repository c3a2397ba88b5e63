/**
 * The per-group search: Placement's per-request-group search (the single and multi paths),
 * which leaves, per anchor, each group's provider choices in a PreparedGroup.
 */
import type {Provider, State} from '../state/state.js'
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
import type {Index, RcInv} from './provider-index.js'
import type {RequestGroup} from './request.js'

export interface PreparedGroup {
  g: RequestGroup
  granular: boolean
  /** Multi path: one provider per class from the anchor's tree or its sharing providers. */
  multi: boolean
  rcNames: string[]
  rcAmounts: number[]
  rcInvs: RcInv[]
  rcSlotOf: Int32Array[]
  /** anchor -> per class (multi) or single list (single path) of provider choices. */
  byAnchor: Map<number, number[][]>
  /** Lone single-path group (no merging needed): the matching providers, in order. */
  lone?: number[]
  /** Multi path: provider -> bitmask of the required any-sets it covers. */
  traitMask?: Map<number, number>
  fullMask: number
  /** Root index of the in_tree provider, or -1. */
  treeRoot: number
}

/**
 * Every group's PreparedGroup, in request order; null as soon as one matches nothing (Placement stops
 * there, before the 400s of later groups). `lazy`: shells only, searched tree by tree later.
 */
export function prepareGroups(
  ix: Index,
  groups: RequestGroup[],
  anchorOk: Uint8Array | null,
  lazy: boolean,
  single: {maxProviders: number} | null,
): PreparedGroup[] | null {
  const preps: PreparedGroup[] = []
  for (const g of groups) {
    let p: PreparedGroup | null
    if (lazy) p = g.memberOf.length && !anyProviderInAggSets(ix, g.memberOf) ? null : groupShell(ix, g)
    else p = prepareGroup(ix, g, anchorOk, single)
    if (!p) return null
    preps.push(p)
  }
  return preps
}

/** Are all classes and traits the groups name known (would no group stop the search with a 400)? */
export function namesKnown(state: State, groups: RequestGroup[]): boolean {
  try {
    for (const g of groups) {
      checkClassNames(state, g.resources.keys())
      for (const any of g.requiredTraits) checkTraitNames(state, any)
      checkTraitNames(state, g.forbiddenTraits)
    }
  } catch {
    return false
  }
  return true
}

/** Providers able to give `amount` of class `inv`, optionally within one tree. */
export function capable(ix: Index, inv: RcInv | undefined, amount: number, treeRoot: number): number[] {
  const out: number[] = []
  if (!inv) return out
  const {provs, slots} = inv
  for (let k = 0; k < provs.length; k++) {
    const p = provs[k]
    if (treeRoot >= 0 && ix.root[p] !== treeRoot) continue
    if (ix.fits(slots[k], amount)) out.push(p)
  }
  return out
}

/**
 * RequestGroupSearchContext + _get_by_one_request for one group. Returns null when Placement
 * would stop with no candidates at all (ResourceProviderNotFound or an empty group); throws the
 * 400s for unknown classes or traits in Placement's order.
 */
export function prepareGroup(
  ix: Index,
  g: RequestGroup,
  anchorOk: Uint8Array | null,
  single: {maxProviders: number} | null,
): PreparedGroup | null {
  const state = ix.state
  checkClassNames(state, g.resources.keys())
  if (g.memberOf.length && !anyProviderInAggSets(ix, g.memberOf)) return null
  for (const any of g.requiredTraits) checkTraitNames(state, any)
  checkTraitNames(state, g.forbiddenTraits)
  const prep = groupShell(ix, g)
  if (!prep) return null
  const ok = prep.multi
    ? searchMulti(ix, prep, anchorOk, prep.treeRoot)
    : searchSingle(ix, prep, anchorOk, prep.treeRoot, single ? single.maxProviders : -1)
  return ok ? prep : null
}

/** The group's PreparedGroup without any search (byAnchor empty); null when in_tree is unknown. */
export function groupShell(ix: Index, g: RequestGroup): PreparedGroup | null {
  let treeRoot = -1
  if (g.inTree !== undefined) {
    const t = ix.idx().get(g.inTree)
    if (t === undefined) return null
    treeRoot = ix.root[t]
  }
  const rcNames = [...g.resources.keys()]
  const rcAmounts = rcNames.map((rc) => g.resources.get(rc)!)
  const rcInvs = rcNames.map((rc) => ix.inventoriesOf(rc))
  const rcSlotOf = rcInvs.map((inv) => ix.slotOf(inv))
  const granular = g.suffix !== ''
  const multi = !granular && (ix.anySharing || ix.hasTrees)
  const prep: PreparedGroup = {g, granular, multi, rcNames, rcAmounts, rcInvs, rcSlotOf, byAnchor: new Map(), fullMask: 0, treeRoot}
  if (multi) {
    const n = g.requiredTraits.length
    prep.fullMask = n > 0 && n <= 30 ? (1 << n) - 1 : 0
  }
  return prep
}

/** Does provider p satisfy the single-provider filters of the group (not resources)? */
export function singleFilters(p: Provider, g: RequestGroup): boolean {
  if (g.requiredTraits.length && !hasTraitSets(p, g.requiredTraits)) return false
  if (g.memberOf.length && !inAllAggSets(p, g.memberOf)) return false
  if (inAnyAgg(p, g.forbiddenAggs)) return false
  if (hasAnyTrait(p, g.forbiddenTraits)) return false
  return true
}

/** get_provider_ids_matching + _alloc_candidates_single_provider. */
/** maxProviders: -1 to fill byAnchor (for merging), else fill `lone` with at most that many. */
function searchSingle(ix: Index, prep: PreparedGroup, anchorOk: Uint8Array | null, treeRoot: number, maxProviders: number): boolean {
  const lone: number[] | null = maxProviders !== -1 ? (prep.lone = []) : null
  if (maxProviders === -1) maxProviders = Infinity
  const {g, rcAmounts, rcInvs, rcSlotOf} = prep
  const by = prep.byAnchor
  let found = 0
  const add = (p: number) => {
    if (lone) {
      // Only whether some anchor is viable matters: every match is one candidate.
      let ok = !anchorOk || anchorOk[ix.root[p]] === 1
      if (!ok && ix.isSharing[p]) {
        const anchors = ix.sharingAnchors(p)
        for (let k = 0; k < anchors.length && !ok; k++) ok = anchorOk![anchors[k]] === 1
      }
      if (ok) {
        lone.push(p)
        found++
      }
      return
    }
    let any = false
    const r = ix.root[p]
    if (!anchorOk || anchorOk[r]) {
      pushChoice(by, r, p)
      any = true
    }
    if (ix.isSharing[p]) {
      const anchors = ix.sharingAnchors(p)
      for (let k = 0; k < anchors.length; k++) {
        const a = anchors[k]
        if (a === r || (anchorOk && !anchorOk[a])) continue
        pushChoice(by, a, p)
        any = true
      }
    }
    if (any) found++
  }
  if (rcAmounts.length === 0) {
    // A resourceless group matches only through positive filters; in_tree does not apply.
    if (!g.requiredTraits.length && !g.memberOf.length) return false
    for (let p = 0; p < ix.n && found < maxProviders; p++) if (ix.live(p) && singleFilters(ix.provs[p], g)) add(p)
    return found > 0
  }
  // Walk the class with the fewest inventories; check the others by slot.
  let lead = 0
  for (let k = 1; k < rcInvs.length; k++) if (rcInvs[k].provs.length < rcInvs[lead].provs.length) lead = k
  const {provs, slots} = rcInvs[lead]
  const leadAmount = rcAmounts[lead]
  // With a narrow member_of, walk its members instead (same order: ascending index).
  const scope = memberScope(ix, g.memberOf, false, provs.length)
  const leadSlotOf = rcSlotOf[lead]
  const count = scope ? scope.length : provs.length
  outer: for (let e = 0; e < count && found < maxProviders; e++) {
    const p = scope ? scope[e] : provs[e]
    const slot = scope ? leadSlotOf[p] : slots[e]
    if (slot < 0) continue
    if (treeRoot >= 0 && ix.root[p] !== treeRoot) continue
    if (!ix.fits(slot, leadAmount)) continue
    for (let k = 0; k < rcAmounts.length; k++) {
      if (k === lead) continue
      const s = rcSlotOf[k][p]
      if (s < 0 || !ix.fits(s, rcAmounts[k])) continue outer
    }
    if (!singleFilters(ix.provs[p], g)) continue
    add(p)
  }
  return found > 0
}

function pushChoice(by: Map<number, number[][]>, anchor: number, p: number): void {
  const lists = by.get(anchor)
  if (lists) lists[0].push(p)
  else by.set(anchor, [[p]])
}

/** get_trees_matching_all + _alloc_candidates_multiple_providers (lazily: per-class choices). */
function searchMulti(ix: Index, prep: PreparedGroup, anchorOk: Uint8Array | null, treeRoot: number): boolean {
  const {g, rcAmounts, rcInvs} = prep
  const nrc = rcAmounts.length
  const provs = ix.provs
  const memberOf = g.memberOf
  const bad = g.forbiddenAggs
  // anchor -> per class list, built class by class; trees missing a class are dropped.
  let by: Map<number, number[][]> | null = null
  for (let k = 0; k < nrc; k++) {
    const cur = new Map<number, number[]>()
    const consider = (p: number, a: number, dup: boolean) => {
      if (anchorOk && !anchorOk[a]) return
      if (memberOf.length && !inAllAggSets(provs[p], memberOf) && !inAllAggSets(provs[a], memberOf)) return
      if (bad.size && (inAnyAgg(provs[p], bad) || inAnyAgg(provs[a], bad))) return
      if (by && !by.has(a)) return // this tree already lacks an earlier class
      let list = cur.get(a)
      if (!list) cur.set(a, (list = []))
      if (dup && list.includes(p)) return
      list.push(p)
    }
    const cap = capable(ix, rcInvs[k], rcAmounts[k], treeRoot)
    for (const p of cap) consider(p, ix.root[p], false)
    if (treeRoot < 0 && ix.anySharing) {
      for (const p of cap) {
        if (!ix.isSharing[p]) continue
        if (memberOf.length && !inAllAggSets(provs[p], memberOf)) continue
        const anchors = ix.sharingAnchors(p)
        for (let j = 0; j < anchors.length; j++) consider(p, anchors[j], true)
      }
    }
    if (!cur.size) return false
    if (!by) {
      by = new Map()
      for (const [a, list] of cur) by.set(a, [list])
    } else {
      for (const [a, lists] of by) {
        const list = cur.get(a)
        if (list) lists.push(list)
        else by.delete(a)
      }
      if (!by.size) return false
    }
  }
  if (!by) return false
  // Trait constraints: forbidden traits rule a provider out; required any-sets must be covered
  // by the union of the chosen providers' traits.
  const req = g.requiredTraits
  const forb = g.forbiddenTraits
  const useMask = req.length > 0 && req.length <= 30
  const mask = new Map<number, number>()
  prep.fullMask = useMask ? (1 << req.length) - 1 : 0
  const maskOf = traitMaskOf(provs, req, mask)
  for (const [a, lists] of by) {
    let alive = true
    if (forb.size) {
      for (let k = 0; k < lists.length; k++) {
        lists[k] = lists[k].filter((p) => !hasAnyTrait(provs[p], forb))
        if (!lists[k].length) {
          alive = false
          break
        }
      }
    }
    if (alive && useMask && !coverable(lists, maskOf, prep.fullMask)) alive = false
    if (!alive) by.delete(a)
  }
  if (useMask) prep.traitMask = mask
  prep.byAnchor = by
  return by.size > 0
}

/** Provider -> bitmask of the required any-sets it covers (bit j: set j), memoized in `mask`. */
export function traitMaskOf(provs: readonly Provider[], req: string[][], mask: Map<number, number>): (p: number) => number {
  return (p) => {
    let m = mask.get(p)
    if (m === undefined) {
      m = 0
      const pt = provs[p].traits
      for (let j = 0; j < req.length; j++) {
        for (const t of req[j])
          if (pt.has(t)) {
            m |= 1 << j
            break
          }
      }
      mask.set(p, m)
    }
    return m
  }
}

/** Can one provider per list be picked so that the OR of their masks is `full`? */
export function coverable(lists: number[][], maskOf: (p: number) => number, full: number): boolean {
  const distinct = lists.map((l) => [...new Set(l.map(maskOf))])
  const suffix = new Array<number>(distinct.length + 1).fill(0)
  for (let k = distinct.length - 1; k >= 0; k--) suffix[k] = suffix[k + 1] | distinct[k].reduce((x, y) => x | y, 0)
  if ((suffix[0] & full) !== full) return false
  const dfs = (k: number, m: number): boolean => {
    if ((m & full) === full) return true
    if (k === distinct.length) return false
    if (((m | suffix[k]) & full) !== full) return false
    for (const x of distinct[k]) if (dfs(k + 1, m | x)) return true
    return false
  }
  return dfs(0, 0)
}
