/**
 * Capacity and usage summed per resource class over the whole cloud and per rack, row and room,
 * kept as the State changes: what the metrics report, at the cost of what changed since they were
 * last asked, not of the cloud.
 *
 * The cloud's sums follow every inventory and usage change exactly (State's mutation methods tell
 * them), from the first time they are asked. A rack's sums are its hosts' trees' (host.ts), as
 * topology-view.ts rolls them up: they follow usage and inventory changes below its members
 * exactly too, and a change of shape (a provider made, deleted or moved in its tree, its
 * aggregates changed, a rack made or removed) drops the sums of the racks it touches, added up
 * again when next asked. Rows and rooms add up their racks when asked. Something that touches
 * everything (a load, a class renamed) drops all of it.
 */
import type {Inventory, Provider, State, TopologyLevel, TopologyNode} from './state/state.js'
import type {StateListener} from './state/listener.js'
import {capacityOf} from './inventory-capacity.js'
import {CHILD_LEVEL, topologyTree} from './topology-view.js'
import {isSharing} from './host.js'

export interface Sums {
  /** Capacity per resource class: (total - reserved) * allocation_ratio, truncated, summed. */
  capacity: Map<string, number>
  used: Map<string, number>
}

export interface CloudSums extends Sums {
  providers: number
  /** Consumers that hold allocations. */
  holding: number
}

export interface TopologySums extends Sums {
  uuid: string
  name: string
  level: TopologyLevel
}

export class Rollups implements StateListener {
  /** Null until asked, and after a change that touched everything. */
  private cloud: {capacity: Map<string, number>; used: Map<string, number>; holding: number} | null = null
  /** The racks whose sums are kept; a rack not here is summed when asked. */
  private readonly racks = new Map<string, Sums>()

  constructor(private readonly s: State) {}

  /** The cloud's sums as the State is now. */
  cloudSums(): CloudSums {
    if (!this.cloud) this.cloud = sumCloud(this.s)
    return {capacity: this.cloud.capacity, used: this.cloud.used, holding: this.cloud.holding, providers: this.s.providers.size}
  }

  /**
   * Every room, row and rack reachable from the top of the topology as topology-view.ts shows it
   * (tops by level then name, children by name), each with its sums.
   */
  topologySums(): TopologySums[] {
    if (this.s.topology.size === 0) return []
    const {tops, childrenOf} = topologyTree(this.s)
    const out: TopologySums[] = []
    const visit = (n: TopologyNode): Sums => {
      const entry: TopologySums = {uuid: n.uuid, name: n.name, level: n.level, capacity: new Map(), used: new Map()}
      out.push(entry)
      if (CHILD_LEVEL[n.level] === null) addInto(entry, this.rackSums(n.uuid))
      else for (const c of childrenOf(n)) addInto(entry, visit(c))
      return entry
    }
    for (const n of tops) visit(n)
    return out
  }

  private rackSums(uuid: string): Sums {
    let sums = this.racks.get(uuid)
    if (!sums) {
      sums = {capacity: new Map(), used: new Map()}
      // Its hosts' trees (hostMembers); a root that holds no inventory adds nothing, so each
      // root that does not share is summed, as eachAbove counts every change under one.
      for (const m of this.s.aggregateMembers.get(uuid) ?? []) {
        const root = this.s.providers.get(m)
        if (!root || root.parent !== null || isSharing(root)) continue
        for (const p of this.s.subtree(m)) if (!isSharing(p)) addProvider(sums, p, 1)
      }
      this.racks.set(uuid, sums)
    }
    return sums
  }

  // ---- told by the State's mutation methods ----------------------------------------------

  /** Everything is to be summed again (a load, a class renamed, providers reordered). */
  forgetAll(): void {
    this.cloud = null
    this.racks.clear()
  }

  /** `p`'s inventory of `rc` goes from `before` to `after` (undefined: none). */
  inventory(p: Provider, rc: string, before: Inventory | undefined, after: Inventory | undefined): void {
    const d = (after ? capacityOf(after) : 0) - (before ? capacityOf(before) : 0)
    if (d !== 0) this.adjust(p, 'capacity', rc, d)
  }

  /** `p`'s usage of `rc` moves by `d`. */
  usage(p: Provider, rc: string, d: number): void {
    if (d !== 0) this.adjust(p, 'used', rc, d)
  }

  /** A consumer's allocations went from `before` to `after` providers. */
  holding(before: number, after: number): void {
    if (this.cloud && before > 0 !== after > 0) this.cloud.holding += after > 0 ? 1 : -1
  }

  /** `p` joins (1) or leaves (-1) the cloud with what it has; the racks above it are summed again. */
  provider(p: Provider, sign: 1 | -1): void {
    if (this.cloud) addProvider(this.cloud, p, sign)
    this.forgetRacksAbove(p)
  }

  /** What is under `p` moves to another tree, or `p`'s aggregates change: the racks that held or will hold it are summed again. */
  reshaped(p: Provider): void {
    this.forgetRacksAbove(p)
  }

  /** A rack made, removed or changed: summed again when asked. */
  topologyNode(uuid: string): void {
    this.racks.delete(uuid)
  }

  private adjust(p: Provider, kind: keyof Sums, rc: string, d: number): void {
    if (this.cloud) bump(this.cloud[kind], rc, d)
    this.eachAbove(p, (agg) => {
      const sums = this.racks.get(agg)
      if (sums) bump(sums[kind], rc, d)
    })
  }

  private forgetRacksAbove(p: Provider): void {
    this.eachAbove(p, (agg) => this.racks.delete(agg))
  }

  /**
   * Every aggregate of the host `p` gives resources of (its root's: racks hold hosts, host.ts);
   * none for a sharing provider. Nothing while no rack's sums are kept.
   */
  private eachAbove(p: Provider, fn: (aggregate: string) => void): void {
    if (this.racks.size === 0 || isSharing(p)) return
    const root = p.root === p.uuid ? p : this.s.providers.get(p.root)
    if (!root || root.parent !== null || isSharing(root)) return
    for (const agg of root.aggregates) fn(agg)
  }

  /** Whether a provider shares its inventory changed (rare): whether it or its tree counts in a rack changed, so every rack is summed again. */
  sharingChanged(): void {
    this.racks.clear()
  }
}

function sumCloud(s: State): {capacity: Map<string, number>; used: Map<string, number>; holding: number} {
  const sums = {capacity: new Map<string, number>(), used: new Map<string, number>(), holding: 0}
  for (const p of s.providers.values()) addProvider(sums, p, 1)
  for (const c of s.consumers.values()) if (c.allocations.size > 0) sums.holding++
  return sums
}

function addProvider(sums: Sums, p: Provider, sign: 1 | -1): void {
  for (const [rc, inv] of p.inventories) bump(sums.capacity, rc, sign * capacityOf(inv))
  for (const [rc, n] of p.usages) bump(sums.used, rc, sign * n)
}

function addInto(into: Sums, from: Sums): void {
  for (const [rc, n] of from.capacity) bump(into.capacity, rc, n)
  for (const [rc, n] of from.used) bump(into.used, rc, n)
}

/** Adds `d` to `m`'s value of `rc`. A class whose sum is 0 has no entry, however it came to 0 (the same summed anew or kept). */
function bump(m: Map<string, number>, rc: string, d: number): void {
  const v = (m.get(rc) ?? 0) + d
  if (v === 0) m.delete(rc)
  else m.set(rc, v)
}

const attached = new WeakMap<State, Rollups>()

/**
 * The rollups of `s`, attached as its listener the first time they are asked: from then on its
 * mutation methods tell them every change (before, nothing is kept, and nothing needs to be).
 */
export function rollupsOf(s: State): Rollups {
  let r = attached.get(s)
  if (!r) {
    r = new Rollups(s)
    attached.set(s, r)
    s.listener = r
  }
  return r
}
