/** Small States for unit tests, built the way the command line builds them from API records. */
import {stateFromSnapshot, type Snapshot} from '../../src/core/snapshot.js'
import type {State} from '../../src/core/state/state.js'
import {inv} from '../helpers/records.js'

export const U = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`

export {inv}

/** Providers by name; `parent` by name; uuids U(1), U(2)... in order. */
export function cloud(
  providers: Array<{
    name: string
    parent?: string
    inventories?: Record<string, number>
    usages?: Record<string, number>
    traits?: string[]
    aggregates?: string[]
  }>,
  more: Omit<Snapshot, 'providers'> = {},
): State {
  const uuidOf = new Map(providers.map((p, i) => [p.name, U(i + 1)]))
  const rootOf = (name: string): string => {
    const p = providers.find((x) => x.name === name)!
    return p.parent ? rootOf(p.parent) : uuidOf.get(name)!
  }
  return stateFromSnapshot({
    classes: ['VCPU', 'MEMORY_MB', 'DISK_GB', 'VGPU'],
    traits: ['HW_CPU_X86_AVX2', 'MISC_SHARES_VIA_AGGREGATE'],
    ...more,
    providers: providers.map((p) => ({
      uuid: uuidOf.get(p.name)!,
      name: p.name,
      generation: 1,
      parent_provider_uuid: p.parent ? uuidOf.get(p.parent)! : null,
      root_provider_uuid: rootOf(p.name),
      inventories: Object.fromEntries(Object.entries(p.inventories ?? {}).map(([rc, n]) => [rc, inv(n)])),
      usages: p.usages ?? {},
      traits: p.traits ?? [],
      aggregates: p.aggregates ?? [],
    })),
  })
}
