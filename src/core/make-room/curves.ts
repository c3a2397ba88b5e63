/**
 * A host's eviction curve: the most of a flavor it holds with m of its pieces moved away, for
 * each m, and which m. Pieces holding the same amounts on the same providers are alike for the
 * count, so the sets tried are multisets of kinds of piece: every one of size 0, 1, 2, ... while
 * a budget of counts allows (exact up to `exactTo`), then a beam: the best few sets of a size,
 * each with one piece more (the heuristic's sets). The lower bound of each m's count beyond `exactTo` is by
 * class: t more instances take t times each class the flavor asks from the tree and the pools it
 * reaches, so the pieces moved must give back what lacks (the fewest that can: the largest first).
 */
import {askedPerClass} from '../headroom/flavors.js'
import type {FlavorFit} from './fit.js'

export interface Curve {
  /** best[m]: the most the host holds with at most m pieces moved away; sets[m]: those pieces. */
  best: number[]
  sets: number[][]
  /** best[m] is the most for every m up to here (every set of that size counted). */
  exactTo: number
  /** The most it holds with every piece that may move moved away. */
  most: number
  /** How many pieces the curve moves from (those that may move, but the pinned). */
  pieces: number
}

/** Sets kept at each size: the best of the last size counted in full, then of each size beyond (a beam). */
const BEAM = 16

/**
 * Host `i`'s curve over its movable pieces but `pinned`, counting at most `budget` sets in full
 * (beyond it, unless not `beamToo`, a beam: the best sets of one size, each with one piece more).
 * `upTo`: no more than this many instances are wanted of it (counting stops there).
 */
export function evictionCurve(fit: FlavorFit, i: number, pinned: ReadonlySet<number>, budget: number, upTo: number, beamToo = true): Curve {
  const {w} = fit
  const ids = [...w.on(i)].filter((id) => w.pieces[id].movable && !pinned.has(id))
  // Kinds of piece: the same pairs and amounts count alike. A set is how many of each kind.
  const kinds = new Map<string, number[]>()
  for (const id of ids) {
    const {pairs, pairAmounts} = w.pieces[id].held
    const key = Array.from(pairs, (k, t) => `${k}:${pairAmounts[t]}`).join(',')
    const list = kinds.get(key)
    if (list) list.push(id)
    else kinds.set(key, [id])
  }
  const groups = [...kinds.values()]
  const weights = groups.map((g) => weight(fit, g[0]))
  const piecesOf = (take: ArrayLike<number>): number[] => {
    const set: number[] = []
    for (let k = 0; k < groups.length; k++) for (let x = 0; x < take[k]; x++) set.push(groups[k][x])
    return set
  }
  const weigh = (take: ArrayLike<number>) => {
    let sum = 0
    for (let k = 0; k < groups.length; k++) sum += take[k] * weights[k]
    return sum
  }
  type Scored = {take: Int32Array; fit: number; weight: number}
  const better = (a: Scored, b: Scored) => a.fit > b.fit || (a.fit === b.fit && a.weight > b.weight)
  const keep = (beam: Scored[], x: Scored) => {
    if (beam.length === BEAM && !better(x, beam[BEAM - 1])) return
    let at = beam.length
    while (at > 0 && better(x, beam[at - 1])) at--
    beam.splice(at, 0, x)
    if (beam.length > BEAM) beam.pop()
  }
  const best = [fit.hostFit(i)]
  const sets: number[][] = [[]]
  const most = ids.length ? fit.fitWithout(i, ids) : best[0]
  let exactTo = 0
  let spent = 1
  let beam: Scored[] = [{take: new Int32Array(groups.length), fit: best[0], weight: 0}]
  // A size's set: of those that count most, the lightest (the easiest to place elsewhere); the
  // beam goes on from the heaviest (the likeliest to count more with one piece more).
  const note = (m: number, found: Scored[]) => {
    let top: Scored | undefined
    for (const x of found) if (x.fit === found[0].fit && (!top || x.weight < top.weight)) top = x
    if (top && top.fit > best[m - 1]) {
      best.push(top.fit)
      sets.push(piecesOf(top.take))
    } else {
      best.push(best[m - 1])
      sets.push(sets[m - 1])
    }
  }
  // Depth by depth, every multiset of kinds of that size.
  const take = new Int32Array(groups.length)
  for (let m = 1; m <= ids.length && best[m - 1] < upTo; m++) {
    const size = multisets(groups, m)
    // One piece moved is always counted in full (a set a kind).
    if (m > 1 && spent + size > budget) break
    spent += size
    const found: Scored[] = []
    const visit = (g: number, left: number): void => {
      if (left === 0) {
        keep(found, {take: take.slice(), fit: fit.fitWithout(i, piecesOf(take)), weight: weigh(take)})
        return
      }
      if (g === groups.length) return
      for (let n = Math.min(left, groups[g].length); n >= 0; n--) {
        take[g] = n
        visit(g + 1, left - n)
      }
      take[g] = 0
    }
    visit(0, m)
    note(m, found)
    beam = found
    exactTo = m
  }
  // Beyond: each of the best sets with one piece more, the best of those kept, size after size.
  for (let m = best.length; beamToo && m <= ids.length && best[m - 1] < upTo && best[m - 1] < most && spent < 2 * budget; m++) {
    const next: Scored[] = []
    const seen = new Set<string>()
    for (const b of beam)
      for (let k = 0; k < groups.length; k++) {
        if (b.take[k] >= groups[k].length) continue
        const t = b.take.slice()
        t[k]++
        const key = t.join()
        if (seen.has(key)) continue
        seen.add(key)
        spent++
        keep(next, {take: t, fit: fit.fitWithout(i, piecesOf(t)), weight: b.weight + weights[k]})
      }
    if (next.length === 0) break
    note(m, next)
    beam = next
  }
  return {best, sets, exactTo, most, pieces: ids.length}
}

/** How many multisets of size m the kinds hold (at most a million: more is more than any budget). */
function multisets(groups: number[][], m: number): number {
  let ways = new Float64Array(m + 1)
  ways[0] = 1
  for (const g of groups) {
    const next = new Float64Array(m + 1)
    for (let a = 0; a <= m; a++) if (ways[a]) for (let n = 0; n <= g.length && a + n <= m; n++) next[a + n] += ways[a]
    ways = next
  }
  return Math.min(ways[m], 1e6)
}

/** What a piece holds of the classes the flavor asks (to prefer the larger of two that help alike). */
function weight(fit: FlavorFit, id: number): number {
  const {w} = fit
  const p = w.pieces[id]
  const asked = askedPerClass(fit.flavor.request)
  const {pairs} = w.forest.shapes[w.forest.shapeOf[p.host]]
  let sum = 0
  for (let t = 0; t < p.held.pairs.length; t++) {
    const a = asked.get(pairs[p.held.pairs[t]].rc)
    if (a) sum += p.held.pairAmounts[t] / a
  }
  return sum
}

/**
 * The fewest pieces host `i` must give back for `t` instances to fit, by class: an instance takes
 * what one group asks of a class from one provider (the tree's, or a pool it reaches), so a
 * provider holds at most what it has free over that amount, and the pieces moved away must raise
 * the providers' sum to t; the fewest that can, provider by provider (the largest first on each),
 * over the providers by a small knapsack. A class several groups ask is counted in all: t times
 * their sum against the tree's and the pools' free amounts. The most over the classes is a lower
 * bound (Infinity: not even all of them would do).
 */
export function classBound(fit: FlavorFit, i: number, t: number, pinned: ReadonlySet<number>): number {
  const {w} = fit
  const shape = w.forest.shapes[w.forest.shapeOf[i]]
  const at = w.forest.pairAt[i]
  const asked = new Map<string, number[]>()
  for (const g of fit.flavor.request.groups)
    for (const [rc, a] of g.resources) {
      const list = asked.get(rc)
      if (list) list.push(a)
      else asked.set(rc, [a])
    }
  let need = 0
  for (const [rc, amounts] of asked) {
    // Each own provider's free amount, and what the pieces on it give back, the largest first.
    const free: number[] = []
    const gives: number[][] = []
    const pairOf = new Map<number, number>()
    let pooled = 0
    const pools = new Set<number>()
    for (let k = 0; k < shape.pairs.length; k++) {
      if (shape.pairs[k].rc !== rc) continue
      if (shape.pairSharing[k]) pools.add(shape.poolPair[k])
      else {
        pairOf.set(k, free.length)
        free.push(w.free[at + k])
        gives.push([])
      }
    }
    for (const id of w.on(i)) {
      const p = w.pieces[id]
      if (!p.movable || pinned.has(id)) continue
      for (let x = 0; x < p.held.pairs.length; x++) {
        const q = pairOf.get(p.held.pairs[x])
        if (q !== undefined) gives[q].push(p.held.pairAmounts[x])
      }
    }
    for (const g of gives) g.sort((a, b) => b - a)
    if (amounts.length > 1) {
      const a = amounts.reduce((x, y) => x + y, 0)
      for (const g of pools) pooled += Math.max(0, w.poolFree[g])
      let lack = t * a - pooled - free.reduce((x, y) => x + Math.max(0, y), 0)
      const all = gives.flat().sort((x, y) => y - x)
      let k = 0
      while (lack > 0 && k < all.length) lack -= all[k++]
      if (lack > 0) return Infinity
      need = Math.max(need, k)
      continue
    }
    const a = amounts[0]
    const count = (x: number) => Math.max(0, Math.floor(x / a))
    for (const g of pools) pooled += count(w.poolFree[g])
    let base = pooled
    for (const f of free) base += count(f)
    if (base >= t) continue
    // The fewest moves a provider's count rises by each amount; then over the providers.
    const extra = t - base
    let dp = new Float64Array(extra + 1).fill(Infinity)
    dp[0] = 0
    free.forEach((f, q) => {
      const next = dp.slice()
      let sum = f
      for (let e = 1; e <= gives[q].length; e++) {
        sum += gives[q][e - 1]
        const gain = count(sum) - count(f)
        if (gain <= 0) continue
        for (let v = 0; v <= extra; v++)
          if (dp[v] < Infinity) next[Math.min(extra, v + gain)] = Math.min(next[Math.min(extra, v + gain)], dp[v] + e)
      }
      dp = next
    })
    if (dp[extra] === Infinity) return Infinity
    need = Math.max(need, dp[extra])
  }
  return need
}
