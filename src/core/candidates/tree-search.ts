/**
 * Lazy per-anchor search (no sharing providers): the groups' per-anchor lists, tree by tree.
 *
 * Without sharing providers every result of a group lies in one tree and is anchored at its
 * root, so the per-anchor lists that searchSingle/searchMulti would build for tree r are the
 * tree's members (in index order, as every inventory list is) passing the same filters, and
 * the order of the anchors (preps[0].byAnchor's insertion order) is the order of the first
 * provider, by index, that puts the tree into the first group's results. This lets a limited
 * search prepare the groups tree by tree and stop early, with the eager search's answer.
 */
import {coverable, singleFilters, traitMaskOf, type PreparedGroup} from './group-search.js'
import {hasAnyTrait, inAllAggSets, inAnyAgg, memberScope} from './provider-filter.js'
import type {Index} from './provider-index.js'

/**
 * Calls visit(root) for each tree in the order in which the first group's eager search would
 * insert it into byAnchor, until visit returns true. Trees may still turn out to be dead.
 */
export function walkAnchors(ix: Index, prep: PreparedGroup, anchorOk: Uint8Array | null, visit: (r: number) => boolean): void {
  const seen = new Uint8Array(ix.n)
  const {g, rcAmounts, rcInvs, rcSlotOf, treeRoot} = prep
  const provs = ix.provs
  if (prep.multi) {
    if (!rcAmounts.length) return
    const {provs: list, slots} = rcInvs[0]
    const amount = rcAmounts[0]
    const memberOf = g.memberOf
    const bad = g.forbiddenAggs
    const scope = memberScope(ix, memberOf, true, list.length)
    const slotOf = rcSlotOf[0]
    const count = scope ? scope.length : list.length
    for (let e = 0; e < count; e++) {
      const p = scope ? scope[e] : list[e]
      const slot = scope ? slotOf[p] : slots[e]
      if (slot < 0) continue
      const r = ix.root[p]
      if (seen[r] || (treeRoot >= 0 && r !== treeRoot) || (anchorOk && !anchorOk[r])) continue
      if (!ix.fits(slot, amount)) continue
      if (memberOf.length && !inAllAggSets(provs[p], memberOf) && !inAllAggSets(provs[r], memberOf)) continue
      if (bad.size && (inAnyAgg(provs[p], bad) || inAnyAgg(provs[r], bad))) continue
      seen[r] = 1
      if (visit(r)) return
    }
    return
  }
  if (!rcAmounts.length) {
    if (!g.requiredTraits.length && !g.memberOf.length) return
    for (let p = 0; p < ix.n; p++) {
      const r = ix.root[p]
      if (seen[r] || (anchorOk && !anchorOk[r]) || !ix.live(p)) continue
      if (!singleFilters(provs[p], g)) continue
      seen[r] = 1
      if (visit(r)) return
    }
    return
  }
  let lead = 0
  for (let k = 1; k < rcInvs.length; k++) if (rcInvs[k].provs.length < rcInvs[lead].provs.length) lead = k
  const {provs: list} = rcInvs[lead]
  const scope = memberScope(ix, g.memberOf, false, list.length)
  const count = scope ? scope.length : list.length
  outer: for (let e = 0; e < count; e++) {
    const p = scope ? scope[e] : list[e]
    if (rcSlotOf[lead][p] < 0) continue
    const r = ix.root[p]
    if (seen[r] || (treeRoot >= 0 && r !== treeRoot) || (anchorOk && !anchorOk[r])) continue
    for (let k = 0; k < rcAmounts.length; k++) {
      const s = rcSlotOf[k][p]
      if (s < 0 || !ix.fits(s, rcAmounts[k])) continue outer
    }
    if (!singleFilters(provs[p], g)) continue
    seen[r] = 1
    if (visit(r)) return
  }
}

/**
 * byAnchor.get(r) as the eager search of the group would leave it (for a tree root r allowed by
 * anchorOk), or null when the tree is not among its anchors.
 */
export function anchorLists(ix: Index, prep: PreparedGroup, r: number): number[][] | null {
  const {g, rcAmounts, rcSlotOf, treeRoot} = prep
  const provs = ix.provs
  const mem = ix.treeMembers(r)
  const from = 0
  const to = mem.length
  const nrc = rcAmounts.length
  if (!prep.multi) {
    const list: number[] = []
    if (!nrc) {
      // A resourceless group matches only through positive filters; in_tree does not apply.
      if (!g.requiredTraits.length && !g.memberOf.length) return null
      for (let i = from; i < to; i++) if (singleFilters(provs[mem[i]], g)) list.push(mem[i])
    } else {
      if (treeRoot >= 0 && r !== treeRoot) return null
      outer: for (let i = from; i < to; i++) {
        const p = mem[i]
        for (let k = 0; k < nrc; k++) {
          const s = rcSlotOf[k][p]
          if (s < 0 || !ix.fits(s, rcAmounts[k])) continue outer
        }
        if (!singleFilters(provs[p], g)) continue
        list.push(p)
      }
    }
    return list.length ? [list] : null
  }
  if (!nrc || (treeRoot >= 0 && r !== treeRoot)) return null
  const memberOf = g.memberOf
  const bad = g.forbiddenAggs
  const pr = provs[r]
  const rootIn = memberOf.length ? inAllAggSets(pr, memberOf) : true
  if (bad.size && inAnyAgg(pr, bad)) return null
  const forb = g.forbiddenTraits
  const lists: number[][] = []
  for (let k = 0; k < nrc; k++) {
    const slotOf = rcSlotOf[k]
    const amount = rcAmounts[k]
    const list: number[] = []
    for (let i = from; i < to; i++) {
      const p = mem[i]
      const s = slotOf[p]
      if (s < 0 || !ix.fits(s, amount)) continue
      if (!rootIn && !inAllAggSets(provs[p], memberOf)) continue
      if (bad.size && inAnyAgg(provs[p], bad)) continue
      list.push(p)
    }
    if (!list.length) return null
    lists.push(list)
  }
  if (forb.size) {
    for (let k = 0; k < nrc; k++) {
      lists[k] = lists[k].filter((p) => !hasAnyTrait(provs[p], forb))
      if (!lists[k].length) return null
    }
  }
  if (prep.fullMask) {
    const maskOf = traitMaskOf(provs, g.requiredTraits, (prep.traitMask ??= new Map<number, number>()))
    if (!coverable(lists, maskOf, prep.fullMask)) return null
  }
  return lists
}
