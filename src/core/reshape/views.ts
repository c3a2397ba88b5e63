/**
 * Trees of providers as a reshape report shows them: each provider with its depth, its
 * inventories with capacity and usage, children under their parent, by name.
 */
import {INVENTORY_DEFAULTS, inventoryViews, type InventoryView} from '../placement/inventories.js'
import type {State} from '../state/state.js'

export type {InventoryView}

export interface ProviderView {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid: string | null
  depth: number
  /** Created by the reshape. */
  created: boolean
  inventories: Record<string, InventoryView>
}

/**
 * The trees under `roots` (by name), then the trees of `extra` providers (each from where
 * it is, at depth 0). A class used without inventory shows with capacity 0.
 */
export function treeViews(s: State, roots: string[], created: Set<string>, extra: string[]): ProviderView[] {
  const out: ProviderView[] = []
  const seen = new Set<string>()
  const byName = (a: string, b: string) => {
    const na = s.providers.get(a)?.name ?? a
    const nb = s.providers.get(b)?.name ?? b
    return na < nb ? -1 : na > nb ? 1 : 0
  }
  const walk = (uuid: string, depth: number) => {
    const p = s.providers.get(uuid)
    if (!p || seen.has(uuid)) return
    seen.add(uuid)
    const inventories = inventoryViews(p)
    for (const [rc, used] of p.usages) if (!inventories[rc]) inventories[rc] = {...INVENTORY_DEFAULTS, total: 0, capacity: 0, used}
    out.push({uuid, name: p.name, generation: p.generation, parent_provider_uuid: p.parent, depth, created: created.has(uuid), inventories})
    for (const c of [...p.children].sort(byName)) walk(c, depth + 1)
  }
  for (const r of [...roots].sort(byName)) walk(r, 0)
  for (const u of [...extra].sort(byName)) walk(u, 0)
  return out
}
