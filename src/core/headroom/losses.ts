/**
 * N+1 in one call: every domain of a level (each host, rack, row or room) lost in turn, its
 * consumers placed again as a claim would place them (what-if.ts: largest first, the first
 * candidate its groups allow, disabled hosts avoided), and how many more of each flavor the
 * cloud then holds. Each loss is what `whatIf({without: [domain]})` and the cloud's headroom
 * after it answer, worked out without a copy of the cloud per loss: one copy, on which each loss
 * takes its consumers off, places them again, is counted, and is put back. The count after a
 * loss walks again only the hosts whose usage it moved and those that reach a pool (a pool's
 * hosts draw on it one after the other), so a loss costs what it moves, not the cloud.
 */
import {Changes} from '../state/changes.js'
import {fitOneAfterAnother, hostFreeNow, poolFreeNow, freeNow} from './fit-walk.js'
import type {FlavorRequest} from './flavors.js'
import {hostFits} from './headroom.js'
import type {Consumer, State} from '../state/state.js'
import {hostDomains} from '../topology.js'
import {candidatesByHost, hostForest, type HostForest, type ShapeCandidates} from './tree-shapes.js'
import {copyState, displace, placeAll, type LostDomain} from './what-if.js'

export interface Loss {
  level: LostDomain['level']
  name: string
  /** The hosts lost with it. */
  hosts: number
  /** The consumers they held, and those no host could take again. */
  displaced: number
  unplaced: number
  survives: boolean
  /** How many more of each flavor (in the order asked) the cloud holds after the loss. */
  fit: number[]
}

/** What the cloud holds of one flavor, host by host, before any loss. */
interface FlavorBase {
  /** Each host's own fit (counted alone), and its candidates (undefined: it could never hold the flavor). */
  fit: Float64Array
  candidates: Array<ShapeCandidates | undefined>
  /** 1 where the host's candidates take from a pool. */
  reaching: Uint8Array
  /** Those hosts that are enabled, by pool component (poolComponents), in host order. */
  walked: Int32Array[]
  /** What each component's hosts hold before any loss (drawing on their pools one after the other). */
  walkedSum: Float64Array
  /** The sum over enabled hosts that reach no pool. */
  ownSum: number
}

/**
 * Hosts that reach pools, told apart by the pools they share (a host reaching two pools joins
 * them): what a loss does not touch, its hosts hold as before. Each pool pair's component, and
 * each host's (-1: it reaches none).
 */
function poolComponents(forest: HostForest): {ofPair: Int32Array; ofHost: Int32Array; count: number} {
  const parent = Int32Array.from(forest.poolPairs, (_, g) => g)
  const find = (g: number): number => {
    while (parent[g] !== g) g = parent[g] = parent[parent[g]]
    return g
  }
  for (const shape of forest.shapes) {
    const pools = shape.poolPair.filter((g) => g >= 0)
    for (const g of pools) parent[find(g)] = find(pools[0])
  }
  const number = new Map<number, number>()
  const ofPair = Int32Array.from(forest.poolPairs, (_, g) => {
    const root = find(g)
    if (!number.has(root)) number.set(root, number.size)
    return number.get(root)!
  })
  const ofHost = Int32Array.from(forest.hosts, (_, i) => {
    const g = forest.shapes[forest.shapeOf[i]].poolPair.find((x) => x >= 0)
    return g === undefined ? -1 : ofPair[g]
  })
  return {ofPair, ofHost, count: number.size}
}

/** The hosts of `walked` (but the lost ones) drawing on their pools one after the other, from what the pools hold. */
function walkPools(
  forest: HostForest,
  base: FlavorBase,
  walked: Int32Array,
  free: Float64Array,
  poolFree: Float64Array,
  lost: Uint8Array,
): number {
  let sum = 0
  let left: Float64Array | null = null
  for (const i of walked) if (!lost[i]) sum += fitOneAfterAnother(forest, i, base.candidates[i]!, free, (left ??= poolFree.slice()))
  return sum
}

/** The losses of every domain of `level` in turn, in name order, one at a time (a caller may pause between them). */
export function* lossesOneByOne(s: State, level: LostDomain['level'], flavors: readonly FlavorRequest[]): Generator<Loss> {
  const work = copyState(s)
  const forest = hostForest(work)
  const {hosts, disabled} = forest
  const n = hosts.length
  const free = freeNow(forest)
  const poolFreeBefore = poolFreeNow(forest)
  const components = poolComponents(forest)
  const lostMask = new Uint8Array(n)
  const bases: FlavorBase[] = flavors.map((flavor) => {
    const fits = hostFits(work, forest, free, flavor)
    const base: FlavorBase = {
      fit: fits.fit,
      candidates: new Array(n),
      reaching: new Uint8Array(n),
      walked: [],
      walkedSum: new Float64Array(components.count),
      ownSum: 0,
    }
    const walked: number[][] = Array.from({length: components.count}, () => [])
    const candidatesOf = candidatesByHost(work, forest, flavor.request)
    for (let i = 0; i < n; i++) {
      if (!fits.eligible[i]) continue
      const c = candidatesOf(i)
      base.candidates[i] = c
      if (c.sharing) {
        base.reaching[i] = 1
        if (!disabled[i]) walked[components.ofHost[i]].push(i)
      } else if (!disabled[i]) base.ownSum += fits.fit[i]
    }
    base.walked = walked.map((w) => Int32Array.from(w))
    base.walked.forEach((w, k) => {
      base.walkedSum[k] = walkPools(forest, base, w, free, poolFreeBefore, lostMask)
    })
    return base
  })
  const hostNumber = new Map(hosts.map((h, i) => [h.uuid, i]))
  const rootOf = (provider: string): number => hostNumber.get(work.providers.get(provider)?.root ?? '') ?? -1
  // The consumers each host holds (what a loss displaces), and the domains of the level.
  const held = new Map<number, Consumer[]>()
  for (const c of work.consumers.values())
    for (const i of new Set([...c.allocations.keys()].map(rootOf)))
      if (i >= 0) {
        const list = held.get(i)
        if (list) list.push(c)
        else held.set(i, [c])
      }
  const domains = new Map<string, number[]>()
  hosts.forEach((h, i) => {
    const name = level === 'host' ? h.name : hostDomains(work, h)[level]
    if (name === null) return
    const list = domains.get(name)
    if (list) list.push(i)
    else domains.set(name, [i])
  })
  for (const name of [...domains.keys()].sort()) {
    const lost = domains.get(name)!
    for (const i of lost) lostMask[i] = 1
    const lostRoots = new Set(lost.map((i) => hosts[i].uuid))
    const among = new Set(lost.flatMap((i) => held.get(i) ?? []))
    const before = new Map([...among].map((c) => [c, c.allocations]))
    work.changes = new Changes()
    const displaced = displace(work, among, lostRoots)
    work.version += 1
    const placed = placeAll(work, displaced, lostRoots)
    // The hosts the placed consumers went to (or left, beside a lost one): their free amounts, and their own fits, move.
    const moved = new Set<number>()
    for (const [c, allocations] of before)
      for (const p of [...allocations.keys(), ...c.allocations.keys()]) if (rootOf(p) >= 0 && !lostMask[rootOf(p)]) moved.add(rootOf(p))
    for (const i of moved) hostFreeNow(forest, i, free)
    const poolFree = poolFreeNow(forest)
    // The pool components the loss touched: a host lost or moved there, or a pool's free amount changed.
    const touched = new Set<number>()
    for (const i of [...lost, ...moved]) if (components.ofHost[i] >= 0) touched.add(components.ofHost[i])
    poolFree.forEach((x, g) => {
      if (x !== poolFreeBefore[g]) touched.add(components.ofPair[g])
    })
    const fit = bases.map((base) => {
      let sum = base.ownSum
      for (const i of lost) if (!disabled[i] && !base.reaching[i]) sum -= base.fit[i]
      for (const i of moved) {
        const c = base.candidates[i]
        if (c && !disabled[i] && !base.reaching[i]) sum += fitOneAfterAnother(forest, i, c, free) - base.fit[i]
      }
      // Hosts that reach a pool, in host order, each with what those before it left there: again
      // where the loss touched their pools, as before elsewhere.
      base.walked.forEach((walked, k) => {
        sum += touched.has(k) ? walkPools(forest, base, walked, free, poolFree, lostMask) : base.walkedSum[k]
      })
      return sum
    })
    const unplaced = placed.filter((d) => d.to === null).length
    yield {level, name, hosts: lost.length, displaced: placed.length, unplaced, survives: unplaced === 0, fit}
    // Put back: each consumer where it was, and the moved hosts' free amounts with them.
    for (const [c, allocations] of before) work.setAllocations(c, allocations)
    work.version += 1
    for (const i of moved) hostFreeNow(forest, i, free)
    for (const i of lost) lostMask[i] = 0
  }
  work.changes = null
}

/** N+1 as one table: each loss, its fits by flavor, and the worst each flavor is left with. */
export interface LossesAnswer {
  without_each: LostDomain['level']
  losses: Array<Omit<Loss, 'fit'> & {fit: Record<string, number>}>
  /** The least each flavor's fit comes to over the losses (none: nothing to lose). */
  worst: Record<string, number>
  /** Whether every loss's consumers all found a place again. */
  survives: boolean
}

/** The losses of `level` in turn, as one table (the rows of lossesOneByOne, however they were paced). */
export function lossesAnswer(level: LostDomain['level'], flavors: readonly FlavorRequest[], losses: Iterable<Loss>): LossesAnswer {
  const answer: LossesAnswer = {without_each: level, losses: [], worst: {}, survives: true}
  for (const loss of losses) {
    const fit: Record<string, number> = {}
    flavors.forEach((f, k) => {
      fit[f.flavor] = loss.fit[k]
      answer.worst[f.flavor] = Math.min(answer.worst[f.flavor] ?? Infinity, loss.fit[k])
    })
    answer.losses.push({...loss, fit})
    if (!loss.survives) answer.survives = false
  }
  return answer
}
