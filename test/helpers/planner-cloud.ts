/**
 * A capacity planner's cloud, built the same way every time: 2 rooms, 4 rows (2 a room), 12 racks
 * (3 a row), 48 hosts (4 a rack) of three kinds (general hosts with VCPU, MEMORY_MB and DISK_GB on
 * the root; NUMA hosts with DISK_GB on the root and two HW_NUMA_ROOT children of VCPU, PCPU and
 * MEMORY_MB; GPU hosts, NUMA hosts with a VGPU grandchild), 3 of them disabled. Every host has
 * local disk AND reaches its room's Ceph-like pool (a MISC_SHARES_VIA_AGGREGATE provider of
 * DISK_GB in the room's aggregate; the hosts are in their rack's, row's and room's). Reserved
 * amounts and ratios as a real cloud sets them (VCPU 4.0 or 16.0, MEMORY_MB 1.0 or 1.5, DISK_GB
 * 1.0), and about 300 consumers already placed as claims place them (the candidates engine's
 * candidates, written with writeAllocations, so usages are real): random flavors on random
 * hosts, some taking their disk from the pool, two hosts packed full, and an anti-affinity group
 * by rack holding four of them. The flavors are 10, as osc prints them (`openstack flavor list
 * --long -f json`), read by the parser the command line uses.
 */
import {findCandidates} from '../../src/core/candidates/engine.js'
import {parseFlavors} from '../../src/core/headroom/flavor-file.js'
import {flavorRequest, type Flavor, type FlavorRequest} from '../../src/core/headroom/flavors.js'
import {newBreaches, type Group} from '../../src/core/groups.js'
import {isSharing} from '../../src/core/host.js'
import {stateFromSnapshot, type Snapshot} from '../../src/core/snapshot.js'
import type {Inventory, State} from '../../src/core/state/state.js'
import {nodeUuid} from '../../src/core/topology.js'
import type {ConsumerRecord} from '../../src/core/wire.js'
import {writeClaim} from './headroom-clouds.js'
import {rng} from './rng.js'
import {inv} from './records.js'

export const PLANNER_CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'PCPU', 'VGPU']
export const PLANNER_TRAITS = ['MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_STATUS_DISABLED', 'HW_NUMA_ROOT']

/** The catalog as `openstack flavor list --long -f json` prints it (Swap "" when none; Properties as newer osc prints them). */
export const PLANNER_FLAVOR_FILE = JSON.stringify(
  [
    osc('1', 'm1.small', 1, 2048, 20, 0, 0, {}),
    osc('2', 'm1.medium', 2, 4096, 40, 0, 0, {}),
    osc('3', 'm1.large', 4, 8192, 80, 0, 0, {}),
    osc('4', 'm1.xlarge', 8, 16384, 160, 0, 0, {}),
    // 20 GB root + 100 GB ephemeral + 2 GB swap: 122 DISK_GB an instance.
    osc('5', 'e1.large', 4, 8192, 20, 100, 2048, {}),
    osc('6', 'r1.large', 4, 32768, 40, 0, 0, {}),
    osc('7', 'c1.dedicated', 4, 8192, 40, 0, 0, {'hw:cpu_policy': 'dedicated'}),
    osc('8', 'g1.vgpu', 4, 16384, 40, 0, 0, {'resources:VGPU': '1'}),
    osc('9', 'v1.bfv', 2, 4096, 20, 0, 0, {'resources:DISK_GB': '0'}),
    osc('10', 'n1.nodisk', 2, 2048, 0, 0, 0, {}),
  ],
  null,
  2,
)

function osc(id: string, name: string, vcpus: number, ram: number, disk: number, ephemeral: number, swap: number, props: object) {
  return {
    ID: id,
    Name: name,
    RAM: ram,
    Disk: disk,
    Ephemeral: ephemeral,
    VCPUs: vcpus,
    'Is Public': true,
    Swap: swap || '',
    'RXTX Factor': 1.0,
    Properties: props,
  }
}

export type HostKind = 'general' | 'numa' | 'gpu'

export interface PlannerCloud {
  /** Providers (usages left to the consumers), consumers and the topology's nodes. */
  snapshot: Snapshot
  flavors: Flavor[]
  /** The anti-affinity group by rack: add it to a State's groups (a snapshot has none). */
  group: Group
  /** Each host's kind, by name. */
  kinds: Map<string, HostKind>
  /** The disabled hosts' names. */
  disabled: string[]
  /** The packed hosts' names (enabled, full of n1.nodisk). */
  packed: string[]
}

export function plannerCloud(seed = 4242): PlannerCloud {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  let n = 0
  const uuid = (kind: string) => `${kind}-0000-4000-8000-${String(++n).padStart(12, '0')}`
  const providers: Snapshot['providers'] = []
  const add = (
    name: string,
    parent: {uuid: string; root: string} | null,
    inventories: Record<string, Inventory>,
    traits: string[],
    aggregates: string[],
  ) => {
    const u = uuid(parent ? 'cccccccc' : 'aaaaaaaa')
    const root = parent?.root ?? u
    providers.push({
      uuid: u,
      name,
      generation: 1,
      parent_provider_uuid: parent?.uuid ?? null,
      root_provider_uuid: root,
      inventories,
      traits,
      aggregates,
    })
    return {uuid: u, root}
  }
  const topology: NonNullable<Snapshot['topology']> = []
  const kinds = new Map<string, HostKind>()
  const hostUuids: string[] = []
  for (let room = 1; room <= 2; room++) {
    const roomName = `room${room}`
    const roomAgg = nodeUuid('room', roomName)
    topology.push({uuid: roomAgg, name: roomName, level: 'room', parent: null})
    // The room's Ceph pool: 4 to 6 TB, no reserved, ratio 1.0.
    add(`ceph-${roomName}`, null, {DISK_GB: inv(pick([4000, 5000, 6000]))}, ['MISC_SHARES_VIA_AGGREGATE'], [roomAgg])
    for (let row = 1; row <= 2; row++) {
      const rowName = `row${room}${row}`
      topology.push({uuid: nodeUuid('row', rowName), name: rowName, level: 'row', parent: roomAgg})
      for (let rack = 1; rack <= 3; rack++) {
        const rackName = `rack${room}${row}${rack}`
        topology.push({uuid: nodeUuid('rack', rackName), name: rackName, level: 'rack', parent: nodeUuid('row', rowName)})
        const aggs = [nodeUuid('rack', rackName), nodeUuid('row', rowName), roomAgg]
        for (let h = 1; h <= 4; h++) {
          const name = `cmp-${room}${row}${rack}-${h}`
          // Two general hosts a rack, the others NUMA or GPU (about one in three of them GPU).
          const kind: HostKind = h <= 2 ? 'general' : r() < 0.35 ? 'gpu' : 'numa'
          kinds.set(name, kind)
          const localDisk = inv(pick([240, 480, 960]), {reserved: pick([0, 0, 20, 50])})
          let host: {uuid: string; root: string}
          if (kind === 'general') {
            const cores = pick([16, 24, 32])
            host = add(
              name,
              null,
              {
                VCPU: inv(cores, {reserved: pick([0, 2]), allocation_ratio: pick([4, 16])}),
                MEMORY_MB: inv(pick([64, 96, 128]) * 1024, {reserved: pick([4096, 8192]), allocation_ratio: pick([1, 1.5])}),
                DISK_GB: localDisk,
              },
              [],
              aggs,
            )
          } else {
            host = add(name, null, {DISK_GB: localDisk}, [], aggs)
            const vcpuRatio = pick([4, 16])
            const ramRatio = pick([1, 1.5])
            const gpuOn = kind === 'gpu' ? Math.floor(r() * 2) : -1
            for (let k = 0; k < 2; k++) {
              const numa = add(
                `${name}-numa${k}`,
                host,
                {
                  VCPU: inv(pick([8, 12]), {reserved: k === 0 ? pick([0, 2]) : 0, allocation_ratio: vcpuRatio}),
                  PCPU: inv(pick([4, 8])),
                  MEMORY_MB: inv(pick([24, 32]) * 1024, {reserved: k === 0 ? pick([2048, 4096]) : 0, allocation_ratio: ramRatio}),
                },
                ['HW_NUMA_ROOT'],
                [],
              )
              if (k === gpuOn) add(`${name}-numa${k}-pgpu`, numa, {VGPU: inv(pick([4, 8]))}, [], [])
            }
          }
          hostUuids.push(host.uuid)
        }
      }
    }
  }
  // Three hosts out of service: one of each kind.
  const nameOf = new Map(providers.map((p) => [p.uuid, p.name]))
  const disabled: string[] = []
  for (const kind of ['general', 'numa', 'gpu'] as const) {
    const of = hostUuids.filter((u) => kinds.get(nameOf.get(u)!) === kind && !disabled.includes(nameOf.get(u)!))
    disabled.push(nameOf.get(pick(of))!)
  }
  for (const p of providers) if (disabled.includes(p.name)) p.traits = [...(p.traits ?? []), 'COMPUTE_STATUS_DISABLED']

  const flavors = parseFlavors(PLANNER_FLAVOR_FILE, 'planner-flavors.json')
  const requests = new Map(flavors.map((f) => [f.name, flavorRequest(f)]))
  const state = stateFromSnapshot(structuredClone({classes: PLANNER_CLASSES, traits: PLANNER_TRAITS, providers, topology}))
  const consumers: ConsumerRecord[] = []
  let c = 0
  const group: Group = {
    name: 'web-aa',
    policy: 'anti-affinity',
    level: 'rack',
    soft: false,
    members: new Set(),
    generation: 1,
    createdAt: 0,
    updatedAt: 0,
  }
  state.groups.set(group.name, group)

  /** Claims one instance of `flavor` on `host` (its tree and the pools it reaches), as a claim writes it; whether it fit. */
  const claim = (flavor: FlavorRequest, host: string, opts: {fromPool?: boolean; member?: boolean} = {}): boolean => {
    const consumer = `dddddddd-0000-4000-8000-${String(++c).padStart(12, '0')}`
    const onHost = findCandidates(state, flavor.request).allocationRequests.filter((a) => {
      const ps = [...a.allocations.keys()].map((u) => state.providers.get(u)!)
      if (!ps.some((p) => p.root === host) || !ps.every((p) => p.root === host || isSharing(p))) return false
      return (
        !opts.member ||
        newBreaches(state, {placements: new Map([[consumer, a.allocations.keys()]]), joins: new Map([[group.name, [consumer]]])}).length ===
          0
      )
    })
    const drawsOnPool = (a: (typeof onHost)[number]) => [...a.allocations.keys()].some((u) => isSharing(state.providers.get(u)!))
    const found = (opts.fromPool ? onHost.find(drawsOnPool) : undefined) ?? onHost[0]
    if (!found) return false
    writeClaim(state, consumer, found.allocations, {project: 'planner', user: 'planner'})
    if (opts.member) group.members.add(consumer)
    consumers.push({
      uuid: consumer,
      project_id: 'planner',
      user_id: 'planner',
      allocations: Object.fromEntries([...found.allocations].map(([rp, a]) => [rp, {resources: Object.fromEntries(a)}])),
    })
    return true
  }

  // The anti-affinity group's four members, each in a rack of its own (the rule refuses a second one in a rack).
  const enabledHosts = hostUuids.filter((u) => !disabled.includes(nameOf.get(u)!))
  for (let tries = 0; group.members.size < 4 && tries < 100; tries++) claim(requests.get('m1.large')!, pick(enabledHosts), {member: true})
  // Two enabled general hosts packed with n1.nodisk until it no longer fits: the catalog's smallest memory, so nothing fits there.
  const packed: string[] = []
  while (packed.length < 2) {
    const u = pick(enabledHosts)
    if (kinds.get(nameOf.get(u)!) === 'general' && !packed.includes(nameOf.get(u)!)) packed.push(nameOf.get(u)!)
  }
  for (const name of packed) while (claim(requests.get('n1.nodisk')!, state.providerByName.get(name)!.uuid));
  // The rest: random flavors (the small ones most) on random hosts, disabled ones too (placed before they were disabled),
  // about a third of them with their disk from the room's pool where their host's candidates offer it.
  const weights: Array<[string, number]> = [
    ['m1.small', 6],
    ['m1.medium', 6],
    ['m1.large', 4],
    ['m1.xlarge', 2],
    ['e1.large', 2],
    ['r1.large', 2],
    ['c1.dedicated', 2],
    ['g1.vgpu', 1],
    ['v1.bfv', 2],
    ['n1.nodisk', 1],
  ]
  const sum = weights.reduce((a, [, w]) => a + w, 0)
  const randomFlavor = () => {
    let x = r() * sum
    for (const [name, w] of weights) if ((x -= w) < 0) return requests.get(name)!
    return requests.get(weights[0][0])!
  }
  const others = hostUuids.filter((u) => !packed.includes(nameOf.get(u)!))
  for (let tries = 0; consumers.length < 300 && tries < 2000; tries++) claim(randomFlavor(), pick(others), {fromPool: r() < 0.35})

  const snapshot: Snapshot = {
    classes: PLANNER_CLASSES,
    traits: PLANNER_TRAITS,
    // Usages follow the consumers.
    providers,
    consumers,
    topology,
  }
  return {snapshot, flavors, group, kinds, disabled, packed}
}

/** A State of the planner's cloud, with its group. */
export function plannerState(cloud: PlannerCloud): State {
  const s = stateFromSnapshot(structuredClone(cloud.snapshot))
  s.groups.set(cloud.group.name, {...cloud.group, members: new Set(cloud.group.members)})
  return s
}
