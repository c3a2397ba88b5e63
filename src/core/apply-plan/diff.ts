/** How a provider's inventories and name sets differ from what a file wants. */
import {INVENTORY_DEFAULTS, INVENTORY_FIELDS} from '../placement/inventories.js'
import type {Inventory} from '../state/state.js'
import type {InventoryDiff, InventoryField, SetDiff} from './types.js'

export const sameSet = (a: Iterable<string>, b: string[]) => {
  const set = new Set(a)
  return set.size === b.length && b.every((x) => set.has(x))
}

export function setDiff(from: Iterable<string>, to: string[]): SetDiff {
  const f = new Set(from)
  const t = new Set(to)
  return {added: to.filter((x) => !f.has(x)).sort(), removed: [...f].filter((x) => !t.has(x)).sort()}
}

const fieldDefault = (f: InventoryField) => (f === 'total' ? 0 : INVENTORY_DEFAULTS[f])

/** undefined when the inventories are the same. */
export function inventoryDiff(from: Map<string, Inventory>, to: Record<string, Inventory>): InventoryDiff | undefined {
  const d: InventoryDiff = {added: {}, removed: [], changed: {}}
  let any = false
  for (const [rc, inv] of Object.entries(to)) {
    const cur = from.get(rc)
    if (!cur) {
      d.added[rc] = inv
      any = true
      continue
    }
    const fields: Partial<Record<InventoryField, [number, number]>> = {}
    for (const f of INVENTORY_FIELDS) {
      const a = Number(cur[f] ?? fieldDefault(f))
      const b = Number(inv[f])
      // allocation_ratio is a float column: compare as Placement stores it (single precision is close enough).
      const same = f === 'allocation_ratio' ? Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)) : a === b
      if (!same) fields[f] = [a, b]
    }
    if (Object.keys(fields).length) {
      d.changed[rc] = fields
      any = true
    }
  }
  for (const rc of from.keys()) {
    if (!(rc in to)) {
      d.removed.push(rc)
      any = true
    }
  }
  d.removed.sort()
  return any ? d : undefined
}
