/**
 * What a plan must reach, each with a lower bound of the moves still needed from where the World
 * is (a search prunes with it; a plan meeting it is the fewest):
 *   room       K more of a flavor fit in the domain (fit.ts counts as capacity does). Each move
 *              empties part of one host, so the bound asks, of the domain's hosts, which ones to
 *              empty and how far: each host's eviction curve (curves.ts: the most it holds with m
 *              pieces moved away, exact up to some m, by class beyond) and the fewest moves over
 *              hosts whose counts add up to K (bound.ts). Where evicted pieces go is left out
 *              (they need a place; that only adds), and a domain's hosts drawing on one pool are
 *              each counted with all of it (which only adds too, as long as a host's count never
 *              falls when room is given back: so for every flavor of one group).
 *   empty      N hosts of the domain empty: the N - (empty now) hosts with fewest pieces, each piece
 *              moved at least once.
 *   drained    every host of the domain empty: every piece on them moved at least once.
 */
import {fewestMoves, type HostOptions} from './bound.js'
import {classBound, evictionCurve, type Curve} from './curves.js'
import type {FlavorFit} from './fit.js'
import type {World} from './world.js'

export interface Goal {
  /** What it counts now: instances that fit, hosts empty, or pieces left in the domain. */
  value(): number
  met(): boolean
  /** The fewest moves still needed from here (a lower bound; Infinity: no moves can do). */
  bound(): number
  /** The domain's hosts (1 where in it). */
  readonly inDomain: Uint8Array
  /** Told when the exact search starts: it asks the bound at every state, so the bound may be made cheaper. */
  searching?(): void
}

/**
 * Counts a host's curve may spend, each time it is made: 4,000, or a share of 150,000 over the
 * domain's hosts (a cloud of 10,000 hosts counts each host's curve exactly for one or two pieces
 * moved, by class beyond); in a search, which makes curves at every state it reaches, 200.
 */
const CURVE_BUDGET = 4000
const DOMAIN_BUDGET = 150000
const SEARCH_CURVE_BUDGET = 200

export class RoomGoal implements Goal {
  readonly inDomain: Uint8Array
  private readonly curves = new Map<number, {version: number; pool: number; pinned: number; curve: Curve}>()
  private readonly byContent = new Map<string, Curve>()
  /** Pieces the heuristic found no place for, by host: left out of that host's curve. */
  readonly pinned = new Map<number, Set<number>>()
  private pinnedVersion = 0

  private budget: number

  constructor(
    readonly fit: FlavorFit,
    readonly count: number,
  ) {
    this.inDomain = fit.inDomain
    this.budget = Math.min(CURVE_BUDGET, Math.max(SEARCH_CURVE_BUDGET / 10, Math.floor(DOMAIN_BUDGET / Math.max(1, fit.hosts.length))))
  }

  searching(): void {
    this.budget = SEARCH_CURVE_BUDGET
    this.byContent.clear()
  }

  value(): number {
    return this.fit.fit()
  }

  met(): boolean {
    return this.fit.fit() >= this.count
  }

  pin(host: number, piece: number): void {
    let set = this.pinned.get(host)
    if (!set) this.pinned.set(host, (set = new Set()))
    set.add(piece)
    this.pinnedVersion++
  }

  /**
   * Host `i`'s curve where the World is now: over every piece that may move (for the bound), or
   * (`pinned`) without those the heuristic found no place for.
   */
  curve(i: number, pinned = false): Curve {
    const {w} = this.fit
    if (!pinned) {
      // By what the host holds (a search comes back to the same hosts again and again).
      const key = this.contentKey(i)
      let curve = this.byContent.get(key)
      if (!curve) {
        if (this.byContent.size > 100000) this.byContent.clear()
        // The bound reads only the sizes counted in full: no beam.
        this.byContent.set(key, (curve = evictionCurve(this.fit, i, NO_PINS, this.budget, this.count, false)))
      }
      return curve
    }
    const kept = this.curves.get(i)
    if (kept && kept.version === w.version[i] && kept.pool === w.poolVersion && kept.pinned === this.pinnedVersion) return kept.curve
    const curve = evictionCurve(this.fit, i, this.pinned.get(i) ?? NO_PINS, this.budget, this.count)
    this.curves.set(i, {version: w.version[i], pool: w.poolVersion, pinned: this.pinnedVersion, curve})
    return curve
  }

  /** What host `i` holds, piece by piece, and what its pools have free: all its curve depends on. */
  private contentKey(i: number): string {
    const {w} = this.fit
    let key: string
    if (this.budget === SEARCH_CURVE_BUDGET) key = `${i}|${w.hostHash(i)}`
    else {
      const parts: string[] = []
      for (const id of w.on(i)) {
        const p = w.pieces[id]
        parts.push(`${p.movable ? '' : '!'}${p.held.pairs.join(',')}=${p.held.pairAmounts.join(',')}`)
      }
      key = `${i}|${parts.sort().join(';')}`
    }
    const {poolPair} = w.forest.shapes[w.forest.shapeOf[i]]
    for (const g of poolPair) if (g >= 0) key += `|${w.poolFree[g]}`
    return key
  }

  /** The hosts that count (enabled, and could hold the flavor), in host order. */
  hosts(): number[] {
    return this.fit.hosts.filter((i) => this.fit.counts(i))
  }

  /** Each counting host's options for the bound: (fewest moves, instances), exact up to its curve's exactTo, by class beyond. */
  boundOptions(hosts: readonly number[]): HostOptions[] {
    return hosts.map((i) => {
      const c = this.curve(i)
      const cost: number[] = []
      const gain: number[] = []
      for (let m = 0; m <= c.exactTo && m < c.best.length; m++) {
        if (m > 0 && c.best[m] === c.best[m - 1]) continue
        cost.push(m)
        gain.push(c.best[m])
      }
      const top = Math.min(c.most, this.count)
      const exactAll = c.exactTo >= c.pieces
      let t = c.best[Math.min(c.exactTo, c.best.length - 1)] + 1
      for (; !exactAll && t <= top; t++) {
        const m = Math.max(c.exactTo + 1, classBound(this.fit, i, t, NO_PINS))
        if (m === Infinity) break
        if (cost[cost.length - 1] === m) gain[gain.length - 1] = t
        else {
          cost.push(m)
          gain.push(t)
        }
      }
      return {cost, gain}
    })
  }

  /** Each counting host's options the heuristic can make: (m, best[m]) with its curve's sets. */
  reachOptions(hosts: readonly number[]): HostOptions[] {
    return hosts.map((i) => {
      const c = this.curve(i, true)
      const cost: number[] = []
      const gain: number[] = []
      for (let m = 0; m < c.best.length; m++) {
        if (m > 0 && c.best[m] === c.best[m - 1]) continue
        cost.push(m)
        gain.push(c.best[m])
      }
      return {cost, gain}
    })
  }

  bound(): number {
    if (this.short()) return Infinity
    const hosts = this.hosts()
    return fewestMoves(this.boundOptions(hosts), this.count).cost
  }

  /**
   * A class K instances ask more of than every enabled host and pool has free together: what moves
   * into the domain's hosts must leave room elsewhere, so no moves can make room for them. Null when none.
   */
  short(): Short | null {
    const asked = new Map<string, number>()
    for (const g of this.fit.flavor.request.groups) for (const [rc, a] of g.resources) asked.set(rc, (asked.get(rc) ?? 0) + a)
    const {own, pools} = classTotals(this.fit.w, [])
    for (const [rc, a] of asked) {
      const free = (own.get(rc)?.total ?? 0) + (pools.get(rc) ?? 0)
      if (this.count * a > free) return {rc, held: this.count * a, free}
    }
    return null
  }
}

const NO_PINS: ReadonlySet<number> = new Set()

/** N hosts of the domain empty (or, with `all`, every one of them). */
export class EmptyGoal implements Goal {
  readonly inDomain: Uint8Array

  constructor(
    readonly w: World,
    readonly hosts: readonly number[],
    readonly count: number,
  ) {
    this.inDomain = new Uint8Array(w.n)
    for (const i of hosts) this.inDomain[i] = 1
  }

  value(): number {
    let n = 0
    for (const i of this.hosts) if (this.w.on(i).size === 0) n++
    return n
  }

  met(): boolean {
    return this.value() >= this.count
  }

  /** Whether host `i` can ever be emptied: every piece on it may move. */
  emptiable(i: number): boolean {
    for (const id of this.w.on(i)) if (!this.w.pieces[id].movable) return false
    return true
  }

  bound(): number {
    const sizes: number[] = []
    let empty = 0
    for (const i of this.hosts) {
      const n = this.w.on(i).size
      if (n === 0) empty++
      else if (this.emptiable(i)) sizes.push(n)
    }
    const need = this.count - empty
    if (need <= 0) return 0
    if (sizes.length < need || this.short() !== null) return Infinity
    sizes.sort((a, b) => a - b)
    let sum = 0
    for (let k = 0; k < need; k++) sum += sizes[k]
    return sum
  }

  /**
   * A class the hosts to empty hold more of than the other enabled hosts (and the pools) have
   * free, whichever hosts are chosen: the least any `need` of them hold, against all that is free
   * but the least any `need` of them have free. Null when none.
   */
  short(): Short | null {
    const {w} = this
    const candidates = this.hosts.filter((i) => w.on(i).size > 0 && this.emptiable(i))
    const need = this.count - (this.hosts.length - this.hosts.filter((i) => w.on(i).size > 0).length)
    if (need <= 0 || candidates.length < need) return null
    const {held, own, pools} = classTotals(w, candidates)
    for (const [rc, amounts] of held) {
      const least = (xs: number[]) =>
        [...xs]
          .sort((a, b) => a - b)
          .slice(0, need)
          .reduce((a, b) => a + b, 0)
      const free = (own.get(rc)?.total ?? 0) + (pools.get(rc) ?? 0) - least(candidates.map((i) => own.get(rc)?.of[i] ?? 0))
      const holds = least(amounts)
      if (holds > free) return {rc, held: holds, free}
    }
    return null
  }
}

/** A class the pieces to move hold more of than is free where they may go. */
export interface Short {
  rc: string
  held: number
  free: number
}

/**
 * What the pieces on `hosts` hold of each class, host by host (in the order of `hosts`); what each
 * enabled host's tree has free of each class (and their total), and the pools.
 */
function classTotals(w: World, hosts: readonly number[]) {
  const held = new Map<string, number[]>()
  hosts.forEach((i, k) => {
    const {pairs} = w.forest.shapes[w.forest.shapeOf[i]]
    for (const id of w.on(i)) {
      const p = w.pieces[id]
      for (let t = 0; t < p.held.pairs.length; t++) {
        const rc = pairs[p.held.pairs[t]].rc
        let list = held.get(rc)
        if (!list) held.set(rc, (list = new Array(hosts.length).fill(0)))
        list[k] += p.held.pairAmounts[t]
      }
    }
  })
  const own = new Map<string, {of: Float64Array; total: number}>()
  for (let j = 0; j < w.n; j++) {
    if (!w.enabled[j]) continue
    const shape = w.forest.shapes[w.forest.shapeOf[j]]
    const at = w.forest.pairAt[j]
    for (let k = 0; k < shape.pairs.length; k++) {
      if (shape.pairSharing[k]) continue
      const {rc} = shape.pairs[k]
      let x = own.get(rc)
      if (!x) own.set(rc, (x = {of: new Float64Array(w.n), total: 0}))
      const f = Math.max(0, w.free[at + k])
      x.of[j] += f
      x.total += f
    }
  }
  const pools = new Map<string, number>()
  w.forest.poolPairs.forEach(({rc}, g) => pools.set(rc, (pools.get(rc) ?? 0) + Math.max(0, w.poolFree[g])))
  return {held, own, pools}
}

/** Every host of the domain empty. */
export class DrainGoal implements Goal {
  readonly inDomain: Uint8Array

  constructor(
    readonly w: World,
    readonly hosts: readonly number[],
  ) {
    this.inDomain = new Uint8Array(w.n)
    for (const i of hosts) this.inDomain[i] = 1
  }

  value(): number {
    let n = 0
    for (const i of this.hosts) n += this.w.on(i).size
    return n
  }

  met(): boolean {
    return this.value() === 0
  }

  bound(): number {
    let n = 0
    for (const i of this.hosts)
      for (const id of this.w.on(i)) {
        if (!this.w.pieces[id].movable) return Infinity
        n++
      }
    return n > 0 && this.short() !== null ? Infinity : n
  }

  /** A class the domain's pieces hold more of than the enabled hosts outside it (and the pools) have free; null when none. */
  short(): Short | null {
    const {held, own, pools} = classTotals(this.w, this.hosts)
    for (const [rc, amounts] of held) {
      const holds = amounts.reduce((a, b) => a + b, 0)
      let free = (own.get(rc)?.total ?? 0) + (pools.get(rc) ?? 0)
      for (const i of this.hosts) free -= own.get(rc)?.of[i] ?? 0
      if (holds > free) return {rc, held: holds, free}
    }
    return null
  }
}
