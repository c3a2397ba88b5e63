/**
 * A host's eviction curve: the most of a flavor it holds with m of its pieces moved away, for
 * each m, and which m. Pieces holding the same amounts on the same providers are alike for the
 * count, so the sets tried are multisets of kinds of piece: every one of size 0, 1, 2, ... while
 * a budget of counts allows (exact up to `exactTo`), then one piece more at a time, the one that
 * helps most (the heuristic's sets). The lower bound of each m's count beyond `exactTo` is by
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

/**
 * Host `i`'s curve over its movable pieces but `pinned`, counting at most `budget` sets (beyond
 * it, greedily). `upTo`: no more than this many instances are wanted of it (counting stops there).
 */
export function evictionCurve(fit: FlavorFit, i: number, pinned: ReadonlySet<number>, budget: number, upTo: number): Curve {
  const {w} = fit
  const ids = [...w.on(i)].filter((id) => w.pieces[id].movable && !pinned.has(id))
  // Kinds of piece: the same pairs and amounts count alike.
  const kinds = new Map<string, number[]>()
  for (const id of ids) {
    const {pairs, pairAmounts} = w.pieces[id].held
    const key = Array.from(pairs, (k, t) => `${k}:${pairAmounts[t]}`).join(',')
    const list = kinds.get(key)
    if (list) list.push(id)
    else kinds.set(key, [id])
  }
  const groups = [...kinds.values()]
  const best = [fit.hostFit(i)]
  const sets: number[][] = [[]]
  const most = ids.length ? fit.fitWithout(i, ids) : best[0]
  let exactTo = 0
  let spent = 1
  const take = new Int32Array(groups.length)
  // Depth by depth, every multiset of kinds of that size.
  for (let m = 1; m <= ids.length && best[m - 1] < upTo; m++) {
    const size = multisets(groups, m)
    if (spent + size > budget) break
    spent += size
    let top = -1
    let topSet: number[] = []
    const visit = (g: number, left: number): void => {
      if (left === 0) {
        const set: number[] = []
        take.forEach((n, k) => {
          for (let x = 0; x < n; x++) set.push(groups[k][x])
        })
        const f = fit.fitWithout(i, set)
        if (f > top) [top, topSet] = [f, set]
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
    if (top > best[m - 1]) {
      best.push(top)
      sets.push(topSet)
    } else {
      best.push(best[m - 1])
      sets.push(sets[m - 1])
    }
    exactTo = m
  }
  // Greedily beyond: one piece more at a time, the one whose leaving counts most.
  let set = sets[sets.length - 1]
  for (let m = best.length; m <= ids.length && best[m - 1] < upTo && best[m - 1] < most; m++) {
    const taken = new Set(set)
    let top = -1
    let pick = -1
    for (const g of groups) {
      const id = g.find((x) => !taken.has(x))
      if (id === undefined) continue
      const f = fit.fitWithout(i, [...set, id])
      if (f > top || (f === top && weight(fit, id) > weight(fit, pick))) [top, pick] = [f, id]
    }
    if (pick < 0) break
    set = [...set, pick]
    if (top > best[m - 1]) {
      best.push(top)
      sets.push(set)
    } else {
      best.push(best[m - 1])
      sets.push(sets[m - 1])
    }
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
  if (id < 0) return -1
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
 * The fewest pieces host `i` must give back for `t` instances to fit, by class: each class the
 * flavor asks, t times, against what its tree and the pools it reaches have free; what lacks must
 * come from pieces moved away, the largest first. A lower bound (Infinity: not even all of them).
 */
export function classBound(fit: FlavorFit, i: number, t: number, pinned: ReadonlySet<number>): number {
  const {w} = fit
  const shape = w.forest.shapes[w.forest.shapeOf[i]]
  const at = w.forest.pairAt[i]
  let need = 0
  for (const [rc, a] of askedPerClass(fit.flavor.request)) {
    let free = 0
    const pools = new Set<number>()
    for (let k = 0; k < shape.pairs.length; k++) {
      if (shape.pairs[k].rc !== rc) continue
      if (shape.pairSharing[k]) pools.add(shape.poolPair[k])
      else free += Math.max(0, w.free[at + k])
    }
    for (const g of pools) free += Math.max(0, w.poolFree[g])
    let lack = t * a - free
    if (lack <= 0) continue
    const gives: number[] = []
    for (const id of w.on(i)) {
      const p = w.pieces[id]
      if (!p.movable || pinned.has(id)) continue
      let n = 0
      for (let x = 0; x < p.held.pairs.length; x++) if (shape.pairs[p.held.pairs[x]].rc === rc) n += p.held.pairAmounts[x]
      if (n > 0) gives.push(n)
    }
    gives.sort((a, b) => b - a)
    let k = 0
    while (lack > 0 && k < gives.length) lack -= gives[k++]
    if (lack > 0) return Infinity
    need = Math.max(need, k)
  }
  return need
}
