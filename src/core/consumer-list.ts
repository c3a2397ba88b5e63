/**
 * Consumers as a listing of their own (`placemat consumer list`, GET /placemat/v1/consumers)
 * and one consumer in full (`consumer show`, GET /placemat/v1/consumers/{uuid}): who it is,
 * what it holds and where (hosts and their racks, rows and rooms), and the placement groups it
 * is a member of. Decided here for every transport: the daemon answers these records, and the
 * command line makes the same from a State read over Placement's standard API, where groups are
 * unknown (null: plain Placement keeps none).
 */
import {notFound} from './errors.js'
import {hostOfProvider, hostsOfProviders, isDisabled} from './host.js'
import {hostDomains} from './topology.js'
import {knownConsumer, type KnownConsumer} from './consumer-moves.js'
import type {Consumer, State} from './state/state.js'
import {consumerRecord, type ConsumerRecord} from './wire.js'

export interface ConsumerFilter {
  /** Consumers holding something in the tree of this provider (a host's uuid: on that host). */
  inTree?: string
  project?: string
  /** Members of this placement group. */
  group?: string
}

/** A consumer as GET /placemat/v1/consumers lists it: its record, where it is, and its groups. */
export interface ConsumerListing extends ConsumerRecord {
  /** The hosts its allocations are on, by name (none for shared resources alone). */
  hosts: string[]
  /** The placement groups it is a member of, by name; null where groups are unknown. */
  groups: string[] | null
}

export interface ListOptions {
  /** Whether placement groups are known (placemat); otherwise each listing's groups are null. */
  groups: boolean
}

/** 404 for a filter naming a provider or a placement group there is none of. */
export function checkConsumerFilter(s: State, filter: ConsumerFilter): void {
  if (filter.inTree !== undefined && !s.providers.has(filter.inTree))
    throw notFound(`No resource provider with uuid ${filter.inTree} found.`)
  if (filter.group !== undefined && !s.groups.has(filter.group)) throw notFound(`No placement group named '${filter.group}'.`)
}

/** Names of the groups each consumer is a member of (every group once: not a scan per consumer). */
export function groupsByMember(s: State): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const g of [...s.groups.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    for (const m of g.members) {
      const list = out.get(m)
      if (list) list.push(g.name)
      else out.set(m, [g.name])
    }
  }
  return out
}

/** The names of the hosts a consumer's allocations are on (host.ts: shared resources are on none). */
function hostNames(s: State, c: Consumer): string[] {
  return hostsOfProviders(s, c.allocations.keys())
    .map((u) => s.providers.get(u)?.name ?? u)
    .sort()
}

/**
 * The consumers that pass every filter given, in the State's order (the order they were
 * written). A filter naming a provider or group there is none of matches nothing
 * (checkConsumerFilter says so first).
 */
export function selectConsumers(s: State, filter: ConsumerFilter = {}): Consumer[] {
  let candidates: Consumer[] | undefined
  if (filter.group !== undefined) {
    const g = s.groups.get(filter.group)
    const members = new Set(g?.members ?? [])
    candidates = [...s.consumers.values()].filter((c) => members.has(c.uuid))
  }
  if (filter.inTree !== undefined) {
    const top = s.providers.get(filter.inTree)
    const held = new Set<string>()
    for (const p of top ? s.subtree(top.uuid) : []) for (const c of p.allocations.keys()) held.add(c)
    candidates = (candidates ?? [...s.consumers.values()]).filter((c) => held.has(c.uuid))
  }
  candidates ??= [...s.consumers.values()]
  return filter.project === undefined ? candidates : candidates.filter((c) => c.project === filter.project)
}

/** Makes each consumer's listing (the memberships of every group found once, for all of them). */
export function consumerLister(s: State, opts: ListOptions = {groups: true}): (c: Consumer) => ConsumerListing {
  const memberships = opts.groups ? groupsByMember(s) : undefined
  return (c) => ({...consumerRecord(c), hosts: hostNames(s, c), groups: memberships ? (memberships.get(c.uuid) ?? []) : null})
}

/** The listings of the consumers that pass the filter. */
export function consumerListing(s: State, filter: ConsumerFilter = {}, opts: ListOptions = {groups: true}): ConsumerListing[] {
  return selectConsumers(s, filter).map(consumerLister(s, opts))
}

/** A host as a consumer's view shows it: where it is and whether it is in service. */
export interface ConsumerHost {
  uuid: string
  name: string
  rack: string | null
  row: string | null
  room: string | null
  disabled: boolean
}

/** What a consumer holds on one provider, with the provider's and its host's names. */
export interface ConsumerHolding {
  uuid: string
  name: string
  /** Its host's name; null for a sharing provider (shared resources are on no host). */
  host: string | null
  resources: Record<string, number>
}

/** One consumer in full, as GET /placemat/v1/consumers/{uuid} answers it (KnownConsumer, and more). */
export interface ConsumerView extends KnownConsumer {
  /** Each provider it holds resources of (in the order of its allocations). */
  providers: ConsumerHolding[]
  hosts: ConsumerHost[]
  /** The placement groups it is a member of; null where groups are unknown. */
  groups: string[] | null
}

/** Where a host is: the racks, rows and rooms of its aggregates, by name (null outside the topology). */
export function hostPlace(s: State, uuid: string): ConsumerHost {
  const p = s.providers.get(uuid)
  return {uuid, name: p?.name ?? uuid, ...hostDomains(s, p), disabled: p ? isDisabled(p) : false}
}

/** The consumer placemat knows (its record, or what it was when it gave its allocations away), in full; undefined when none. */
export function consumerView(s: State, uuid: string, opts: ListOptions = {groups: true}): ConsumerView | undefined {
  const known = knownConsumer(s, uuid)
  if (!known) return undefined
  const providers: ConsumerHolding[] = Object.entries(known.allocations).map(([rp, a]) => {
    const p = s.providers.get(rp)
    const host = p ? (hostOfProvider(s, p)?.name ?? null) : rp
    return {uuid: rp, name: p?.name ?? rp, host, resources: a.resources}
  })
  // A provider gone since (a consumer that gave its allocations away) stands for itself.
  const gone = Object.keys(known.allocations).filter((rp) => !s.providers.has(rp))
  const roots = [...hostsOfProviders(s, Object.keys(known.allocations)), ...gone]
  const hosts = roots.map((u) => hostPlace(s, u)).sort((a, b) => a.name.localeCompare(b.name))
  const groups = opts.groups
    ? [...s.groups.values()]
        .filter((g) => g.members.has(uuid))
        .map((g) => g.name)
        .sort((a, b) => a.localeCompare(b))
    : null
  return {...known, providers, hosts, groups}
}
