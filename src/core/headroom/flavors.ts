/**
 * Nova's flavors, and the request Nova makes of Placement for one instance of each (nova's
 * scheduler utils, ResourceRequest.from_request_spec and resources_from_flavor):
 *  - VCPU, MEMORY_MB and DISK_GB from the flavor's VCPUs, RAM and Disk + Ephemeral + Swap (Swap is
 *    in MB, rounded up to whole GB), each unless a `resources:CLASS=N` extra spec sets it (0
 *    drops it); a class asked 0 is not asked (a 0-disk flavor asks no DISK_GB);
 *  - `hw:cpu_policy=dedicated` asks PCPU instead of VCPU (and one PCPU more with
 *    `hw:emulator_threads_policy=isolate`);
 *  - `resourcesN:CLASS=N` and `traitN:TRAIT=required|forbidden` make granular groups,
 *    `trait:TRAIT=...` the unsuffixed group's traits, `group_policy` their policy;
 *  - `member_of` (a field of ours, as Nova's request filters add it: aggregate uuids, `in:a,b`
 *    for any of them) narrows the unsuffixed group.
 * What placemat does not model is named in the warnings, never dropped in silence. Not
 * modelled: boot from volume (Nova then asks no root disk: give such flavors `resources:DISK_GB`),
 * what scheduler filters judge outside Placement (NUMA fit, huge pages, server groups).
 */
import {newGroup, type CandidateRequest, type RequestGroup} from '../candidates/request.js'

/** A flavor as Nova keeps it. */
export interface Flavor {
  name: string
  vcpus: number
  /** RAM, MB. */
  ram: number
  /** Root disk, GB. */
  disk: number
  /** Ephemeral disk, GB. */
  ephemeral: number
  /** Swap, MB. */
  swap: number
  /** Extra specs. */
  properties: Record<string, string>
  /** Aggregates the instance must land in: each entry any of its uuids. */
  memberOf?: string[][]
}

/** What Nova asks of Placement for one instance of a flavor, and what of it placemat left out. */
export interface FlavorRequest {
  flavor: string
  request: CandidateRequest
  /** Extra specs placemat does not model, each with why. */
  warnings: string[]
}

const RESOURCES = /^resources([A-Za-z0-9_-]*):([A-Z0-9_]+)$/
const TRAIT = /^trait([A-Za-z0-9_-]*):([A-Z0-9_]+)$/

/** Extra specs with no bearing on what Placement is asked (handled by Nova's filters or the hypervisor). */
const NOT_PLACEMENT =
  /^(hw|hw_rng|quota|os|aggregate_instance_extra_specs|capabilities|pci_passthrough|accel|vmware|powervm|hw_video|trust|provider):/

/** Turns `flavor` into Nova's request of Placement for one instance of it. */
export function flavorRequest(flavor: Flavor): FlavorRequest {
  const warnings: string[] = []
  const groups = new Map<string, RequestGroup>([['', newGroup('')]])
  const of = (suffix: string) => {
    let g = groups.get(suffix)
    if (!g) groups.set(suffix, (g = newGroup(suffix)))
    return g
  }
  const props = flavor.properties
  const dedicated = props['hw:cpu_policy'] === 'dedicated'
  const unsuffixed = of('')
  const cpuClass = dedicated ? 'PCPU' : 'VCPU'
  const cpus = flavor.vcpus + (dedicated && props['hw:emulator_threads_policy'] === 'isolate' ? 1 : 0)
  const defaults: Array<[string, number]> = [
    [cpuClass, cpus],
    ['MEMORY_MB', flavor.ram],
    ['DISK_GB', flavor.disk + flavor.ephemeral + Math.ceil(flavor.swap / 1024)],
  ]
  // Extra specs first: an explicit amount replaces the flavor's own.
  const explicit = new Map<string, number>()
  let policy: 'none' | 'isolate' | undefined
  for (const [key, raw] of Object.entries(props)) {
    const value = String(raw).trim()
    let m = RESOURCES.exec(key)
    if (m) {
      const n = Number(value)
      if (!Number.isInteger(n) || n < 0) {
        warnings.push(`${key}=${value}: not a whole amount, left out`)
        continue
      }
      if (m[1] === '') explicit.set(m[2], n)
      else if (n > 0) of(m[1]).resources.set(m[2], n)
      continue
    }
    m = TRAIT.exec(key)
    if (m) {
      const g = of(m[1])
      if (value === 'required') g.requiredTraits.push([m[2]])
      else if (value === 'forbidden') g.forbiddenTraits.add(m[2])
      else warnings.push(`${key}=${value}: a trait is required or forbidden, left out`)
      continue
    }
    if (key === 'group_policy') {
      if (value === 'none' || value === 'isolate') policy = value
      else warnings.push(`group_policy=${value}: none or isolate, left out`)
      continue
    }
    if (key === 'hw:cpu_policy' && (value === 'dedicated' || value === 'shared')) continue
    if (key === 'hw:emulator_threads_policy' && dedicated) continue
    if (key === 'hw:cpu_policy' && value === 'mixed') {
      warnings.push('hw:cpu_policy=mixed: its VCPU and PCPU split is not modelled; counted as VCPU')
      continue
    }
    warnings.push(NOT_PLACEMENT.test(key) ? `${key}: judged by Nova outside Placement, not modelled` : `${key}: not modelled`)
  }
  for (const [rc, n] of defaults) if (!explicit.has(rc) && n > 0) unsuffixed.resources.set(rc, n)
  // A dedicated flavor asks PCPU: an explicit VCPU amount stays as it is given.
  for (const [rc, n] of explicit) {
    if (n > 0) unsuffixed.resources.set(rc, n)
    else unsuffixed.resources.delete(rc)
  }
  if (flavor.memberOf?.length) unsuffixed.memberOf.push(...flavor.memberOf)
  // A granular group with traits but no resources asks nothing Placement can place on its own.
  for (const g of groups.values()) {
    if (g.suffix !== '' && g.resources.size === 0) {
      warnings.push(`group ${g.suffix}: traits without resources, left out`)
      groups.delete(g.suffix)
    }
  }
  const list = [...groups.values()].filter((g) => g.suffix !== '' || g.resources.size > 0 || groups.size === 1)
  const granular = list.filter((g) => g.suffix !== '').length
  if (granular > 1 && !policy)
    warnings.push('several granular groups without group_policy: Nova refuses such a flavor; counted with group_policy=none')
  return {
    flavor: flavor.name,
    request: {
      groups: list,
      groupPolicy: granular > 1 ? (policy ?? 'none') : policy,
      sameSubtree: [],
      rootRequired: [],
      rootForbidden: new Set(),
    },
    warnings,
  }
}

/** Each flavor's warnings, as answers list them. */
export const flavorWarnings = (flavors: readonly FlavorRequest[]): Array<{flavor: string; warning: string}> =>
  flavors.flatMap((f) => f.warnings.map((warning) => ({flavor: f.flavor, warning})))

/** The amount of each class one instance asks, over every group. */
export function askedPerClass(request: CandidateRequest): Map<string, number> {
  const out = new Map<string, number>()
  for (const g of request.groups) for (const [rc, n] of g.resources) out.set(rc, (out.get(rc) ?? 0) + n)
  return out
}
