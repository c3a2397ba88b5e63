/**
 * Placement's one-anchor quirk for the unsuffixed group.
 *
 * _alloc_candidates_multiple_providers collects the unsuffixed group's results of all trees in
 * one Python set, and AllocationRequest equality ignores the anchor: a result made of sharing
 * providers only, valid under several anchors, survives under just one of them, the first tree
 * in the iteration order of the set of (provider id, anchor id, class id) tuples built by
 * get_trees_matching_all. That order is CPython's (3.11) hash-table order, reproduced by PySet with
 * Placement's internal ids taken as: provider id = position in the state + 1 (creation order),
 * class id = the class record's id. (Exact as long as no provider was deleted; Placement's
 * own order also depends on the hash seed where tuples collide in its tables.)
 */
import {capable, type PreparedGroup} from './group-search.js'
import {inAllAggSets, inAnyAgg} from './provider-filter.js'
import type {Index} from './provider-index.js'
import {PySet} from './python-set.js'

export class SoleAnchor {
  private readonly cache = new Map<string, number>()
  /** anchor -> position in Placement's tree order (computed on first need) */
  private rank: Map<number, number> | null = null

  private constructor(
    /** per class slot: sharing provider -> anchors whose choices include it */
    private readonly anchorsOf: Map<number, number[]>[],
    private readonly ix: Index,
    private readonly prep: PreparedGroup,
    private readonly anchorOk: Uint8Array | null,
  ) {}

  /** null when the group never puts sharing providers alone in a result. */
  static make(ix: Index, prep: PreparedGroup, anchorOk: Uint8Array | null): SoleAnchor | null {
    if (!ix.anySharing) return null
    const anchorsOf = prep.rcNames.map(() => new Map<number, number[]>())
    let any = false
    for (const [a, lists] of prep.byAnchor) {
      lists.forEach((list, k) => {
        for (const p of list) {
          if (!ix.isSharing[p]) continue
          any = true
          const l = anchorsOf[k].get(p)
          if (l) l.push(a)
          else anchorsOf[k].set(p, [a])
        }
      })
    }
    if (!any) return null
    return new SoleAnchor(anchorsOf, ix, prep, anchorOk)
  }

  /** The anchor a result (slots from..to of cur) belongs to: mixed results keep their own. */
  winner(cur: Int32Array, from: number, to: number): number {
    const ix = this.ix
    for (let d = from; d <= to; d++) if (!ix.isSharing[cur[d]]) return -2 // not sharing-only: caller's anchor
    let key = ''
    for (let d = from; d <= to; d++) key += cur[d] + ','
    let w = this.cache.get(key)
    if (w === undefined) {
      let common: Set<number> | null = null
      for (let d = from; d <= to; d++) {
        const l = this.anchorsOf[d - from].get(cur[d]) ?? []
        if (!common) common = new Set(l)
        else {
          const next = new Set<number>()
          for (const a of l) if (common.has(a)) next.add(a)
          common = next
        }
      }
      w = -1
      if (common && common.size === 1) w = common.values().next().value!
      else if (common) {
        let best = Infinity
        this.rank ??= placementTreeOrder(this.ix, this.prep, this.anchorOk)
        for (const a of common) {
          const r = this.rank.get(a) ?? Infinity
          if (r < best || w < 0) {
            best = r
            w = a
          }
        }
      }
      this.cache.set(key, w)
    }
    return w
  }
}

/** The order in which Placement's tree_dict meets the anchors of the multi group (see above). */
function placementTreeOrder(ix: Index, prep: PreparedGroup, anchorOk: Uint8Array | null): Map<number, number> {
  const {g, rcNames, rcAmounts, rcInvs} = prep
  const state = ix.state
  const pid = (i: number) => i + 1 // and back: id - 1
  const memberOf = g.memberOf
  const bad = g.forbiddenAggs
  const inAggs = (i: number) => inAllAggSets(ix.provs[i], memberOf)
  const inBad = (i: number) => inAnyAgg(ix.provs[i], bad)
  let acc: PySet | null = null
  for (let k = 0; k < rcNames.length; k++) {
    const rcId = state.classes.get(rcNames[k])?.id ?? 0
    const capableIdx = capable(ix, rcInvs[k], rcAmounts[k], prep.treeRoot)
    // get_providers_with_resource rows (inventory order ~ provider order) -> set -> RPCandidates
    const rows = PySet.of(capableIdx.map((i) => [pid(i), pid(ix.root[i])]))
    let cur = new PySet()
    cur.merge(PySet.of([...rows].map(([a, b]) => [a, b, rcId])))
    if (prep.treeRoot < 0) {
      const sharing = capableIdx.filter((i) => ix.isSharing[i] && (!memberOf.length || inAggs(i)))
      if (sharing.length) {
        const pairs: number[][] = []
        for (const sp of sharing) for (const a of ix.sharingAnchors(sp)) pairs.push([pid(sp), pid(a)])
        const anchorSet = PySet.of(pairs)
        cur.merge(PySet.of([...anchorSet].map(([a, b]) => [a, b, rcId])))
      }
    }
    const at = (t: number[]) => t[1] - 1
    const rp = (t: number[]) => t[0] - 1
    if (anchorOk) cur = PySet.of([...cur].filter((t) => anchorOk[at(t)] === 1))
    if (memberOf.length) cur = PySet.of([...cur].filter((t) => inAggs(rp(t)) || inAggs(at(t))))
    if (bad.size) cur = PySet.of([...cur].filter((t) => !(inBad(rp(t)) || inBad(at(t)))))
    if (!acc || acc.used === 0) acc = cur
    else if (cur.used) {
      const trees = new Set<number>()
      for (const t of acc) trees.add(t[1])
      const both = new Set<number>()
      for (const t of cur) if (trees.has(t[1])) both.add(t[1])
      acc.merge(cur)
      acc = PySet.of([...acc].filter((t) => both.has(t[1])))
    }
  }
  const rank = new Map<number, number>()
  if (acc) for (const t of acc) if (!rank.has(t[1] - 1)) rank.set(t[1] - 1, rank.size)
  return rank
}
