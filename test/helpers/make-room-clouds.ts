/**
 * Tiny clouds for make-room's tests, and a model of them written here, apart from the planner:
 * what a move is (what a consumer holds on one host's providers found again, provider by provider,
 * on one provider each of another enabled host, what it holds on shared pools kept, the pools
 * reached from the new host), each provider's capacity, placement groups' rules, and how many of
 * a flavor fit (claims one after another, each the first candidate that fits). The candidates
 * engine is asked only what could ever fit, on the cloud with nothing used; what fits now is
 * this model's own sum.
 *
 * A cloud: one room, one row, 2 or 3 racks of 1 or 2 hosts (flat, or NUMA with two children),
 * maybe one disabled, maybe a shared DISK_GB pool some hosts reach; 3 to 6 consumers placed as
 * claims place them (some of their disk from the pool); 0 to 2 placement groups (any policy, by
 * host or rack, hard or soft; a hard one holds at first); a flavor to make room for.
 */
import {findCandidates} from '../../src/core/candidates/engine.js'
import type {CandidateRequest} from '../../src/core/candidates/request.js'
import type {Group, GroupLevel, GroupPolicy} from '../../src/core/groups.js'
import {flavorRequest, type FlavorRequest} from '../../src/core/headroom/flavors.js'
import {stateFromSnapshot, type Snapshot} from '../../src/core/snapshot.js'
import type {Inventory, State} from '../../src/core/state/state.js'
import {nodeUuid} from '../../src/core/topology.js'
import {cap, writeClaim} from './headroom-clouds.js'
import {inv} from './records.js'
import {rng} from './rng.js'

export type Allocs = Map<string, Map<string, number>>
/** Every consumer's allocations: a state of the cloud as this model sees it. */
export type Holding = Map<string, Allocs>

const SHARES = 'MISC_SHARES_VIA_AGGREGATE'
const DISABLED = 'COMPUTE_STATUS_DISABLED'

export interface TinyCloud {
  state: State
  flavor: FlavorRequest
  /** The rack or host of the goals (none: the cloud). */
  domain?: {level: 'rack' | 'host'; name: string}
}

export function tinyCloud(seed: number): TinyCloud {
  const r = rng(seed)
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1))
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  let n = 0
  const uuid = () => `${String(seed).padStart(8, '0')}-0000-4000-8000-${String(++n).padStart(12, '0')}`
  const providers: Snapshot['providers'] = []
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
      traits,
      aggregates,
    })
    return {uuid: u, root: parent?.root ?? u}
  }
  const room = nodeUuid('room', 'room1')
  const row = nodeUuid('row', 'row1')
  const topology: NonNullable<Snapshot['topology']> = [
    {uuid: room, name: 'room1', level: 'room', parent: null},
    {uuid: row, name: 'row1', level: 'row', parent: room},
  ]
  const poolAgg = r() < 0.45 ? `${String(seed).padStart(8, '0')}-aaaa-4000-8000-000000000000` : null
  if (poolAgg) add('pool', null, {DISK_GB: inv(int(40, 160))}, [SHARES], [poolAgg])
  const hosts: string[] = []
  let disabled = false
  const racks = int(2, 3)
  for (let k = 1; k <= racks; k++) {
    const rack = `rack${k}`
    topology.push({uuid: nodeUuid('rack', rack), name: rack, level: 'rack', parent: row})
    for (let h = 1; h <= int(1, 2) && hosts.length < 6; h++) {
      const name = `h${k}${h}`
      const aggs = [nodeUuid('rack', rack), row, room, ...(poolAgg && r() < 0.6 ? [poolAgg] : [])]
      const traits = !disabled && r() < 0.15 ? [DISABLED] : []
      if (traits.length) disabled = true
      const disk = poolAgg && r() < 0.3 ? {} : {DISK_GB: inv(pick([40, 60, 100]))}
      if (r() < 0.6)
        add(
          name,
          null,
          {VCPU: inv(int(4, 10), r() < 0.2 ? {allocation_ratio: 2} : {}), MEMORY_MB: inv(int(4, 10) * 1024), ...disk},
          traits,
          aggs,
        )
      else {
        const root = add(name, null, {...disk}, traits, aggs)
        for (let c = 0; c < 2; c++)
          add(`${name}-numa${c}`, root, {VCPU: inv(int(2, 5)), MEMORY_MB: inv(int(2, 5) * 1024)}, ['HW_NUMA_ROOT'], [])
      }
      hosts.push(name)
    }
  }
  const state = stateFromSnapshot(
    {classes: ['VCPU', 'MEMORY_MB', 'DISK_GB'], traits: [SHARES, DISABLED, 'HW_NUMA_ROOT'], providers, topology},
    0,
  )
  const small = () =>
    flavorRequest({
      name: 'small',
      vcpus: int(1, 2),
      ram: pick([512, 1024, 2048]),
      disk: pick([0, 10, 20]),
      ephemeral: 0,
      swap: 0,
      properties: {},
    })
  const consumers: string[] = []
  const wanted = int(3, 6)
  for (let tries = 0; consumers.length < wanted && tries < 40; tries++) {
    const host = state.providerByName.get(pick(hosts))!.uuid
    const onHost = findCandidates(state, small().request).allocationRequests.filter((a) =>
      [...a.allocations.keys()].every((u) => state.providers.get(u)!.root === host || state.providers.get(u)!.traits.has(SHARES)),
    )
    const pooled = onHost.find((a) => [...a.allocations.keys()].some((u) => state.providers.get(u)!.traits.has(SHARES)))
    const found = (r() < 0.5 ? pooled : undefined) ?? onHost[0]
    if (!found || ![...found.allocations.keys()].some((u) => state.providers.get(u)!.root === host)) continue
    const c = `${String(seed).padStart(8, '0')}-cccc-4000-8000-${String(consumers.length + 1).padStart(12, '0')}`
    writeClaim(state, c, found.allocations)
    consumers.push(c)
  }
  const model = new Model(state)
  for (let g = 0; g < int(0, 2); g++) {
    const policy = pick<GroupPolicy>(['affinity', 'anti-affinity', 'max-per', 'spread'])
    const group: Group = {
      name: `g${g}`,
      policy,
      level: pick<GroupLevel>(['host', 'rack']),
      soft: r() < 0.3,
      members: new Set(consumers.filter(() => r() < 0.5).slice(0, 3)),
      generation: 1,
      createdAt: 0,
      updatedAt: 0,
      ...(policy === 'max-per' ? {maxPer: int(1, 2)} : policy === 'spread' ? {maxSkew: int(0, 1)} : {}),
    }
    if (group.members.size < 2) continue
    // A hard rule holds at first (a write never made it break), else it is soft.
    if (!group.soft && !model.holds(group, model.holding())) group.soft = true
    state.groups.set(group.name, group)
  }
  const flavor = flavorRequest({
    name: 'big',
    vcpus: int(2, 4),
    ram: pick([2048, 3072, 4096]),
    disk: pick([0, 10, 20]),
    ephemeral: 0,
    swap: 0,
    properties: {},
  })
  const roll = r()
  const enabledHosts = hosts.filter((h) => !state.providerByName.get(h)!.traits.has(DISABLED))
  const domain =
    roll < 0.45
      ? {level: 'rack' as const, name: `rack${int(1, racks)}`}
      : roll < 0.65
        ? {level: 'host' as const, name: pick(enabledHosts)}
        : undefined
  return {state, flavor, domain}
}

/** One move of the model: the consumer's allocations after it, and the hosts (uuids) it leaves and goes to. */
export interface ModelMove {
  consumer: string
  from: string
  to: string
  allocations: Allocs
}

/** The cloud as this model reads it, apart from the planner: hosts, racks, capacities, pools, groups. */
export class Model {
  readonly hosts: string[]
  readonly rootOf = new Map<string, string>()
  readonly sharing = new Set<string>()
  readonly enabled = new Set<string>()
  readonly rackOf = new Map<string, string>()
  readonly capacity = new Map<string, Map<string, number>>()
  private readonly empty: State
  private readonly found = new Map<string, Allocs[]>()
  private readonly reach = new Map<string, boolean>()
  private readonly onHosts = new Map<string, Allocs[]>()
  private readonly placesOf = new Map<string, Array<{to: string; cand: Allocs}>>()

  constructor(readonly s: State) {
    for (const p of s.providers.values()) {
      if (p.traits.has(SHARES)) this.sharing.add(p.uuid)
      else this.rootOf.set(p.uuid, p.root)
      this.capacity.set(p.uuid, new Map([...p.inventories].map(([rc, i]) => [rc, cap(i)])))
    }
    this.hosts = [...s.providers.values()].filter((p) => p.parent === null && !this.sharing.has(p.uuid)).map((p) => p.uuid)
    for (const h of this.hosts) {
      const p = s.providers.get(h)!
      if (!p.traits.has(DISABLED)) this.enabled.add(h)
      for (const a of p.aggregates) if (s.topology.get(a)?.level === 'rack') this.rackOf.set(h, a)
    }
    // The same providers with nothing used: what could ever fit, asked once per request.
    this.empty = stateFromSnapshot(
      {
        classes: [...s.classes.keys()],
        traits: [...s.traits.keys()],
        providers: [...s.providers.values()].map((p) => ({
          uuid: p.uuid,
          name: p.name,
          generation: 1,
          parent_provider_uuid: p.parent,
          root_provider_uuid: p.root,
          inventories: Object.fromEntries(p.inventories),
          traits: [...p.traits],
          aggregates: [...p.aggregates],
        })),
      },
      0,
    )
  }

  /** Whether a provider of `host`'s tree shares an aggregate with the pool. */
  reached(host: string, pool: string): boolean {
    const key = `${host} ${pool}`
    let r = this.reach.get(key)
    if (r === undefined) {
      const aggs = this.s.providers.get(pool)!.aggregates
      r = [...this.rootOf].some(([rp, root]) => root === host && [...this.s.providers.get(rp)!.aggregates].some((a) => aggs.has(a)))
      this.reach.set(key, r)
    }
    return r
  }

  /** Every consumer's allocations in `s` now. */
  holding(s: State = this.s): Holding {
    return new Map([...s.consumers.values()].map((c) => [c.uuid, new Map([...c.allocations].map(([rp, a]) => [rp, new Map(a)]))]))
  }

  /** The candidates of `request` with nothing used, in the engine's order (kept). */
  candidates(key: string, request: CandidateRequest): Allocs[] {
    let found = this.found.get(key)
    if (!found) this.found.set(key, (found = findCandidates(this.empty, request).allocationRequests.map((a) => a.allocations)))
    return found
  }

  /** Each provider's usage in `h`. */
  usage(h: Holding): Map<string, Map<string, number>> {
    const used = new Map<string, Map<string, number>>()
    for (const allocs of h.values())
      for (const [rp, a] of allocs) {
        const u = used.get(rp) ?? new Map<string, number>()
        for (const [rc, n] of a) u.set(rc, (u.get(rc) ?? 0) + n)
        used.set(rp, u)
      }
    return used
  }

  /** Whether `allocs` fit on top of `used` (capacity of every provider, as Placement computes it). */
  fitsOn(used: Map<string, Map<string, number>>, allocs: Allocs): boolean {
    for (const [rp, a] of allocs)
      for (const [rc, n] of a) if ((used.get(rp)?.get(rc) ?? 0) + n > (this.capacity.get(rp)?.get(rc) ?? 0)) return false
    return true
  }

  /** Whether no provider is used beyond its capacity in `h`. */
  withinCapacity(h: Holding): boolean {
    for (const [rp, u] of this.usage(h)) for (const [rc, n] of u) if (n > (this.capacity.get(rp)?.get(rc) ?? 0)) return false
    return true
  }

  /** The hosts a consumer is on in `h`. */
  hostsOf(h: Holding, consumer: string): string[] {
    return [...new Set([...(h.get(consumer)?.keys() ?? [])].flatMap((rp) => (this.sharing.has(rp) ? [] : [this.rootOf.get(rp)!])))]
  }

  /** Whether `g`'s rule holds in `h` (every host is in a rack here). */
  holds(g: Group, h: Holding): boolean {
    const counts = new Map<string, number>()
    const domains: string[][] = []
    for (const m of g.members) {
      const ds = [...new Set(this.hostsOf(h, m).map((host) => (g.level === 'host' ? host : this.rackOf.get(host)!)))]
      if (ds.length === 0) continue
      domains.push(ds)
      for (const d of ds) counts.set(d, (counts.get(d) ?? 0) + 1)
    }
    if (g.policy === 'affinity') return domains.length < 2 || domains[0].some((d) => domains.every((ds) => ds.includes(d)))
    if (g.policy === 'anti-affinity') return [...counts.values()].every((c) => c <= 1)
    if (g.policy === 'max-per') return [...counts.values()].every((c) => c <= g.maxPer!)
    const all = g.level === 'host' ? this.hosts : [...new Set(this.rackOf.values())]
    const per = all.map((d) => counts.get(d) ?? 0)
    return Math.max(...per) - Math.min(...per) <= g.maxSkew!
  }

  /** Whether every hard group's rule holds in `h`. */
  rulesHold(h: Holding): boolean {
    return [...this.s.groups.values()].every((g) => g.soft || this.holds(g, h))
  }

  /**
   * Where what a consumer holds on one host (`held`: its providers' amounts) could ever go: each
   * provider's amounts on a provider of their own (one group each, isolate), or, when no class is
   * on two providers, all as one group; each place once, with the one host it is on (kept).
   */
  places(held: Array<[string, Map<string, number>]>): Array<{to: string; cand: Allocs}> {
    const key = held.map(([, a]) => [...a].join()).join('|')
    let out = this.placesOf.get(key)
    if (out) return out
    const group = (suffix: string, resources: Map<string, number>) => ({
      suffix,
      resources,
      requiredTraits: [],
      forbiddenTraits: new Set<string>(),
      memberOf: [],
      forbiddenAggs: new Set<string>(),
    })
    const ask = (groups: CandidateRequest['groups']): CandidateRequest => ({
      groups,
      groupPolicy: groups.length > 1 ? 'isolate' : undefined,
      sameSubtree: [],
      rootRequired: [],
      rootForbidden: new Set([DISABLED]),
    })
    const classes = held.flatMap(([, a]) => [...a.keys()])
    const found = this.candidates(key, ask(held.map(([, a], i) => group(`_M${i}`, new Map(a)))))
    const folded =
      new Set(classes).size === classes.length
        ? this.candidates(`folded ${key}`, ask([group('', new Map(held.flatMap(([, a]) => [...a])))]))
        : []
    const seen = new Set<string>()
    out = []
    for (const cand of [...found, ...folded]) {
      const text = [...cand]
        .map(([rp, a]) => `${rp}:${[...a].sort().join()}`)
        .sort()
        .join(';')
      if (seen.has(text)) continue
      seen.add(text)
      const roots = new Set([...cand.keys()].filter((rp) => !this.sharing.has(rp)).map((rp) => this.rootOf.get(rp)!))
      if (roots.size === 1) out.push({to: [...roots][0], cand})
    }
    this.placesOf.set(key, out)
    return out
  }

  /** Every move from `h`: each consumer's each host, to each enabled other host with room, its hard rules holding after. */
  moves(h: Holding): ModelMove[] {
    const out: ModelMove[] = []
    const used = this.usage(h)
    for (const [consumer, allocs] of h)
      for (const from of this.hostsOf(h, consumer)) {
        const held = [...allocs].filter(([rp]) => !this.sharing.has(rp) && this.rootOf.get(rp) === from)
        const kept = [...allocs].filter(([rp]) => !held.some(([x]) => x === rp))
        const without = new Map([...used].map(([rp, u]) => [rp, new Map(u)]))
        for (const [rp, a] of held) for (const [rc, n] of a) without.get(rp)!.set(rc, without.get(rp)!.get(rc)! - n)
        for (const {to, cand} of this.places(held)) {
          if (to === from || !this.enabled.has(to)) continue
          // What it keeps on pools must be reached from the new host's tree.
          if (!kept.every(([rp]) => !this.sharing.has(rp) || this.reached(to, rp))) continue
          if (!this.fitsOn(without, cand)) continue
          const after: Allocs = new Map(kept.map(([rp, a]) => [rp, new Map(a)]))
          for (const [rp, a] of cand) {
            const sum = new Map(after.get(rp) ?? [])
            for (const [rc, n] of a) sum.set(rc, (sum.get(rc) ?? 0) + n)
            after.set(rp, sum)
          }
          const next = new Map(h).set(consumer, after)
          if (!this.rulesHold(next)) continue
          out.push({consumer, from, to, allocations: after})
        }
      }
    return out
  }

  /** How many of `flavor` fit on `hosts` (uuids, enabled) in `h`: claims one after another, each the first candidate that fits. */
  fit(h: Holding, flavor: FlavorRequest, hosts: ReadonlySet<string>): number {
    const used = this.usage(h)
    const key = `${flavor.flavor} on ${[...hosts].sort().join()}`
    let cands = this.onHosts.get(key)
    if (!cands)
      this.onHosts.set(
        key,
        (cands = this.candidates(`flavor ${flavor.flavor}`, flavor.request).filter((c) => {
          const roots = [...c.keys()].filter((rp) => !this.sharing.has(rp)).map((rp) => this.rootOf.get(rp)!)
          return roots.length > 0 && roots.every((root) => hosts.has(root))
        })),
      )
    let count = 0
    for (;;) {
      const c = cands.find((x) => this.fitsOn(used, x))
      if (!c) return count
      for (const [rp, a] of c) {
        const u = used.get(rp) ?? new Map<string, number>()
        for (const [rc, n] of a) u.set(rc, (u.get(rc) ?? 0) + n)
        used.set(rp, u)
      }
      count++
    }
  }
}

/** A holding as a key: each consumer's allocations, sorted (consumers keep the start's order; each one's text kept). */
export function holdingKey(h: Holding): string {
  let key = ''
  for (const [c, a] of h) {
    let text = texts.get(a)
    if (text === undefined)
      texts.set(
        a,
        (text = [...a]
          .map(([rp, x]) => `${rp}:${[...x].sort().join()}`)
          .sort()
          .join(';')),
      )
    key += `${c}=${text}\n`
  }
  return key
}
const texts = new WeakMap<Allocs, string>()

/** The fewest moves from `start` to a holding `goal` accepts, by breadth-first search (null: none within `limit` holdings; Infinity: none at all). */
export function fewestByBfs(model: Model, start: Holding, goal: (h: Holding) => boolean, limit: number): number | null {
  let level = [start]
  const seen = new Set([holdingKey(start)])
  for (let depth = 0; level.length; depth++) {
    const next: Holding[] = []
    for (const h of level) {
      if (goal(h)) return depth
      for (const m of model.moves(h)) {
        const after = new Map(h).set(m.consumer, m.allocations)
        const key = holdingKey(after)
        if (seen.has(key)) continue
        seen.add(key)
        if (seen.size > limit) return null
        next.push(after)
      }
    }
    level = next
  }
  return Infinity
}
