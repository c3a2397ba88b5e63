/**
 * Generated clouds for capacity's tests (flat hosts, NUMA trees with GPU grandchildren, bare
 * metal, rack pools whose hosts may keep disk of their own, a pool across rooms, disabled hosts,
 * reserved, ratios, max_unit, step_size, existing usage) and generated flavors; and the brute
 * force every count is held to: claims one after another on a copy, each the claim path's first
 * candidate.
 */
import {randomUUID} from 'node:crypto'
import {putAllocationErrors, writeAllocations} from '../../src/core/placement/allocations.js'
import {findCandidates} from '../../src/core/candidates/engine.js'
import {Changes} from '../../src/core/state/changes.js'
import type {Flavor, FlavorRequest} from '../../src/core/headroom/flavors.js'
import {HEADROOM_LEVELS, type HeadroomLevel} from '../../src/core/headroom/headroom.js'
import {everyHost, isSharing} from '../../src/core/host.js'
import {stateFromSnapshot, type Snapshot} from '../../src/core/snapshot.js'
import type {Inventory, Provider, State} from '../../src/core/state/state.js'
import {hostDomains, nodeUuid} from '../../src/core/topology.js'
import {rng} from './rng.js'

export const CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'PCPU', 'VGPU', 'CUSTOM_BAREMETAL_GOLD']
export const TRAITS = ['HW_CPU_X86_AVX2', 'MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_STATUS_DISABLED', 'HW_NUMA_ROOT']

/** Placement's capacity, written here on its own: int((total - reserved) * ratio). */
export const cap = (i: Inventory) => Math.trunc((i.total - i.reserved) * i.allocation_ratio)

export function generate(seed: number): {snapshot: Snapshot; flavors: Flavor[]} {
  const r = rng(seed)
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1))
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  let n = 0
  const uuid = () => `${String(seed).padStart(8, '0')}-0000-4000-8000-${String(++n).padStart(12, '0')}`
  const providers: Snapshot['providers'] = []
  const inv = (total: number, extra: Partial<Inventory> = {}): Inventory => {
    const reserved = r() < 0.3 ? int(0, Math.floor(total / 4)) : 0
    return {total, reserved, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: pick([1, 1, 1.5, 2, 4]), ...extra}
  }
  const used = (inventories: Record<string, Inventory>) =>
    Object.fromEntries(Object.entries(inventories).flatMap(([rc, i]) => (r() < 0.5 ? [[rc, int(0, Math.max(0, cap(i)))]] : [])))
  const add = (
    name: string,
    parent: {uuid: string; root: string} | null,
    inventories: Record<string, Inventory>,
    traits: string[],
    aggregates: string[],
  ) => {
    const u = uuid()
    providers.push({
      uuid: u,
      name,
      generation: 1,
      parent_provider_uuid: parent?.uuid ?? null,
      root_provider_uuid: parent?.root ?? u,
      inventories,
      usages: used(inventories),
      traits,
      aggregates,
    })
    return {uuid: u, root: parent?.root ?? u}
  }
  const topology: NonNullable<Snapshot['topology']> = []
  const rooms = int(1, 2)
  const pools = int(0, 3)
  let rackNo = 0
  const poolRacks = new Set<number>()
  while (poolRacks.size < pools) poolRacks.add(int(1, rooms * 2 * 2))
  // A pool some hosts of any rack and room also reach (besides their rack's, if it has one).
  const across = r() < 0.4 ? `${String(seed).padStart(8, '0')}-aaaa-4000-8000-000000000000` : null
  if (across) add('pool-across', null, {DISK_GB: inv(int(40, 600))}, ['MISC_SHARES_VIA_AGGREGATE'], [across])
  for (let room = 1; room <= rooms; room++) {
    topology.push({uuid: nodeUuid('room', `room${room}`), name: `room${room}`, level: 'room', parent: null})
    for (let row = 1; row <= 2; row++) {
      const rowName = `row${room}${row}`
      topology.push({uuid: nodeUuid('row', rowName), name: rowName, level: 'row', parent: nodeUuid('room', `room${room}`)})
      for (let rack = 1; rack <= 2; rack++) {
        rackNo++
        const rackName = `rack${rackNo}`
        topology.push({uuid: nodeUuid('rack', rackName), name: rackName, level: 'rack', parent: nodeUuid('row', rowName)})
        const rackAggs = [nodeUuid('rack', rackName), nodeUuid('row', rowName), nodeUuid('room', `room${room}`)]
        const pooled = poolRacks.has(rackNo)
        // A pool serves its rack's hosts; half of them keep disk of their own too (claims take it first).
        if (pooled) add(`pool${rackNo}`, null, {DISK_GB: inv(int(40, 400))}, ['MISC_SHARES_VIA_AGGREGATE'], [nodeUuid('rack', rackName)])
        for (let h = 1; h <= int(1, 3); h++) {
          const name = `h${rackNo}-${h}`
          const traits = [...(r() < 0.5 ? ['HW_CPU_X86_AVX2'] : []), ...(r() < 0.15 ? ['COMPUTE_STATUS_DISABLED'] : [])]
          const disk = pooled && r() < 0.5 ? {} : {DISK_GB: inv(int(20, 200), r() < 0.2 ? {step_size: 10} : {})}
          const aggs = across && r() < 0.35 ? [...rackAggs, across] : rackAggs
          const kind = pick(['flat', 'flat', 'numa', 'metal'])
          if (kind === 'flat') {
            const cpus = int(4, 32)
            add(
              name,
              null,
              {
                VCPU: inv(cpus, r() < 0.3 ? {max_unit: int(2, cpus)} : {}),
                MEMORY_MB: inv(int(4, 64) * 1024, r() < 0.2 ? {step_size: 512} : {}),
                ...disk,
              },
              traits,
              aggs,
            )
          } else if (kind === 'numa') {
            const root = add(name, null, {...disk}, traits, aggs)
            for (let k = 0; k < 2; k++) {
              const numa = add(
                `${name}-numa${k}`,
                root,
                {VCPU: inv(int(2, 16)), PCPU: inv(int(0, 1) * int(2, 8) || 4), MEMORY_MB: inv(int(2, 32) * 1024)},
                ['HW_NUMA_ROOT'],
                [],
              )
              if (r() < 0.5) add(`${name}-numa${k}-gpu`, numa, {VGPU: inv(int(1, 4))}, [], [])
            }
          } else add(name, null, {CUSTOM_BAREMETAL_GOLD: inv(1, {allocation_ratio: 1, reserved: 0})}, traits, aggs)
        }
      }
    }
  }
  const flavors: Flavor[] = []
  for (let i = 0; i < int(2, 4); i++) {
    const properties: Record<string, string> = {}
    const kind = pick(['plain', 'plain', 'dedicated', 'gpu', 'granular-gpu', 'metal', 'avx'])
    if (kind === 'dedicated') properties['hw:cpu_policy'] = 'dedicated'
    if (kind === 'gpu') properties['resources:VGPU'] = '1'
    if (kind === 'granular-gpu') properties['resources1:VGPU'] = String(int(1, 2))
    if (kind === 'avx') properties['trait:HW_CPU_X86_AVX2'] = 'required'
    if (kind === 'metal')
      Object.assign(properties, {
        'resources:CUSTOM_BAREMETAL_GOLD': '1',
        'resources:VCPU': '0',
        'resources:MEMORY_MB': '0',
        'resources:DISK_GB': '0',
      })
    flavors.push({
      name: `f${i}-${kind}`,
      vcpus: int(1, 8),
      ram: pick([512, 1024, 2048, 4096, 3000]),
      disk: pick([0, 10, 20, 40]),
      ephemeral: pick([0, 0, 5]),
      swap: pick([0, 0, 512, 1536]),
      properties,
    })
  }
  return {snapshot: {classes: CLASSES, traits: TRAITS, providers, topology}, flavors}
}

/** Whether a candidate places something on one of `hosts` (root uuids) and takes only from them and sharing providers. */
export function onHosts(s: State, hosts: ReadonlySet<string>, a: {allocations: ReadonlyMap<string, unknown>}): boolean {
  const providers = [...a.allocations.keys()].map((u) => s.providers.get(u)!)
  return providers.some((p) => hosts.has(p.root)) && providers.every((p) => hosts.has(p.root) || isSharing(p))
}

/** Writes `allocations` for a new consumer as a claim does (its generation not asked). */
export function writeClaim(
  s: State,
  consumer: string,
  allocations: Map<string, Map<string, number>>,
  who: {project: string; user: string} = {project: 'p', user: 'u'},
): void {
  s.changes = new Changes()
  try {
    writeAllocations(s, 0, [{uuid: consumer, allocations, ...who}], {checkGeneration: false, ...putAllocationErrors(consumer)})
  } finally {
    s.changes = null
  }
  s.version += 1
}

/** Claims of `flavor` one after another on a copy, each the first candidate on `hosts` (and pools), until none fits. */
export function claimsOneAfterAnother(snapshot: Snapshot, flavor: FlavorRequest, hosts: Set<string>): number {
  const copy = stateFromSnapshot(structuredClone(snapshot))
  let count = 0
  for (; count < 5000; count++) {
    const found = findCandidates(copy, flavor.request).allocationRequests.find((a) => onHosts(copy, hosts, a))
    if (!found) break
    try {
      writeClaim(copy, randomUUID(), found.allocations)
    } catch (err) {
      throw new Error(`the first candidate was refused: ${(err as Error).message}`)
    }
  }
  return count
}

/** Every domain of every level: its level, name and hosts, as hostDomains names them. */
export function domainsOf(s: State, levels: readonly HeadroomLevel[] = HEADROOM_LEVELS): Array<[HeadroomLevel, string, Provider[]]> {
  const hosts = everyHost(s)
  return levels.flatMap((level): Array<[HeadroomLevel, string, Provider[]]> => {
    if (level === 'cloud') return [['cloud', 'cloud', hosts]]
    if (level === 'host') return hosts.map((h): [HeadroomLevel, string, Provider[]] => ['host', h.name, [h]])
    const names = new Set(hosts.map((h) => hostDomains(s, h)[level]).filter((x): x is string => x !== null))
    return [...names].map((name): [HeadroomLevel, string, Provider[]] => [
      level,
      name,
      hosts.filter((h) => hostDomains(s, h)[level] === name),
    ])
  })
}
