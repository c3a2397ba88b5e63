/**
 * The candidate sink: where the enumeration strategies put the candidates they find, as rows
 * of S provider indices, dropping duplicates and (below 1.29) candidates that use two
 * providers of one tree.
 */
import type {EnumerationPlan} from '../plan.js'
import type {Index} from '../provider-index.js'

export class CandidateSink {
  /** S providers per candidate. */
  found: number[] = []
  count = 0
  private readonly seen = new Set<string>()

  constructor(
    private readonly ix: Index,
    private readonly plan: EnumerationPlan,
    private readonly excludeNested: boolean,
  ) {}

  /** Records candidate `cur` (one provider per slot) unless it is excluded or already there. */
  emit(cur: Int32Array): void {
    const {ix, plan} = this
    const S = plan.S
    if (this.excludeNested && !distinctTrees(ix, plan, cur)) return
    let allSharing = true
    for (let d = 0; d < S; d++)
      if (!ix.isSharing[cur[d]]) {
        allSharing = false
        break
      }
    if (allSharing) {
      // Only candidates made of sharing providers alone can come from several anchors.
      const key = Array.prototype.join.call(cur, ',')
      if (this.seen.has(key)) return
      this.seen.add(key)
    }
    for (let d = 0; d < S; d++) this.found.push(cur[d])
    this.count++
  }

  /** Takes `rows` (one-slot candidates, already distinct) as the whole result. */
  takeAll(rows: number[]): void {
    this.found = rows
    this.count = rows.length
  }
}

/** Below 1.29: a candidate may not take resources from two providers of one tree. */
function distinctTrees(ix: Index, plan: EnumerationPlan, cur: Int32Array): boolean {
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
