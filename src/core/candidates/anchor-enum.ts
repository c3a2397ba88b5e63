/**
 * The per-anchor enumerator: walks, depth first, the slot assignments of one anchor's provider
 * choices, pruning as soon as a slot breaks capacity, isolation, same_subtree, the trait cover
 * or the sole-anchor rule.
 */
import type {PreparedGroup} from './group-search.js'
import type {EnumerationPlan} from './plan.js'
import type {Index} from './provider-index.js'

/**
 * Depth-first enumeration of the valid candidates of one anchor, resumable (for breadth-first
 * generation). While a candidate is current its amounts are in ix.acc and its isolated
 * providers in ix.isoCount; suspend() takes them out again.
 */
export class AnchorEnum {
  readonly pos: Int32Array
  readonly cur: Int32Array
  private started = false
  done = false

  constructor(
    readonly ix: Index,
    readonly plan: EnumerationPlan,
    public anchor: number,
    public choices: number[][],
  ) {
    this.pos = new Int32Array(plan.S)
    this.cur = new Int32Array(plan.S)
  }

  /** Starts over on another anchor's choices (the current candidate must be suspended). */
  reset(anchor: number, choices: number[][]): void {
    this.anchor = anchor
    this.choices = choices
    this.started = false
    this.done = false
  }

  /** Adds the amounts of slot d with provider p; false (and no trace) when over capacity. */
  private add(d: number, p: number, check: boolean): boolean {
    const {ix, plan} = this
    const prep = plan.preps[plan.slotGroup[d]]
    const k0 = plan.slotRc[d]
    const acc = ix.acc
    if (plan.slotIsolate[d]) {
      if (check && ix.isoCount[p] > 0) return false
      ix.isoCount[p]++
    }
    const from = k0 < 0 ? 0 : k0
    const to = k0 < 0 ? prep.rcAmounts.length : k0 + 1
    for (let k = from; k < to; k++) {
      const s = prep.rcSlotOf[k][p]
      const amt = prep.rcAmounts[k]
      const total = (acc[s] += amt)
      if (check && total !== amt && (ix.used(s) + total > ix.slotCap[s] || total > ix.slotMax[s])) {
        for (let j = from; j <= k; j++) ix.acc[prep.rcSlotOf[j][p]] -= prep.rcAmounts[j]
        if (plan.slotIsolate[d]) ix.isoCount[p]--
        return false
      }
    }
    if (!check) return true
    const subs = plan.subtreeAt[d]
    if (subs) {
      this.cur[d] = p
      for (const slots of subs) {
        if (!sameSubtree(ix, slots, this.cur)) {
          this.remove(d, p)
          return false
        }
      }
    }
    const tp = plan.traitAt[d]
    if (tp) {
      this.cur[d] = p
      if (!traitsCovered(ix, tp, this.cur, d - tp.rcNames.length + 1, d)) {
        this.remove(d, p)
        return false
      }
    }
    if (d === plan.multiLast && plan.sole) {
      this.cur[d] = p
      const w = plan.sole.winner(this.cur, plan.multiFrom, d)
      if (w !== -2 && w !== this.anchor) {
        this.remove(d, p)
        return false
      }
    }
    return true
  }

  private remove(d: number, p: number): void {
    const {ix, plan} = this
    const prep = plan.preps[plan.slotGroup[d]]
    const k0 = plan.slotRc[d]
    const from = k0 < 0 ? 0 : k0
    const to = k0 < 0 ? prep.rcAmounts.length : k0 + 1
    for (let k = from; k < to; k++) ix.acc[prep.rcSlotOf[k][p]] -= prep.rcAmounts[k]
    if (plan.slotIsolate[d]) ix.isoCount[p]--
  }

  /** Advances to the next valid candidate (left in `cur`); false when exhausted. */
  next(): boolean {
    if (this.done) return false
    const S = this.plan.S
    const {pos, cur, choices} = this
    let d: number
    if (this.started) {
      d = S - 1
      this.remove(d, cur[d])
    } else {
      this.started = true
      d = 0
      pos[0] = -1
    }
    while (d >= 0) {
      const list = choices[d]
      let placed = false
      while (++pos[d] < list.length) {
        const p = list[pos[d]]
        if (this.add(d, p, true)) {
          cur[d] = p
          placed = true
          break
        }
      }
      if (!placed) {
        d--
        if (d >= 0) this.remove(d, cur[d])
        continue
      }
      if (d === S - 1) return true
      d++
      pos[d] = -1
    }
    this.done = true
    return false
  }

  /** Takes the current candidate's amounts out of the shared scratch. */
  suspend(): void {
    if (this.done || !this.started) return
    for (let d = this.plan.S - 1; d >= 0; d--) this.remove(d, this.cur[d])
  }

  /** Puts them back (they were valid when suspended). */
  resume(): void {
    if (this.done || !this.started) return
    for (let d = 0; d < this.plan.S; d++) this.add(d, this.cur[d], false)
  }
}

/** _check_same_subtree: one of the providers is an ancestor-or-self of all the others. */
function sameSubtree(ix: Index, slots: number[], cur: Int32Array): boolean {
  let top = cur[slots[0]]
  for (let k = 1; k < slots.length; k++) {
    const p = cur[slots[k]]
    if (ix.depth[p] < ix.depth[top]) top = p
  }
  const dt = ix.depth[top]
  for (const s of slots) {
    let p = cur[s]
    while (p >= 0 && ix.depth[p] > dt) p = ix.parent[p]
    if (p !== top) return false
  }
  return true
}

/** _check_traits_for_alloc_request's required part for the multi group's slots [from, to]. */
function traitsCovered(ix: Index, prep: PreparedGroup, cur: Int32Array, from: number, to: number): boolean {
  if (prep.traitMask) {
    let m = 0
    for (let d = from; d <= to; d++) m |= prep.traitMask.get(cur[d]) ?? 0
    return (m & prep.fullMask) === prep.fullMask
  }
  for (const set of prep.g.requiredTraits) {
    let ok = false
    for (let d = from; d <= to && !ok; d++) {
      const pt = ix.provs[cur[d]].traits
      for (const t of set)
        if (pt.has(t)) {
          ok = true
          break
        }
    }
    if (!ok) return false
  }
  return true
}
