/**
 * A flavor mix: how many instances of several flavors fit per host, rack, row, room and the cloud
 * in given proportions (`capacity --mix m1.large=60,m1.medium=30,r1.large=10`), placed as claims
 * one after another would place them.
 *
 *   the mix         flavors with weights above 0 (they need not sum to 100); a flavor listed twice
 *                   is summed under its name.
 *   the sequence    claim k (k = 0, 1, ...) is of the flavor with the largest deficit
 *                   weight * (k + 1) / W - placed (W the weights' sum), the first listed of
 *                   equals. Deficits are compared times W, weight * (k + 1) - placed * W, exact in
 *                   whole numbers: in floating point 60 * 4 / 100 - 2 is below 10 * 4 / 100, and
 *                   the tie at claim 3 would go to the wrong flavor. Weights written as decimals are
 *                   scaled to whole ones first (0.6/0.3/0.1 is 6/3/1); those no power of ten up to
 *                   10^6 makes whole are compared as they are. 60/30/10 repeats
 *                   L M L L M L R L M L: every W claims (whole weights over their gcd) each flavor
 *                   has had exactly its weight, and the deficits are back at 0 (a period).
 *   fit(domain)     claims of the sequence one after another over the domain's enabled hosts
 *                   (headroom's domains, domainLayout) and the pools they reach, each the flavor's
 *                   first candidate that fits, in the engine's order: a host's candidates all come
 *                   before the next host's, its own inventory before a pool where its candidates
 *                   put it first, a pool shared between the domain's hosts (fitOneAfterAnother's
 *                   poolLeft). The count stops at the first claim that fits nowhere in the
 *                   domain: the mix cannot go on in its proportions, though another flavor might
 *                   still fit. So a flavor that fits nowhere gives 0 when it is claimed first (the
 *                   largest weight), else the claims before its first turn. `by_flavor` is how
 *                   many of each.
 * Usage only grows during a domain's count, so a candidate that no longer fits never fits again:
 * each flavor keeps a pointer to its first candidate that may still fit (a host, a candidate of
 * its shape: tree-shapes.ts), and at the start of each period as many whole periods as every
 * flavor's candidate can take are taken at once (a count past 2^31 is a few steps; weights that
 * are not whole are claimed one at a time). Pure over a State; nothing is written to it.
 */
import {PlacementError} from '../errors.js'
import {freeNow, poolFreeNow} from './fit-walk.js'
import type {FlavorRequest} from './flavors.js'
import {domainLayout, type DomainLayoutPart} from './domains.js'
import {HEADROOM_LEVELS, type HeadroomLevel} from './headroom.js'
import type {State} from '../state/state.js'
import {candidatesByHost, hostForest, type HostForest, type ShapeCandidates} from './tree-shapes.js'

/** One flavor of a mix and its share. */
export interface MixPart {
  flavor: FlavorRequest
  weight: number
}

export interface MixDomain {
  level: HeadroomLevel
  name: string
  /** Instances of the mix placed in all. */
  fit: number
  /** How many of each flavor, by name, in the mix's order. */
  by_flavor: Record<string, number>
}

export interface MixOptions {
  /** Levels to report (all when absent). */
  levels?: readonly HeadroomLevel[]
}

/** The mix's fit in every domain of the levels asked, in the order headroom lists them (see the module's comment). */
export function mixHeadroom(s: State, mix: ReadonlyArray<MixPart>, opts: MixOptions = {}): MixDomain[] {
  const weights = mixWeights(mix.map((m) => m.weight))
  const forest = hostForest(s)
  const layout = domainLayout(s, forest, opts.levels ?? HEADROOM_LEVELS)
  const free = freeNow(forest)
  const count = new MixCount(
    forest,
    mix.map((m) => candidatesByHost(s, forest, m.flavor.request)),
    weights,
    free,
    poolFreeNow(forest),
  )
  const out: MixDomain[] = []
  for (const part of layout.parts) {
    // A level's domains share no host: one copy of the hosts' free amounts serves them all.
    count.work.set(free)
    enabledMembers(forest, part).forEach((hosts, d) => {
      const fit = count.domain(hosts)
      const by_flavor: Record<string, number> = {}
      mix.forEach((m, f) => {
        by_flavor[m.flavor.flavor] = (by_flavor[m.flavor.flavor] ?? 0) + count.placed[f]
      })
      out.push({level: part.level, name: layout.names[part.start + d], fit, by_flavor})
    })
  }
  return out
}

/** The flavor (by its place in `weights`) of each of the first `claims` claims of a mix. */
export function mixOrder(weights: readonly number[], claims: number): number[] {
  const {w, W} = mixWeights(weights)
  const placed = new Float64Array(w.length)
  const out: number[] = []
  for (let k = 0; k < claims; k++) {
    const f = nextFlavor(w, W, placed, k)
    placed[f]++
    out.push(f)
  }
  return out
}

/** A mix's weights as they are compared: whole where they can be made so (`whole`), over their gcd; W their sum. */
interface Weights {
  w: Float64Array
  W: number
  /** Whether they are whole numbers: then every W claims are one period (whole periods can be taken at once). */
  whole: boolean
}

/** Largest scale tried to make decimal weights whole: six decimals. */
const DECIMALS = 6

function mixWeights(weights: readonly number[]): Weights {
  if (weights.length === 0) throw new RangeError('a mix needs at least one flavor')
  for (const x of weights) if (!(Number.isFinite(x) && x > 0)) throw new RangeError(`a mix's weights are numbers above 0, not ${x}`)
  for (let d = 0; d <= DECIMALS; d++) {
    const scaled = weights.map((x) => x * 10 ** d)
    if (!scaled.every((x) => Math.abs(x - Math.round(x)) <= 1e-9 * x)) continue
    const whole = scaled.map(Math.round)
    const g = whole.reduce(gcd)
    const w = Float64Array.from(whole, (x) => x / g)
    return {w, W: w.reduce((a, b) => a + b, 0), whole: true}
  }
  return {w: Float64Array.from(weights), W: weights.reduce((a, b) => a + b, 0), whole: false}
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))

/** The flavor of claim k: the largest deficit, times W (w[f] * (k + 1) - placed[f] * W), the first of equals. */
function nextFlavor(w: Float64Array, W: number, placed: Float64Array, k: number): number {
  let best = 0
  let most = -Infinity
  for (let f = 0; f < w.length; f++) {
    const deficit = w[f] * (k + 1) - placed[f] * W
    if (deficit > most) [most, best] = [deficit, f]
  }
  return best
}

/** The enabled hosts of each domain of `part`, in host order (the engine's). */
function enabledMembers(forest: HostForest, part: DomainLayoutPart): number[][] {
  const out: number[][] = Array.from({length: part.count}, () => [])
  for (let i = 0; i < forest.hosts.length; i++) {
    const d = part.of ? part.of[i] : 0
    if (d >= 0 && !forest.disabled[i]) out[d].push(i)
  }
  return out
}

/**
 * A domain's count, one domain after another. Host pairs are written in `work` (a level's copy of
 * the free amounts), pool pairs in `pool`, which each domain starts again from what is free now:
 * the pool pairs a domain took from are put back when it is done.
 */
class MixCount {
  readonly work: Float64Array
  /** How many of each flavor the last domain placed. */
  readonly placed: Float64Array
  private readonly pool: Float64Array
  /** Pool pairs the domain took from (`takenIn` marks them with the domain's number). */
  private readonly taken: number[] = []
  private readonly takenIn: Int32Array
  private domainNo = 0
  /** Each flavor's first candidate that may still fit: the domain's host (by place) and the candidate. */
  private readonly onHost: Int32Array
  private readonly onCandidate: Int32Array
  /** A period's demand on each pair it takes from (wholePeriods), kept between calls. */
  private readonly keys: number[] = []
  private readonly demand: number[] = []

  constructor(
    private readonly forest: HostForest,
    private readonly candidates: ReadonlyArray<(i: number) => ShapeCandidates>,
    private readonly weights: Weights,
    free: Float64Array,
    private readonly poolFree: Float64Array,
  ) {
    const F = candidates.length
    this.work = new Float64Array(free.length)
    this.pool = poolFree.slice()
    this.takenIn = new Int32Array(poolFree.length)
    this.placed = new Float64Array(F)
    this.onHost = new Int32Array(F)
    this.onCandidate = new Int32Array(F)
  }

  /** The mix's claims one after another on `hosts` (enabled, in host order) until one fits nowhere; how many. */
  domain(hosts: readonly number[]): number {
    const {w, W, whole} = this.weights
    this.placed.fill(0)
    this.onHost.fill(0)
    this.onCandidate.fill(0)
    this.domainNo++
    let k = 0
    for (let periodAt = 0; ; ) {
      if (whole && k === periodAt) {
        k += this.wholePeriods(hosts, k) * W
        periodAt = k + W
      }
      const f = nextFlavor(w, W, this.placed, k)
      if (!this.firstFit(f, hosts)) break
      this.take(f, hosts, 1)
      this.placed[f]++
      k++
    }
    for (const g of this.taken) this.pool[g] = this.poolFree[g]
    this.taken.length = 0
    return k
  }

  /**
   * At a period's start (every flavor placed exactly its share): how many whole periods every
   * flavor's first candidate that fits can take at once, each its weight's share of every period;
   * taken. Within them each claim's first fit is its flavor's candidate (those before it no longer
   * fit, and it fits until the last), so they are the same claims one at a time would make.
   */
  private wholePeriods(hosts: readonly number[], k: number): number {
    const {w, W} = this.weights
    const F = w.length
    // Every W claims the deficits are back at 0 (checked, not assumed).
    for (let f = 0; f < F; f++) if (this.placed[f] * W !== w[f] * k) return 0
    for (let f = 0; f < F; f++) if (!this.firstFit(f, hosts)) return 0
    // What one period takes of each pair the flavors' candidates take from (host pairs by their place in work, pools as -1 - g).
    const {keys, demand} = this
    let K = 0
    for (let f = 0; f < F; f++) {
      const i = hosts[this.onHost[f]]
      const {start, pair, amount} = this.candidates[f](i)
      const {pairSharing, poolPair} = this.forest.shapes[this.forest.shapeOf[i]]
      const j = this.onCandidate[f]
      for (let t = start[j]; t < start[j + 1]; t++) {
        const p = pair[t]
        const key = pairSharing[p] ? -1 - poolPair[p] : this.forest.pairAt[i] + p
        let at = 0
        while (at < K && keys[at] !== key) at++
        if (at === K) {
          K++
          keys[at] = key
          demand[at] = 0
        }
        demand[at] += amount[t] * w[f]
      }
    }
    let periods = Infinity
    for (let at = 0; at < K; at++)
      periods = Math.min(periods, Math.floor((keys[at] < 0 ? this.pool[-1 - keys[at]] : this.work[keys[at]]) / demand[at]))
    if (!(periods >= 1 && periods < Infinity)) return 0
    for (let f = 0; f < F; f++) {
      this.take(f, hosts, periods * w[f])
      this.placed[f] += periods * w[f]
    }
    return periods
  }

  /** Moves flavor f's pointer to its first candidate on `hosts` that fits once more; false when none does. */
  private firstFit(f: number, hosts: readonly number[]): boolean {
    const {forest, work, pool} = this
    const candidatesAt = this.candidates[f]
    for (; this.onHost[f] < hosts.length; this.onHost[f]++, this.onCandidate[f] = 0) {
      const i = hosts[this.onHost[f]]
      const {start, pair, amount} = candidatesAt(i)
      const {pairSharing, poolPair} = forest.shapes[forest.shapeOf[i]]
      const at = forest.pairAt[i]
      for (let j = this.onCandidate[f]; j + 1 < start.length; j++) {
        let fits = true
        for (let t = start[j]; t < start[j + 1] && fits; t++) {
          const p = pair[t]
          fits = (pairSharing[p] ? pool[poolPair[p]] : work[at + p]) >= amount[t]
        }
        if (fits) {
          this.onCandidate[f] = j
          return true
        }
      }
    }
    return false
  }

  /** Claims flavor f's current candidate `times` times. */
  private take(f: number, hosts: readonly number[], times: number): void {
    const {forest, work, pool} = this
    const i = hosts[this.onHost[f]]
    const {start, pair, amount} = this.candidates[f](i)
    const {pairSharing, poolPair} = forest.shapes[forest.shapeOf[i]]
    const at = forest.pairAt[i]
    const j = this.onCandidate[f]
    for (let t = start[j]; t < start[j + 1]; t++) {
      const p = pair[t]
      if (!pairSharing[p]) {
        work[at + p] -= amount[t] * times
        continue
      }
      const g = poolPair[p]
      if (this.takenIn[g] !== this.domainNo) {
        this.takenIn[g] = this.domainNo
        this.taken.push(g)
      }
      pool[g] -= amount[t] * times
    }
  }
}

/**
 * A mix as an operator writes it, `m1.large=60,m1.medium=30,r1.large=10` (or NAME:WEIGHT), each
 * name a flavor of `catalog`; a name it lacks, or a weight that is not a number above 0, is a 400.
 */
export function parseMix(spec: string, catalog: readonly FlavorRequest[]): MixPart[] {
  const parts = spec.split(',').filter((p) => p.trim() !== '')
  if (!parts.length) throw new PlacementError(400, `Invalid mix ${JSON.stringify(spec)}: NAME=WEIGHT,... expected.`)
  return parts.map((part) => {
    const m = /^\s*(.+?)\s*[=:]\s*([^=:]+?)\s*$/.exec(part)
    const weight = m ? Number(m[2]) : Number.NaN
    if (!m || !Number.isFinite(weight) || weight <= 0)
      throw new PlacementError(400, `Invalid mix part ${JSON.stringify(part)}: NAME=WEIGHT expected, with WEIGHT a number above 0.`)
    const flavor = catalog.find((f) => f.flavor === m[1])
    if (!flavor)
      throw new PlacementError(400, `No flavor named ${m[1]} in the catalog; it has ${catalog.map((f) => f.flavor).join(', ') || 'none'}.`)
    return {flavor, weight}
  })
}

/** A mix's answer: what was asked, and each domain's fit of it. */
export interface MixAnswer {
  mix: Array<{flavor: string; weight: number}>
  domains: MixDomain[]
}

export const mixAnswer = (s: State, mix: readonly MixPart[], opts: MixOptions = {}): MixAnswer => ({
  mix: mix.map((m) => ({flavor: m.flavor.flavor, weight: m.weight})),
  domains: mixHeadroom(s, mix, opts),
})
