/**
 * The order a plan must respect: depths in the tree after the apply (parents created
 * first, loops refused), renames that free a name before another takes it, and what
 * --prune deletes (deepest first, never a provider with allocations).
 */
import type {Provider, State} from '../state/state.js'
import type {Desired} from './types.js'

/** Each provider's depth in the tree the apply leaves (file providers' parents as the file says). */
export function finalDepths(s: State, desired: Desired[], labels: Map<string, string>, errors: string[]) {
  const finalParent = new Map<string, string | null>()
  for (const p of s.providers.values()) finalParent.set(p.uuid, p.parent)
  for (const d of desired) finalParent.set(d.uuid, d.parent !== undefined ? d.parent : (s.providers.get(d.uuid)?.parent ?? null))
  const depth = new Map<string, number>()
  const depthOf = (uuid: string): number => {
    const known = depth.get(uuid)
    if (known !== undefined) return known
    const seen = new Set<string>()
    const chain: string[] = []
    let u: string | null | undefined = uuid
    while (u && !depth.has(u)) {
      if (seen.has(u)) {
        errors.push(`the providers ${chain.map((c) => labels.get(c) ?? c).join(' -> ')} would form a loop`)
        for (const c of chain) depth.set(c, 0)
        return 0
      }
      seen.add(u)
      chain.push(u)
      u = finalParent.get(u) ?? null
    }
    let d = u ? depth.get(u)! + 1 : 0
    for (let k = chain.length - 1; k >= 0; k--) depth.set(chain[k], d++)
    return depth.get(uuid)!
  }
  for (const d of desired) depthOf(d.uuid)
  return {finalParent, depth}
}

export interface Rename {
  d: Desired
  from: string
}

/** Renames in an order where a name is only taken once its holder has given it up. */
export function orderRenames(s: State, renames: Rename[], errors: string[]): Rename[] {
  const order: Rename[] = []
  const pending = new Map(renames.map((r) => [r.d.uuid, r]))
  const visiting = new Set<string>()
  const visit = (r: Rename) => {
    if (!pending.has(r.d.uuid)) return
    if (visiting.has(r.d.uuid)) {
      errors.push(`renaming '${r.from}' to '${r.d.name}' is part of a cycle of renames; rename through a temporary name`)
      pending.delete(r.d.uuid)
      return
    }
    visiting.add(r.d.uuid)
    const holder = s.providerByName.get(r.d.name)
    if (holder && holder.uuid !== r.d.uuid) {
      const holderRename = pending.get(holder.uuid)
      if (holderRename) visit(holderRename)
      else if (!renames.some((x) => x.d.uuid === holder.uuid)) {
        errors.push(`cannot rename '${r.from}' to '${r.d.name}': provider ${holder.uuid} has that name (rename or delete it first)`)
      }
    }
    visiting.delete(r.d.uuid)
    if (pending.delete(r.d.uuid)) order.push(r)
  }
  for (const r of renames) visit(r)
  return order
}

/** Providers neither in the file nor above one that stays, deepest first (by the current tree), with their depths. */
export function pruned(s: State, desired: Desired[], finalParent: Map<string, string | null>, errors: string[]) {
  const keep = new Set<string>()
  for (const d of desired) {
    let u: string | null | undefined = d.uuid
    while (u && !keep.has(u)) {
      keep.add(u)
      u = finalParent.get(u)
    }
  }
  const deletes: Provider[] = [...s.providers.values()].filter((p) => !keep.has(p.uuid))
  const inUse = deletes.filter((p) => [...p.usages.values()].some((n) => n > 0))
  if (inUse.length) {
    const list = inUse.slice(0, 10).map((p) => `${p.name} (${p.uuid})`)
    if (inUse.length > 10) list.push(`and ${inUse.length - 10} more`)
    errors.push(`--prune would delete ${inUse.length} provider(s) that have allocations: ${list.join(', ')}`)
  }
  const depth = new Map<string, number>()
  for (const p of deletes) {
    let n = 0
    for (let u = p.parent; u && n < 1000; u = s.providers.get(u)?.parent ?? null) n++
    depth.set(p.uuid, n)
  }
  deletes.sort((a, b) => depth.get(b.uuid)! - depth.get(a.uuid)!)
  return {deletes, depth}
}

/** Items grouped by level, levels in order. */
export function byLevel<T>(items: T[], level: (t: T) => number, descending = false): T[][] {
  const groups = new Map<number, T[]>()
  for (const t of items) {
    const l = level(t)
    let g = groups.get(l)
    if (!g) groups.set(l, (g = []))
    g.push(t)
  }
  return [...groups.keys()].sort((a, b) => (descending ? b - a : a - b)).map((l) => groups.get(l)!)
}
