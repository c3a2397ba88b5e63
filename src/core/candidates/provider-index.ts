/**
 * The provider index: everything the search needs about the providers of one State, in typed
 * arrays (capacities, tree layout, lazy sharing anchors and summaries), cached per State.
 */
import type {Provider, State} from '../state.js'
import type {ProviderSummary, SummaryResource} from './types.js'

const SHARES = 'MISC_SHARES_VIA_AGGREGATE'

export interface RcInv {
  /** Providers with an inventory of this class, in provider order. */
  provs: Int32Array
  /** Inventory slot of each entry of provs. */
  slots: Int32Array
  /** provider -> slot, or -1; built on first use. */
  slotOf: Int32Array | null
}

/**
 * Everything the search needs about the providers, in typed arrays. Built from scratch when
 * the provider structure changes (providers, parents, inventories, traits, aggregates, class
 * names); after a change of usages only (allocations) it is revalidated in one cheap pass and
 * kept, and usages are re-read lazily per inventory slot.
 */
export class Index {
  version: number
  /** state.shapeVersion indexed: while it holds, only usages (and generations) can differ. */
  shapeVersion: number
  readonly n: number
  readonly provs: Provider[]
  private idxMap: Map<string, number> | null = null
  readonly parent: Int32Array
  readonly root: Int32Array
  readonly depth: Int32Array
  readonly isSharing: Uint8Array
  hasTrees = false
  anySharing = false
  readonly rcs = new Map<string, RcInv>()
  // Inventory slots, contiguous per provider: slots provSlot[i] .. provSlot[i+1]-1.
  readonly provSlot: Int32Array
  readonly slotProv: Int32Array
  readonly slotRc: string[]
  readonly slotCap: Float64Array // (total - reserved) * allocation_ratio, unrounded as in Placement's SQL
  readonly slotMin: Float64Array
  readonly slotMax: Float64Array
  readonly slotStep: Float64Array
  private readonly slotUsed: Float64Array
  private readonly slotUsedEpoch: Int32Array
  private epoch = 1
  // Tree members (index order) of each root r: treeMem[treeOff[r] .. treeOff[r+1]).
  readonly treeOff: Int32Array
  readonly treeMem: Int32Array
  // Scratch: acc and isoCount are always left zeroed; stamp works by generations.
  readonly acc: Float64Array
  readonly isoCount: Int32Array
  readonly stamp: Int32Array
  private stampGen = 0
  // Fingerprints of the structure.
  private readonly fpGen: Float64Array
  private readonly fpParent: (string | null)[]
  private readonly fpTraits: Set<string>[]
  private readonly fpAggs: Set<string>[]
  private readonly classesKey: string
  private sharingAnchorCache: (Int32Array | undefined)[] = []
  private summaryCache: (ProviderSummary | undefined)[] = []
  private readonly summaryEpoch: Int32Array

  constructor(readonly state: State) {
    this.version = state.version
    this.shapeVersion = state.shapeVersion
    this.classesKey = classesKey(state)
    const provs = (this.provs = [...state.providers.values()])
    const n = (this.n = provs.length)
    this.parent = new Int32Array(n)
    this.root = new Int32Array(n)
    this.depth = new Int32Array(n)
    this.isSharing = new Uint8Array(n)
    this.isoCount = new Int32Array(n)
    this.stamp = new Int32Array(n)
    this.fpGen = new Float64Array(n)
    this.fpParent = new Array(n)
    this.fpTraits = new Array(n)
    this.fpAggs = new Array(n)
    this.summaryEpoch = new Int32Array(n)
    this.provSlot = new Int32Array(n + 1)
    let slots = 0
    let lookups = false
    for (let i = 0; i < n; i++) {
      const p = provs[i]
      slots += p.inventories.size
      if (p.parent !== null) this.hasTrees = true
      if (p.parent !== null || p.root !== p.uuid) lookups = true
    }
    // A forest of lone roots needs no uuid lookups; otherwise resolve parents and roots.
    const idxOf = lookups ? this.idx() : null
    this.slotProv = new Int32Array(slots)
    this.slotRc = new Array(slots)
    const slotRcId = new Int32Array(slots)
    this.slotCap = new Float64Array(slots)
    this.slotMin = new Float64Array(slots)
    this.slotMax = new Float64Array(slots)
    this.slotStep = new Float64Array(slots)
    this.slotUsed = new Float64Array(slots)
    this.slotUsedEpoch = new Int32Array(slots)
    this.acc = new Float64Array(slots)
    const rcIds = new Map<string, number>()
    const rcCount: number[] = []
    let s = 0
    for (let i = 0; i < n; i++) {
      const p = provs[i]
      this.fpGen[i] = p.generation
      this.fpParent[i] = p.parent
      this.fpTraits[i] = p.traits
      this.fpAggs[i] = p.aggregates
      if (idxOf) {
        this.parent[i] = p.parent === null ? -1 : (idxOf.get(p.parent) ?? -1)
        this.root[i] = idxOf.get(p.root) ?? i
      } else {
        this.parent[i] = -1
        this.root[i] = i
      }
      if (p.traits.has(SHARES)) {
        this.isSharing[i] = 1
        this.anySharing = true
      }
      this.provSlot[i] = s
      for (const [rc, v] of p.inventories) {
        let id = rcIds.get(rc)
        if (id === undefined) {
          rcIds.set(rc, (id = rcCount.length))
          rcCount.push(0)
        }
        rcCount[id]++
        slotRcId[s] = id
        this.slotProv[s] = i
        this.slotRc[s] = rc
        this.slotCap[s] = (v.total - v.reserved) * v.allocation_ratio
        this.slotMin[s] = v.min_unit
        this.slotMax[s] = v.max_unit
        this.slotStep[s] = v.step_size
        s++
      }
    }
    this.provSlot[n] = s
    const lists = rcCount.map((c) => ({provs: new Int32Array(c), slots: new Int32Array(c), slotOf: null, k: 0}))
    for (let t = 0; t < s; t++) {
      const l = lists[slotRcId[t]]
      l.provs[l.k] = this.slotProv[t]
      l.slots[l.k++] = t
    }
    for (const [rc, id] of rcIds) this.rcs.set(rc, {provs: lists[id].provs, slots: lists[id].slots, slotOf: null})
    if (idxOf) {
      this.depth.fill(-1)
      for (let i = 0; i < n; i++) this.depthOf(i)
    }
    const off = (this.treeOff = new Int32Array(n + 1))
    for (let i = 0; i < n; i++) off[this.root[i] + 1]++
    for (let i = 0; i < n; i++) off[i + 1] += off[i]
    const fill = off.slice(0, n)
    const mem = (this.treeMem = new Int32Array(n))
    for (let i = 0; i < n; i++) mem[fill[this.root[i]]++] = i
  }

  /** uuid -> provider index (built on first use). */
  idx(): Map<string, number> {
    if (!this.idxMap) {
      const m = (this.idxMap = new Map())
      for (let i = 0; i < this.n; i++) m.set(this.provs[i].uuid, i)
    }
    return this.idxMap
  }

  /**
   * Brings the index to the state's current version when only usages (or generations) changed;
   * false when the structure changed and the index must be rebuilt.
   */
  refresh(state: State): boolean {
    if (state.shapeVersion !== this.shapeVersion) {
      if (!this.sameShape(state)) return false
      this.shapeVersion = state.shapeVersion
    }
    this.version = state.version
    if (++this.epoch >= 0x7fffffff) {
      this.slotUsedEpoch.fill(0)
      this.summaryEpoch.fill(0)
      this.epoch = 1
    }
    return true
  }

  /** After a change of shape: is it still the one indexed (the change was undone, say)? */
  private sameShape(state: State): boolean {
    if (state.providers.size !== this.n || classesKey(state) !== this.classesKey) return false
    const {provs, fpGen, fpParent, fpTraits, fpAggs} = this
    let i = 0
    for (const p of state.providers.values()) {
      if (
        p !== provs[i] ||
        p.parent !== fpParent[i] ||
        p.traits !== fpTraits[i] ||
        p.aggregates !== fpAggs[i]
      ) {
        return false
      }
      if (p.generation !== fpGen[i]) {
        // Placement bumps the generation on every inventory change (and on allocations).
        if (!this.sameInventories(i, p)) return false
        fpGen[i] = p.generation
      }
      i++
    }
    return true
  }

  private sameInventories(i: number, p: Provider): boolean {
    let s = this.provSlot[i]
    if (p.inventories.size !== this.provSlot[i + 1] - s) return false
    for (const [rc, v] of p.inventories) {
      if (
        this.slotRc[s] !== rc ||
        this.slotCap[s] !== (v.total - v.reserved) * v.allocation_ratio ||
        this.slotMin[s] !== v.min_unit ||
        this.slotMax[s] !== v.max_unit ||
        this.slotStep[s] !== v.step_size
      ) {
        return false
      }
      s++
    }
    return true
  }

  private depthOf(i: number): number {
    if (this.depth[i] >= 0) return this.depth[i]
    const chain: number[] = []
    let j = i
    while (j >= 0 && this.depth[j] < 0 && chain.length <= this.n) {
      chain.push(j)
      j = this.parent[j]
    }
    let d = j >= 0 && this.depth[j] >= 0 ? this.depth[j] : -1
    for (let k = chain.length - 1; k >= 0; k--) this.depth[chain[k]] = ++d
    return this.depth[i]
  }

  slotOf(inv: RcInv): Int32Array {
    if (!inv.slotOf) {
      const a = new Int32Array(this.n).fill(-1)
      for (let k = 0; k < inv.provs.length; k++) a[inv.provs[k]] = inv.slots[k]
      inv.slotOf = a
    }
    return inv.slotOf
  }

  /** Current usage of inventory slot s (read from the provider once per version). */
  used(s: number): number {
    if (this.slotUsedEpoch[s] !== this.epoch) {
      this.slotUsed[s] = this.provs[this.slotProv[s]].usages.get(this.slotRc[s]) ?? 0
      this.slotUsedEpoch[s] = this.epoch
    }
    return this.slotUsed[s]
  }

  /** Can `amount` be taken from inventory slot s (Placement's per-class capacity query)? */
  fits(s: number, amount: number): boolean {
    return (
      this.slotMin[s] <= amount &&
      this.slotMax[s] >= amount &&
      amount % this.slotStep[s] === 0 &&
      this.used(s) + amount <= this.slotCap[s]
    )
  }

  nextStamp(): number {
    if (++this.stampGen >= 0x7fffffff) {
      this.stamp.fill(0)
      this.stampGen = 1
    }
    return this.stampGen
  }

  /** Roots of every provider sharing an aggregate with p (anchors_for_sharing_providers). */
  sharingAnchors(p: number): Int32Array {
    let a = this.sharingAnchorCache[p]
    if (a) return a
    const gen = this.nextStamp()
    const out: number[] = []
    const idxOf = this.idx()
    for (const agg of this.provs[p].aggregates) {
      const members = this.state.aggregateMembers.get(agg)
      if (!members) continue
      for (const u of members) {
        const i = idxOf.get(u)
        if (i === undefined) continue
        const r = this.root[i]
        if (this.stamp[r] !== gen) {
          this.stamp[r] = gen
          out.push(r)
        }
      }
    }
    a = Int32Array.from(out).sort()
    this.sharingAnchorCache[p] = a
    return a
  }

  /** provider_summaries entry of provider i, with current usages (cached while they hold). */
  summary(i: number): ProviderSummary {
    let sum = this.summaryCache[i]
    if (sum && this.summaryEpoch[i] === this.epoch) return sum
    const from = this.provSlot[i]
    const to = this.provSlot[i + 1]
    if (sum) {
      let same = true
      for (let s = from; s < to && same; s++) same = sum.resources[s - from].used === this.used(s)
      if (same) {
        this.summaryEpoch[i] = this.epoch
        return sum
      }
    }
    const resources: SummaryResource[] = []
    for (let s = from; s < to; s++) {
      resources.push({rc: this.slotRc[s], capacity: Math.trunc(this.slotCap[s]), used: this.used(s)})
    }
    if (sum) sum = {...sum, resources}
    else {
      const p = this.provs[i]
      const ids = this.state.traits
      const traits = [...p.traits].sort((a, b) => (ids.get(a)?.id ?? 0) - (ids.get(b)?.id ?? 0))
      sum = {uuid: p.uuid, parentUuid: p.parent, rootUuid: this.provs[this.root[i]].uuid, resources, traits}
    }
    this.summaryCache[i] = sum
    this.summaryEpoch[i] = this.epoch
    return sum
  }
}

function classesKey(state: State): string {
  let k = ''
  for (const name of state.classes.keys()) k += name + ','
  return k
}

const indexes = new WeakMap<State, Index>()

/** The index of `state` at its current version. */
export function getIndex(state: State): Index {
  let ix = indexes.get(state)
  if (ix && (ix.version === state.version || ix.refresh(state))) return ix
  ix = new Index(state)
  indexes.set(state, ix)
  return ix
}

/** For tests and diagnostics: drops the cached index of a state. */
export function dropIndex(state: State): void {
  indexes.delete(state)
}
