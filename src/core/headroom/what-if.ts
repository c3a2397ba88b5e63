/**
 * What if a host, rack, row or room were lost, a class's allocation ratio changed, or hosts of a
 * shape were added (an apply file's providers, in existing racks): the change
 * made on a copy of the State (never on the cloud), and every consumer the lost hosts held placed
 * again as a claim would place it (largest first, the first candidate its placement groups' hard
 * rules allow, disabled hosts avoided), or named as unplaceable with the reason. The copy then
 * answers the headroom after the change: N+1 per failure domain.
 */
import {putAllocationErrors, writeAllocations} from '../placement/allocations.js'
import {capacityOf} from '../inventory-capacity.js'
import {Changes} from '../state/changes.js'
import {PlacementError} from '../errors.js'
import {FirstFit} from './first-fit.js'
import {refuseNewBreaches} from '../groups.js'
import {everyHost, hostsOfProviders, isSharing} from '../host.js'
import {State, newProvider, type Consumer, type Provider, type TopologyLevel, type TopologyNode} from '../state/state.js'
import {hostDomains, nodeUuid} from '../topology.js'
import {planApply} from '../apply-plan/plan.js'
import type {ApplyFile} from '../apply-plan/types.js'
import {runBatch} from '../batch.js'

export interface LostDomain {
  level: 'host' | TopologyLevel
  name: string
}

export interface WhatIfChange {
  without?: LostDomain[]
  /** Class -> the allocation ratio every inventory of it takes. */
  ratios?: Map<string, number>
  /** Hosts to add (an apply file's providers), and the existing racks they go in (its layout's racks and hosts). */
  add?: {file: ApplyFile; racks: Array<{rack: string; hosts: string[]}>}
}

export interface Displaced {
  consumer: string
  /** The hosts it was on. */
  from: string[]
  /** The hosts it went to, then the shared pools it takes from (its pooled disk stays there); null when it could not be placed again. */
  to: string[] | null
  why?: string
}

export interface WhatIf {
  /** The copy after the change, with the displaced consumers placed again where they could be. */
  after: State
  displaced: Displaced[]
  /** Whether every displaced consumer found a place. */
  survives: boolean
}

/** Whether `change` asks nothing to be tried (no domain lost, no ratio, no host added). */
export const changesNothing = (change: WhatIfChange | undefined): boolean =>
  !change?.without?.length && !change?.ratios?.size && !change?.add

/**
 * A copy of `s` to change freely: providers with their usages, consumers and their allocations,
 * topology, groups. Made from the State's own records, not through wire records (a cloud of
 * 10,000 hosts holds tens of thousands of consumers). The copy's inventory, trait and aggregate
 * sets are its own shared ones, its providers' usages and allocations its own maps; each
 * consumer's amounts are the cloud's, which a change replaces, never edits.
 */
export function copyState(s: State): State {
  const copy = new State()
  copy.changes = new Changes()
  for (const [name, c] of s.classes) copy.addClass(name, c.createdAt, c.id)
  for (const [name, t] of s.traits) copy.addTrait(name, t.createdAt, t.id)
  for (const p of s.providers.values()) {
    const q = newProvider(p.uuid, p.name, null, p.createdAt)
    q.seq = p.seq
    q.generation = p.generation
    q.parent = p.parent
    q.root = p.root
    q.updatedAt = p.updatedAt
    q.inventories = copy.shared.inventories(p.inventories)
    q.traits = copy.shared.traits([...p.traits])
    q.aggregates = copy.shared.aggregates([...p.aggregates])
    if (p.usages.size) q.usages = new Map(p.usages)
    if (p.allocations.size) q.allocations = new Map(p.allocations)
    copy.addProvider(q)
  }
  // A child read before its parent is listed among the parent's children here.
  for (const q of copy.providers.values()) if (q.parent) copy.adopt(copy.providers.get(q.parent), q.uuid)
  for (const c of s.consumers.values()) copy.addConsumer({...c})
  for (const n of s.topology.values()) copy.setTopologyNode({...n})
  // Groups are read, never changed, by what is tried on the copy.
  for (const [name, g] of s.groups) copy.groups.set(name, g)
  copy.changes = null
  return copy
}

/** The hosts of `s` a lost domain takes with it; a domain nobody has is a 404. */
export function lostHosts(s: State, lost: readonly LostDomain[]): Provider[] {
  const hosts = everyHost(s)
  const out = new Set<Provider>()
  for (const d of lost) {
    const inIt = hosts.filter((h) => (d.level === 'host' ? h.name === d.name : hostDomains(s, h)[d.level] === d.name))
    if (inIt.length === 0) throw new PlacementError(404, `No ${d.level} named ${d.name} with hosts`)
    for (const h of inIt) out.add(h)
  }
  return [...out]
}

/** Makes `change` on a copy of `s` and places again what the lost hosts held. */
export function whatIf(s: State, change: WhatIfChange): WhatIf {
  for (const [rc, r] of change.ratios ?? [])
    if (!(r > 0)) throw new PlacementError(400, `The allocation ratio of ${rc} must be above 0, not ${r}`)
  const lost = lostHosts(s, change.without ?? [])
  const after = copyState(s)
  after.changes = new Changes()
  if (change.add) addHosts(after, change.add)
  for (const [rc, ratio] of change.ratios ?? []) {
    for (const p of after.providers.values()) {
      const inv = p.inventories.get(rc)
      if (inv) after.setInventory(p, rc, {...inv, allocation_ratio: ratio})
    }
  }
  const lostRoots = new Set(lost.map((h) => h.uuid))
  const displaced = displace(after, [...after.consumers.values()], lostRoots)
  // The lost hosts can take nothing: they keep no inventory in the copy.
  for (const root of lostRoots)
    for (const p of after.subtree(root)) for (const rc of [...p.inventories.keys()]) after.deleteInventory(p, rc)
  after.version += 1
  const out = placeAll(after, displaced)
  after.changes = null
  return {after, displaced: out, survives: out.every((d) => d.to !== null)}
}

/** A consumer taken off lost hosts: where it was, and what it takes in all. */
export interface Displacement {
  consumer: Consumer
  from: string[]
  wanted: Map<string, number>
}

/**
 * Takes every consumer of `among` that the hosts of `lostRoots` hold off the cloud, whole (with
 * what it took from shared pools); `s` must be in a transaction (s.changes).
 */
export function displace(s: State, among: Iterable<Consumer>, lostRoots: ReadonlySet<string>): Displacement[] {
  const out: Displacement[] = []
  for (const c of among)
    if ([...c.allocations.keys()].some((rp) => lostRoots.has(s.providers.get(rp)?.root ?? '')))
      out.push({consumer: c, from: hostNames(s, c.allocations.keys()), wanted: new Map(sumByClass(c.allocations))})
  for (const d of out) s.setAllocations(d.consumer, new Map())
  return out
}

/** Places displaced consumers again, largest first (what is hardest to place goes before what fills the gaps). */
export function placeAll(s: State, displaced: Displacement[], avoid?: ReadonlySet<string>): Displaced[] {
  displaced.sort((a, b) => size(b.wanted) - size(a.wanted) || a.consumer.uuid.localeCompare(b.consumer.uuid))
  const most = largestAllocations(s)
  const walk = new FirstFit(s, avoid)
  return displaced.map((d) => {
    // Asked of one provider a class, as one group asks: more than any can take fits nowhere, and
    // a search that finds nothing would walk every tree to say so.
    const over = [...d.wanted].find(([rc, n]) => n > (most.get(rc) ?? 0))
    if (over)
      return {
        consumer: d.consumer.uuid,
        from: d.from,
        to: null,
        why: `no provider takes ${over[0]}:${over[1]} in one allocation (the most one takes is ${most.get(over[0]) ?? 0})`,
      }
    return {consumer: d.consumer.uuid, from: d.from, ...placeAgain(s, walk, d.consumer.uuid, d.wanted)}
  })
}

/** The first candidate for `wanted` that its groups allow (FirstFit), written on `s`; or why there is none. */
function placeAgain(s: State, walk: FirstFit, consumer: string, wanted: Map<string, number>): {to: string[] | null; why?: string} {
  const found = walk.first(wanted, (allocations) => {
    try {
      refuseNewBreaches(s, {placements: new Map([[consumer, allocations.keys()]])})
      return null
    } catch (err) {
      return (err as Error).message
    }
  })
  if ('why' in found) return {to: null, why: found.why}
  const c = s.consumers.get(consumer)!
  writeAllocations(s, 0, [{uuid: consumer, allocations: found.allocations, project: c.project, user: c.user, type: c.type}], {
    checkGeneration: false,
    ...putAllocationErrors(consumer),
  })
  s.version += 1
  walk.took(found.allocations)
  return {to: placedOn(s, found.allocations.keys())}
}

/** The most of each class one provider takes in one allocation (max_unit, and capacity), while the shape stands. */
function largestAllocations(s: State): Map<string, number> {
  const kept = largest.get(s)
  if (kept?.shapeVersion === s.shapeVersion) return kept.most
  const most = new Map<string, number>()
  for (const p of s.providers.values())
    for (const [rc, inv] of p.inventories) most.set(rc, Math.max(most.get(rc) ?? 0, Math.min(inv.max_unit, capacityOf(inv))))
  largest.set(s, {shapeVersion: s.shapeVersion, most})
  return most
}
const largest = new WeakMap<State, {shapeVersion: number; most: Map<string, number>}>()

/**
 * Adds an apply file's providers to `s` (never removing any) and puts the hosts it names in the
 * existing racks (and so their rows and rooms). A plan the apply would refuse is refused here.
 */
function addHosts(s: State, add: NonNullable<WhatIfChange['add']>): void {
  const plan = planApply(add.file, s, {prune: false})
  runBatch(s, 0, plan.operations())
  for (const {rack, hosts} of add.racks) {
    const node = s.topology.get(nodeUuid('rack', rack))
    if (!node) throw new PlacementError(404, `No rack named ${rack}: added hosts go in racks the topology has`)
    const aggregates: string[] = []
    for (let n: TopologyNode | undefined = node; n; n = n.parent ? s.topology.get(n.parent) : undefined) aggregates.push(n.uuid)
    for (const name of hosts) {
      const host = s.providerByName.get(name) ?? s.providers.get(name)
      if (!host) throw new PlacementError(404, `No host named ${name} in the file or the cloud`)
      s.setAggregates(host, [...host.aggregates, ...aggregates])
    }
  }
}

/** The names of the hosts `providers` are in, then of the sharing providers among them. */
const placedOn = (s: State, on: Iterable<string>): string[] => {
  const providers = [...on]
  const pools = providers.flatMap((u) => {
    const p = s.providers.get(u)
    return p && isSharing(p) ? [p.name] : []
  })
  return [...hostNames(s, providers), ...pools.sort()]
}

/** The names of the hosts `providers` are in (shared resources are on none). */
const hostNames = (s: State, providers: Iterable<string>): string[] =>
  hostsOfProviders(s, providers)
    .map((u) => s.providers.get(u)!.name)
    .sort()

function sumByClass(allocations: Map<string, Map<string, number>>): Map<string, number> {
  const out = new Map<string, number>()
  for (const a of allocations.values()) for (const [rc, n] of a) out.set(rc, (out.get(rc) ?? 0) + n)
  return out
}

/** A consumer's size, to place the largest first: its CPUs, then its memory in GB, then the rest. */
const size = (wanted: Map<string, number>): number =>
  ((wanted.get('VCPU') ?? 0) + (wanted.get('PCPU') ?? 0)) * 1e9 +
  (wanted.get('MEMORY_MB') ?? 0) * 1e3 +
  [...wanted.values()].reduce((a, b) => a + b, 0) / 1e6
