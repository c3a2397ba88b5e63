/**
 * The cloud as an apply file (`placemat export --format apply`), so that the declarative file
 * can follow the cloud after a reshape or a hand edit: applying it plans nothing. Providers
 * nest as their trees do; inventories are a total when every other field is Placement's
 * default; a host's racks, rows and rooms stay out (they belong to the topology, and apply
 * keeps them). The names placemat keeps for aggregates are the `aggregates:` map, every one of
 * them (so that `apply --prune` of the file forgets none), and name the aggregates in the lists.
 */
import {nonDefaultFields} from '../placement/inventories.js'
import type {Inventory, Provider, State} from '../state/state.js'

export interface ApplyDocumentProvider {
  name: string
  uuid: string
  inventories: Record<string, number | Partial<Inventory>>
  traits: string[]
  aggregates: string[]
  children?: ApplyDocumentProvider[]
}

export interface ApplyDocument {
  resource_classes: string[]
  traits: string[]
  /** Aggregate name -> uuid; absent when none is named (plain Placement keeps no names). */
  aggregates?: Record<string, string>
  providers: ApplyDocumentProvider[]
}

const byName = (a: Provider, b: Provider) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

function inventorySpec(inv: Inventory): number | Partial<Inventory> {
  const changed = nonDefaultFields(inv)
  if (!changed.length) return inv.total
  return Object.fromEntries([['total', inv.total], ...changed.map((f) => [f, inv[f]])])
}

export function applyDocumentOf(s: State): ApplyDocument {
  const named = [...s.aggregateNames.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const aggregate = (uuid: string) => s.aggregateNames.get(uuid)?.name ?? uuid
  const provider = (p: Provider): ApplyDocumentProvider => {
    const out: ApplyDocumentProvider = {
      name: p.name,
      uuid: p.uuid,
      inventories: Object.fromEntries(
        [...p.inventories].sort(([a], [b]) => a.localeCompare(b)).map(([rc, inv]) => [rc, inventorySpec(inv)]),
      ),
      traits: [...p.traits].sort(),
      aggregates: [...p.aggregates]
        .filter((a) => !s.topology.has(a))
        .map(aggregate)
        .sort(),
    }
    const children = [...p.children].map((u) => s.providers.get(u)!).sort(byName)
    if (children.length) out.children = children.map(provider)
    return out
  }
  return {
    resource_classes: [...s.classes.keys()].filter((c) => c.startsWith('CUSTOM_')).sort(),
    traits: [...s.traits.keys()].filter((t) => t.startsWith('CUSTOM_')).sort(),
    ...(named.length ? {aggregates: Object.fromEntries(named.map((n) => [n.name, n.uuid]))} : {}),
    providers: [...s.providers.values()]
      .filter((p) => p.parent === null)
      .sort(byName)
      .map(provider),
  }
}
