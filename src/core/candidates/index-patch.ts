/**
 * Follows a write in the provider index: only the providers the State's shape log names are
 * re-read (their tree, inventories and sharing), and only the trees they were or are in are
 * re-walked. The result is the index a rebuild would give, up to GONE positions.
 */
import type {Inventory, Provider, State} from '../state/state.js'
import type {ShapeChanges} from '../state/shape-log.js'
import {isSharing} from '../host.js'
import {GONE, NO_MEMBERS} from './index-constants.js'
import type {Index} from './provider-index.js'
import {ClassInventories} from './typed-arrays.js'

/** Applies `changes` to `ix`; false when it could not (the caller rebuilds). */
export function patchIndex(ix: Index, state: State, changes: ShapeChanges): boolean {
  const idxOf = ix.idx()
  const trees = new Set<number>()
  // Deleted providers, and providers deleted and added again (they move to the end).
  for (const u of changes.touched) {
    const i = idxOf.get(u)
    if (i !== undefined && state.providers.get(u) !== ix.provs[i]) retire(ix, i, trees)
  }
  for (const u of changes.added) {
    const p = state.providers.get(u)
    if (p && !idxOf.has(u)) append(ix, p)
  }
  for (const u of changes.touched) {
    const p = state.providers.get(u)
    const i = idxOf.get(u)
    if (!p || i === undefined) continue
    reread(ix, i, p, idxOf, trees)
  }
  if (!changes.touched.size) return true
  for (const r of trees) rewalk(ix, state, r, idxOf)
  ix.sharingAnchorCache.clear()
  return true
}

function retire(ix: Index, i: number, trees: Set<number>): void {
  const p = ix.provs[i]
  trees.add(ix.root[i])
  dropSlots(ix, i)
  if (ix.parent[i] >= 0) ix.children--
  if (ix.isSharing[i]) ix.sharing--
  ix.isSharing[i] = 0
  ix.parent[i] = -1
  ix.root[i] = i
  ix.depth[i] = 0
  ix.provs[i] = GONE
  ix.summaryCache[i] = undefined
  const idxOf = ix.idx()
  if (idxOf.get(p.uuid) === i) idxOf.delete(p.uuid)
  ix.setTreeMembers(i, NO_MEMBERS)
  ix.gone++
}

function append(ix: Index, p: Provider): void {
  const i = ix.n++
  ix.growProviders(ix.n)
  ix.provs[i] = p
  ix.idx().set(p.uuid, i)
  ix.parent[i] = -1
  ix.root[i] = i
  ix.depth[i] = 0
  ix.isSharing[i] = 0
  ix.slotStart[i] = ix.slots
  ix.slotCount[i] = 0
  ix.summaryCache[i] = undefined
}

/** Reads provider p (at position i) again: tree links, sharing, inventories. */
function reread(ix: Index, i: number, p: Provider, idxOf: Map<string, number>, trees: Set<number>): void {
  const parent = p.parent === null ? -1 : (idxOf.get(p.parent) ?? -1)
  if (ix.parent[i] >= 0 !== parent >= 0) ix.children += parent >= 0 ? 1 : -1
  ix.parent[i] = parent
  trees.add(ix.root[i])
  const root = idxOf.get(p.root) ?? i
  ix.root[i] = root
  trees.add(root)
  const sharing = isSharing(p) ? 1 : 0
  if (sharing !== ix.isSharing[i]) ix.sharing += sharing ? 1 : -1
  ix.isSharing[i] = sharing
  ix.summaryCache[i] = undefined
  rewriteSlots(ix, i, p)
}

/** Provider i's inventory slots: rewritten in place when its classes are the same, else moved to a fresh range. */
function rewriteSlots(ix: Index, i: number, p: Provider): void {
  const start = ix.slotStart[i]
  if (ix.slotCount[i] === p.inventories.size) {
    let s = start
    let same = true
    for (const rc of p.inventories.keys()) {
      if (ix.slotRc[s++] !== rc) {
        same = false
        break
      }
    }
    if (same) {
      s = start
      for (const v of p.inventories.values()) writeSlot(ix, s++, v)
      return
    }
  }
  dropSlots(ix, i)
  const count = p.inventories.size
  ix.growSlots(ix.slots + count)
  ix.slotStart[i] = ix.slots
  ix.slotCount[i] = count
  for (const [rc, v] of p.inventories) {
    const s = ix.slots++
    ix.slotProv[s] = i
    ix.slotRc[s] = rc
    ix.acc[s] = 0
    writeSlot(ix, s, v)
    let list = ix.rcs.get(rc)
    if (!list) ix.rcs.set(rc, (list = new ClassInventories(new Int32Array(0), new Int32Array(0))))
    list.put(i, s)
  }
}

function writeSlot(ix: Index, s: number, v: Inventory): void {
  ix.slotCap[s] = (v.total - v.reserved) * v.allocation_ratio
  ix.slotMin[s] = v.min_unit
  ix.slotMax[s] = v.max_unit
  ix.slotStep[s] = v.step_size
  ix.slotUsedEpoch[s] = 0
}

function dropSlots(ix: Index, i: number): void {
  const start = ix.slotStart[i]
  const count = ix.slotCount[i]
  for (let s = start; s < start + count; s++) ix.rcs.get(ix.slotRc[s])?.remove(i)
  ix.unusedSlots += count
  ix.slotCount[i] = 0
}

/** Tree r's members and their depths, walked again from the State. */
function rewalk(ix: Index, state: State, r: number, idxOf: Map<string, number>): void {
  const top = ix.provs[r]
  if (top === GONE || ix.root[r] !== r) {
    ix.setTreeMembers(r, NO_MEMBERS)
    return
  }
  const members: number[] = []
  const walk = (p: Provider, depth: number) => {
    const i = idxOf.get(p.uuid)
    if (i === undefined) return
    members.push(i)
    ix.depth[i] = depth
    for (const c of p.children) {
      const child = state.providers.get(c)
      if (child) walk(child, depth + 1)
    }
  }
  walk(top, 0)
  members.sort((a, b) => a - b)
  ix.setTreeMembers(r, Int32Array.from(members))
}
