/**
 * How many more of a flavor fit in a domain, on the move model's numbers, counted as capacity
 * counts them (headroom.ts hostFits and domains.ts poolsDomain): each enabled host's candidates
 * for the flavor claimed one after another with what is free (fit-walk.ts fitOneAfterAnother);
 * the hosts that draw on a pool walked in host order, each with what those before it left there;
 * the others summed. A host's own count is kept until its usage (or a pool's) moves.
 */
import {bindingName, bindingOf, fitOneAfterAnother, type FitWalk} from '../headroom/fit-walk.js'
import type {FlavorRequest} from '../headroom/flavors.js'
import {candidatesByHost, type ShapeCandidates} from '../headroom/tree-shapes.js'
import type {World} from './world.js'

export class FlavorFit {
  /** The domain's hosts, in host order. */
  readonly hosts: number[]
  readonly inDomain: Uint8Array
  readonly candidatesOf: (i: number) => ShapeCandidates
  private readonly alone: Float64Array
  private readonly drawing: Uint8Array
  private readonly seen: Int32Array
  private readonly seenPool: Int32Array
  private readonly scratch: Float64Array
  private readonly walk: FitWalk = {tookFromPool: false, binding: -1}

  constructor(
    readonly w: World,
    readonly flavor: FlavorRequest,
    hosts: readonly number[],
  ) {
    this.hosts = [...hosts].sort((a, b) => a - b)
    this.inDomain = new Uint8Array(w.n)
    for (const i of this.hosts) this.inDomain[i] = 1
    this.candidatesOf = candidatesByHost(w.s, w.forest, flavor.request)
    this.alone = new Float64Array(w.n)
    this.drawing = new Uint8Array(w.n)
    this.seen = new Int32Array(w.n).fill(-1)
    this.seenPool = new Int32Array(w.n).fill(-1)
    this.scratch = new Float64Array(w.forest.poolPairs.length)
  }

  /** Whether host `i` counts: enabled, and its tree could ever hold the flavor. */
  counts(i: number): boolean {
    return this.w.enabled[i] === 1 && this.candidatesOf(i).start.length > 1
  }

  /** Host `i`'s count alone (each pool as free as it is), as headroom's host rows say it. */
  hostFit(i: number): number {
    const {w} = this
    if (this.seen[i] === w.version[i] && this.seenPool[i] === w.poolVersion) return this.alone[i]
    const fit = this.count(i)
    this.alone[i] = fit
    this.drawing[i] = this.walk.tookFromPool ? 1 : 0
    this.seen[i] = w.version[i]
    this.seenPool[i] = w.poolVersion
    return fit
  }

  /** Host `i`'s count with what `free` holds now (its pools as the World has them); `walk` notes what it took and what binds. */
  count(i: number): number {
    if (!this.counts(i)) {
      this.walk.tookFromPool = false
      this.walk.binding = -1
      return 0
    }
    const {w} = this
    const {pairSharing, poolPair} = w.forest.shapes[w.forest.shapeOf[i]]
    for (let k = 0; k < poolPair.length; k++) if (pairSharing[k]) this.scratch[poolPair[k]] = w.poolFree[poolPair[k]]
    return fitOneAfterAnother(w.forest, i, this.candidatesOf(i), w.free, this.scratch, this.walk)
  }

  /** What binds on host `i` after the last count (a class, or CLASS@pool), null when nothing could. */
  lastBinding(i: number): string | null {
    return bindingName(this.w.forest, bindingOf(this.w.forest, i, this.walk.binding))
  }

  /** The domain's count: the hosts that draw on a pool one after another (in host order), the others summed. */
  fit(): number {
    let fit = 0
    let left: Float64Array | null = null
    const {w} = this
    for (const i of this.hosts) {
      const alone = this.hostFit(i)
      if (!this.drawing[i]) fit += alone
      else fit += fitOneAfterAnother(w.forest, i, this.candidatesOf(i), w.free, (left ??= w.poolFree.slice()))
    }
    return fit
  }

  /** Host `i`'s count were `pieces` (on it) moved away: what they hold given back for the count, then taken again. */
  fitWithout(i: number, pieces: readonly number[]): number {
    const {w} = this
    const at = w.forest.pairAt[i]
    for (const id of pieces) {
      const {pairs, pairAmounts} = w.pieces[id].held
      for (let t = 0; t < pairs.length; t++) w.free[at + pairs[t]] += pairAmounts[t]
    }
    const fit = this.count(i)
    for (const id of pieces) {
      const {pairs, pairAmounts} = w.pieces[id].held
      for (let t = 0; t < pairs.length; t++) w.free[at + pairs[t]] -= pairAmounts[t]
    }
    return fit
  }

  /** How much host `j`'s count falls were candidate `c` of `cs` taken there (0 outside the domain). */
  lossIfTaken(j: number, cs: ShapeCandidates, c: number): number {
    if (!this.inDomain[j] || !this.counts(j)) return 0
    const {w} = this
    const before = this.hostFit(j)
    const shape = w.forest.shapes[w.forest.shapeOf[j]]
    const at = w.forest.pairAt[j]
    const taken: Array<[number, number]> = []
    for (let t = cs.start[c]; t < cs.start[c + 1]; t++) {
      const k = cs.pair[t]
      if (shape.pairSharing[k]) {
        w.poolFree[shape.poolPair[k]] -= cs.amount[t]
        taken.push([shape.poolPair[k], cs.amount[t]])
      } else w.free[at + k] -= cs.amount[t]
    }
    const after = this.count(j)
    for (let t = cs.start[c]; t < cs.start[c + 1]; t++) if (!shape.pairSharing[cs.pair[t]]) w.free[at + cs.pair[t]] += cs.amount[t]
    for (const [g, n] of taken) w.poolFree[g] += n
    return Math.max(0, before - after)
  }
}
