/** What differs, provider by provider, between the State and the file's providers. */
import type {State} from '../state/state.js'
import {inventoryDiff, sameSet, setDiff} from './diff.js'
import type {Rename} from './tree.js'
import type {Desired, ProviderChange} from './types.js'

export interface ProviderChanges {
  changes: ProviderChange[]
  creates: Desired[]
  renames: Rename[]
  reparents: Desired[]
}

/** The prefix of the traits a compute service sets on its own host. */
const COMPUTE_OWNED = 'COMPUTE_'

export function providerChanges(s: State, desired: Desired[], errors: string[]): ProviderChanges {
  const out: ProviderChanges = {changes: [], creates: [], renames: [], reparents: []}
  for (const d of desired) {
    const cur = s.providers.get(d.uuid)
    if (!cur) {
      const holder = s.providerByName.get(d.name)
      if (holder) errors.push(`provider '${d.name}' exists with uuid ${holder.uuid}, not ${d.uuid} as the file says`)
      out.creates.push(d)
      out.changes.push({action: 'create', kind: 'provider', uuid: d.uuid, name: d.name, create: d})
      continue
    }
    const ch: ProviderChange = {action: 'update', kind: 'provider', uuid: d.uuid, name: d.name}
    if (cur.name !== d.name) {
      ch.rename = {from: cur.name, to: d.name}
      out.renames.push({d, from: cur.name})
    }
    if (d.parent !== undefined && d.parent !== cur.parent) {
      ch.parent = {from: cur.parent, to: d.parent}
      out.reparents.push(d)
    }
    if (d.inventories) {
      const diff = inventoryDiff(cur.inventories, d.inventories)
      if (diff) {
        ch.inventories = diff
        const inUse = diff.removed.filter((rc) => (cur.usages.get(rc) ?? 0) > 0)
        if (inUse.length) {
          errors.push(
            `cannot remove ${inUse.map((rc) => `${rc} (${cur.usages.get(rc)} in use)`).join(', ')} from provider ${cur.name} (${cur.uuid}): it has allocations`,
          )
        }
      }
    }
    if (d.traits) {
      // Traits the compute service owns (COMPUTE_*: COMPUTE_STATUS_DISABLED when nova disables a
      // host) are nova's: the file's list is the rest of them, unless it removes one by `!TRAIT`.
      const kept = [...cur.traits].filter((t) => t.startsWith(COMPUTE_OWNED) && !d.traits!.includes(t) && !d.traitsRemoved?.includes(t))
      if (kept.length) d.traits = [...d.traits, ...kept].sort()
      if (!sameSet(cur.traits, d.traits)) ch.traits = setDiff(cur.traits, d.traits)
    }
    if (d.aggregates) {
      // A host's rack, row and room belong to the topology (topology apply, rack add/remove):
      // the file's list is the rest of its aggregates.
      const kept = [...cur.aggregates].filter((a) => s.topology.has(a) && !d.aggregates!.includes(a))
      if (kept.length) d.aggregates = [...d.aggregates, ...kept].sort()
      if (!sameSet(cur.aggregates, d.aggregates)) ch.aggregates = setDiff(cur.aggregates, d.aggregates)
    }
    if (ch.rename || ch.parent || ch.inventories || ch.traits || ch.aggregates) out.changes.push(ch)
  }
  return out
}
