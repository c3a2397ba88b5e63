/**
 * The provider index: everything the search needs about the providers of one State, in typed
 * arrays (capacities, tree layout, lazy sharing anchors and summaries), cached per State and
 * kept current write by write (index-patch.ts): a write touches what it changed, not the cloud.
 */
import type {Provider, State} from '../state/state.js'
import type {ProviderSummary, SummaryResource} from './types.js'
import {ClassInventories, ensure} from './typed-arrays.js'
import {patchIndex} from './index-patch.js'
import {isSharing} from '../host.js'
import {GONE, NO_MEMBERS} from './index-constants.js'

export type RcInv = ClassInventories

/** One inventory set as slots take it: class (and its number in this index), capacity, units. */
interface InventoryShape {
  rc: string[]
  id: number[]
  cap: number[]
  min: number[]
  max: number[]
  step: number[]
}

/** `inventories` as slots, numbering classes not met before in `rcIds` (counted in `rcCount`). */
function inventoryShape(inventories: Provider['inventories'], rcIds: Map<string, number>, rcCount: number[]): InventoryShape {
  const shape: InventoryShape = {rc: [], id: [], cap: [], min: [], max: [], step: []}
  for (const [rc, v] of inventories) {
    let id = rcIds.get(rc)
    if (id === undefined) {
      rcIds.set(rc, (id = rcCount.length))
      rcCount.push(0)
    }
    shape.rc.push(rc)
    shape.id.push(id)
    shape.cap.push((v.total - v.reserved) * v.allocation_ratio)
    shape.min.push(v.min_unit)
    shape.max.push(v.max_unit)
    shape.step.push(v.step_size)
  }
  return shape
}

const NO_INVENTORIES = new ClassInventories(new Int32Array(0), new Int32Array(0))

/**
 * Everything the search needs about the providers, in typed arrays. Positions follow the
 * State's provider order; a provider added later takes the next position, a deleted one
 * leaves GONE in its place until the next rebuild. Usages are re-read lazily per inventory
 * slot after each change of version.
 */
export class Index {
  version: number
  /** state.shapeVersion indexed. */
  shapeVersion: number
  /** Positions, GONE ones included. */
  n: number
  /** Positions holding GONE. */
  gone = 0
  provs: Provider[]
  /** uuid -> position, built with the index (a write's patch must not pay O(cloud) for it). */
  private readonly idxMap = new Map<string, number>()
  parent: Int32Array
  root: Int32Array
  depth: Int32Array
  isSharing: Uint8Array
  /** Providers with a parent, and sharing providers: the search takes other paths without them. */
  children = 0
  sharing = 0
  readonly rcs = new Map<string, ClassInventories>()
  /**
   * The anchors a root_required / forbidden filter allows (rootAnchors), by filter, while the
   * shape stands: Nova sends root_required=!COMPUTE_STATUS_DISABLED with every query, and the
   * roots' traits change with the shape only.
   */
  readonly rootFilters = new Map<string, Uint8Array | false>()
  // Inventory slots of provider i: slotStart[i] .. slotStart[i] + slotCount[i] - 1. A provider
  // whose classes change takes a fresh range at the end; the old one is left unused.
  slotStart: Int32Array
  slotCount: Int32Array
  slots = 0
  unusedSlots = 0
  slotProv: Int32Array
  slotRc: string[]
  slotCap: Float64Array // (total - reserved) * allocation_ratio, unrounded as in Placement's SQL
  slotMin: Float64Array
  slotMax: Float64Array
  slotStep: Float64Array
  slotUsed: Float64Array
  slotUsedEpoch: Int32Array
  private epoch = 1
  // Tree members (index order) of each root r as built: treeMem[treeOff[r] .. treeOff[r+1]) for
  // r < builtN; trees changed since are in treeChanged; a root added since is alone unless there.
  private readonly treeOff: Int32Array
  private readonly treeMem: Int32Array
  private readonly builtN: number
  readonly treeChanged = new Map<number, Int32Array>()
  // Scratch: acc and isoCount are always left zeroed; stamp works by generations.
  acc: Float64Array
  isoCount: Int32Array
  stamp: Int32Array
  private stampGen = 0
  readonly sharingAnchorCache = new Map<number, Int32Array>()
  summaryCache: (ProviderSummary | undefined)[] = []
  summaryEpoch: Int32Array

  constructor(readonly state: State) {
    this.version = state.version
    this.shapeVersion = state.shapeVersion
    const provs = (this.provs = [...state.providers.values()])
    const n = (this.n = this.builtN = provs.length)
    this.parent = new Int32Array(n)
    this.root = new Int32Array(n)
    this.depth = new Int32Array(n)
    this.isSharing = new Uint8Array(n)
    this.isoCount = new Int32Array(n)
    this.stamp = new Int32Array(n)
    this.summaryEpoch = new Int32Array(n)
    this.slotStart = new Int32Array(n)
    this.slotCount = new Int32Array(n)
    let slots = 0
    let lookups = false
    const idxMap = this.idxMap
    for (let i = 0; i < n; i++) {
      const p = provs[i]
      slots += p.inventories.size
      idxMap.set(p.uuid, i)
      if (p.parent !== null || p.root !== p.uuid) lookups = true
    }
    // A forest of lone roots needs no uuid lookups; otherwise resolve parents and roots.
    const idxOf = lookups ? idxMap : null
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
    // Most providers share their inventory set with many others (state/shared-collections.ts): each
    // distinct one is read once.
    const shapes = new Map<Provider['inventories'], InventoryShape>()
    let s = 0
    for (let i = 0; i < n; i++) {
      const p = provs[i]
      if (idxOf) {
        this.parent[i] = p.parent === null ? -1 : (idxOf.get(p.parent) ?? -1)
        this.root[i] = idxOf.get(p.root) ?? i
        if (this.parent[i] >= 0) this.children++
      } else {
        this.parent[i] = -1
        this.root[i] = i
      }
      if (isSharing(p)) {
        this.isSharing[i] = 1
        this.sharing++
      }
      let shape = shapes.get(p.inventories)
      if (!shape) shapes.set(p.inventories, (shape = inventoryShape(p.inventories, rcIds, rcCount)))
      this.slotStart[i] = s
      this.slotCount[i] = shape.rc.length
      for (let k = 0; k < shape.rc.length; k++) {
        const id = shape.id[k]
        rcCount[id]++
        slotRcId[s] = id
        this.slotProv[s] = i
        this.slotRc[s] = shape.rc[k]
        this.slotCap[s] = shape.cap[k]
        this.slotMin[s] = shape.min[k]
        this.slotMax[s] = shape.max[k]
        this.slotStep[s] = shape.step[k]
        s++
      }
    }
    this.slots = s
    const lists = rcCount.map((c) => ({provs: new Int32Array(c), slots: new Int32Array(c), k: 0}))
    for (let t = 0; t < s; t++) {
      const l = lists[slotRcId[t]]
      l.provs[l.k] = this.slotProv[t]
      l.slots[l.k++] = t
    }
    for (const [rc, id] of rcIds) this.rcs.set(rc, new ClassInventories(lists[id].provs, lists[id].slots))
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

  /** Does any provider have a parent? */
  get hasTrees(): boolean {
    return this.children > 0
  }

  /** Does any provider share its inventory through aggregates? */
  get anySharing(): boolean {
    return this.sharing > 0
  }

  /** Is position i a provider (not GONE)? */
  live(i: number): boolean {
    return this.provs[i] !== GONE
  }

  /** uuid -> provider position (live providers only: index-patch.ts keeps it so). */
  idx(): Map<string, number> {
    return this.idxMap
  }

  /** The members of the tree rooted at r, in index order. */
  treeMembers(r: number): Int32Array {
    const changed = this.treeChanged.get(r)
    if (changed) return changed
    if (r < this.builtN) return this.treeMem.subarray(this.treeOff[r], this.treeOff[r + 1])
    return this.provs[r] === GONE ? NO_MEMBERS : Int32Array.of(r)
  }

  /** Tree r now has these members (index order). */
  setTreeMembers(r: number, members: Int32Array): void {
    const built = r < this.builtN ? this.treeMem.subarray(this.treeOff[r], this.treeOff[r + 1]) : Int32Array.of(r)
    if (built.length === members.length && built.every((m, k) => members[k] === m)) this.treeChanged.delete(r)
    else this.treeChanged.set(r, members)
  }

  /** The inventories of class rc (none: an empty list). */
  inventoriesOf(rc: string): ClassInventories {
    return this.rcs.get(rc) ?? NO_INVENTORIES
  }

  /**
   * Brings the index to the state's current version: usages are re-read lazily, and providers
   * whose shape changed are patched in place. False when it must be rebuilt instead (the
   * change is too old or too big to follow, or too many positions went unused).
   */
  refresh(state: State): boolean {
    if (state.shapeVersion !== this.shapeVersion) {
      const changes = state.shapeLog.since(this.shapeVersion)
      if (!changes || changes.touched.size > (this.n - this.gone) / 2 + 1000) return false
      if (!patchIndex(this, state, changes)) return false
      if (this.gone > 1000 && this.gone > this.n / 8) return false
      if (this.unusedSlots > 100_000 && this.unusedSlots > this.slots / 2) return false
      this.shapeVersion = state.shapeVersion
      this.rootFilters.clear()
    }
    this.version = state.version
    if (++this.epoch >= 0x7fffffff) {
      this.slotUsedEpoch.fill(0)
      this.summaryEpoch.fill(0)
      this.epoch = 1
    }
    return true
  }

  /** Room for `n` positions in every per-provider array. */
  growProviders(n: number): void {
    this.parent = ensure(this.parent, n)
    this.root = ensure(this.root, n)
    this.depth = ensure(this.depth, n)
    this.isSharing = ensure(this.isSharing, n)
    this.isoCount = ensure(this.isoCount, n)
    this.stamp = ensure(this.stamp, n)
    this.summaryEpoch = ensure(this.summaryEpoch, n)
    this.slotStart = ensure(this.slotStart, n)
    this.slotCount = ensure(this.slotCount, n)
  }

  /** Room for `s` inventory slots in every per-slot array. */
  growSlots(s: number): void {
    if (this.slotProv.length >= s) return
    this.slotProv = ensure(this.slotProv, s)
    this.slotCap = ensure(this.slotCap, s)
    this.slotMin = ensure(this.slotMin, s)
    this.slotMax = ensure(this.slotMax, s)
    this.slotStep = ensure(this.slotStep, s)
    this.slotUsed = ensure(this.slotUsed, s)
    this.slotUsedEpoch = ensure(this.slotUsedEpoch, s)
    this.acc = ensure(this.acc, s)
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

  slotOf(inv: ClassInventories): Int32Array {
    return inv.slotMap(this.n)
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
      this.slotMin[s] <= amount && this.slotMax[s] >= amount && amount % this.slotStep[s] === 0 && this.used(s) + amount <= this.slotCap[s]
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
    let a = this.sharingAnchorCache.get(p)
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
    this.sharingAnchorCache.set(p, a)
    return a
  }

  /** provider_summaries entry of provider i, with current usages (cached while they hold). */
  summary(i: number): ProviderSummary {
    let sum = this.summaryCache[i]
    if (sum && this.summaryEpoch[i] === this.epoch) return sum
    const from = this.slotStart[i]
    const to = from + this.slotCount[i]
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

const indexes = new WeakMap<State, Index>()

/** The index of `state` at its current version. */
export function getIndex(state: State): Index {
  let ix = indexes.get(state)
  if (ix && (ix.version === state.version || ix.refresh(state))) return ix
  ix = new Index(state)
  indexes.set(state, ix)
  return ix
}

/** Brings the index of `state` up to date if there is one (after a write: the next query need not). */
export function keepIndexCurrent(state: State): void {
  if (!indexes.has(state)) return
  try {
    getIndex(state)
  } catch {
    indexes.delete(state) // rebuilt by the next query
  }
}

/** For tests and diagnostics: drops the cached index of a state. */
export function dropIndex(state: State): void {
  indexes.delete(state)
}
