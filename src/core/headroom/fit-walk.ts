/**
 * A host's count: its shape's candidates (tree-shapes.ts) claimed one after another with what is
 * free now, the first that still fits each time; with a domain's pools shared between its hosts;
 * and what binds once the count is done. The loops every capacity count runs, host after host.
 */
import {capacityOf} from '../inventory-capacity.js'
import type {HostForest, ShapeCandidates} from './tree-shapes.js'

/** What a host's count noted besides how many. */
export interface FitWalk {
  /** Whether any of them took from a pool. */
  tookFromPool: boolean
  /**
   * The pair (TreeShape.pairs) that binds once the count is done: of the candidates, the one
   * that comes closest to fitting once more, and its pair with the least left against what it
   * takes. -1 when the host has no candidate.
   */
  binding: number
}

/**
 * A binding's number, the same in every shape: a tree's own class by its number
 * (HostForest.classes), a pool's by classes.length + its pool pair; -1 for none.
 */
export function bindingOf(forest: HostForest, i: number, pair: number): number {
  if (pair < 0) return -1
  const shape = forest.shapes[forest.shapeOf[i]]
  return shape.pairSharing[pair] ? forest.classes.length + shape.poolPair[pair] : shape.pairClass[pair]
}

/** A binding's name: its class, and for a pool's `CLASS@pool name`. */
export function bindingName(forest: HostForest, binding: number): string | null {
  if (binding < 0) return null
  const C = forest.classes.length
  if (binding < C) return forest.classes[binding]
  const {provider, rc} = forest.poolPairs[binding - C]
  return `${rc}@${provider.name}`
}

/** What is free now of every host's pairs (HostForest.pairAt): capacity less usage (written into `out` when given). */
export function freeNow(forest: HostForest, out?: Float64Array): Float64Array {
  const free = out ?? new Float64Array(forest.pairAt[forest.hosts.length])
  for (let i = 0; i < forest.hosts.length; i++) hostFreeNow(forest, i, free)
  return free
}

/** What is free now of host `i`'s pairs, written into `free` (after its usage changed). */
export function hostFreeNow(forest: HostForest, i: number, free: Float64Array): void {
  const {pairs, capacity} = forest.shapes[forest.shapeOf[i]]
  const base = forest.memberAt[i]
  const at = forest.pairAt[i]
  for (let k = 0; k < pairs.length; k++) {
    const {member, rc} = pairs[k]
    free[at + k] = capacity[k] - (forest.members[base + member].usages.get(rc) ?? 0)
  }
}

/** What is free now of every pool pair (HostForest.poolPairs): capacity less usage. */
export function poolFreeNow(forest: HostForest): Float64Array {
  return Float64Array.from(forest.poolPairs, ({provider, rc}) => {
    const inv = provider.inventories.get(rc)
    return inv ? capacityOf(inv) - (provider.usages.get(rc) ?? 0) : 0
  })
}

/** Free amounts of a host's pairs while its fit is counted (one host at a time). */
let scratch = new Float64Array(64)

/**
 * How many times host `i`'s candidates can be claimed one after another with `free` now
 * (freeNow): the first that still fits, as many times as it fits (usage only grows: one that no
 * longer fits never fits again, and the others keep their order). With `poolLeft` (poolFreeNow,
 * drawn on by the hosts counted before this one), the host's pools hold what is left there, and
 * what it takes is taken from it: claims one after another over a domain's hosts in the engine's
 * order (a host's candidates all come before the next host's), each pool shared.
 */
export function fitOneAfterAnother(
  forest: HostForest,
  i: number,
  c: ShapeCandidates,
  free: Float64Array,
  poolLeft?: Float64Array | null,
  walk?: FitWalk,
): number {
  const at = forest.pairAt[i]
  const n = forest.pairAt[i + 1] - at
  if (scratch.length < n) scratch = new Float64Array(n * 2)
  const left = scratch
  const {poolPair, pairSharing} = forest.shapes[forest.shapeOf[i]]
  for (let k = 0; k < n; k++) left[k] = poolLeft && pairSharing[k] ? poolLeft[poolPair[k]] : free[at + k]
  const {start, pair, amount} = c
  let fit = 0
  let tookFromPool = false
  for (let j = 0; j + 1 < start.length; j++) {
    const to = start[j + 1]
    let times = Infinity
    for (let t = start[j]; t < to; t++) times = Math.min(times, Math.floor(left[pair[t]] / amount[t]))
    if (!(times >= 1)) continue
    fit += times
    for (let t = start[j]; t < to; t++) {
      left[pair[t]] -= amount[t] * times
      if (pairSharing[pair[t]]) tookFromPool = true
    }
  }
  if (poolLeft && tookFromPool) for (let k = 0; k < n; k++) if (pairSharing[k]) poolLeft[poolPair[k]] = left[k]
  if (walk) {
    walk.tookFromPool = tookFromPool
    let closest = -Infinity
    walk.binding = -1
    for (let j = 0; j + 1 < start.length; j++) {
      let most = Infinity
      let binds = -1
      for (let t = start[j]; t < start[j + 1]; t++) {
        const r = left[pair[t]] / amount[t]
        if (r < most) [most, binds] = [r, pair[t]]
      }
      if (most > closest) [closest, walk.binding] = [most, binds]
    }
  }
  return fit
}
