/**
 * What only placemat serves (a daemon, or a --db file in process), under /placemat/v1: hosts
 * with their status, consumers as listings, placement groups, why a search found nothing,
 * providers looked up by the hundred, claims and moves, its layout, moved consumers and
 * aggregate names. The placemat backend speaks the operator's verbs through it; nothing else
 * spells these paths.
 */
import type {PlacementClient} from '../../client/client.js'
import type {ConsumerFilter, ConsumerListing, ConsumerView} from '../../core/consumer-list.js'
import type {GroupRecord} from '../../core/groups.js'
import type {HostListing, HostRecord} from '../../core/host-status.js'
import type {HostDescription} from '../../core/host-view.js'
import type {MovedRecord, MoveResult} from '../../core/consumer-moves.js'
import type {Layout} from '../../core/topology.js'
import type {ListedProvider} from '../../core/wire.js'
import type {Groups} from '../groups/groups.js'
import type {NoCandidates} from '../../core/candidates/why.js'
import {PLACEMAT_API, type CatalogHeadroom, type CatalogLosses, type CatalogMix} from './backend.js'

/** GET /placemat/v1/allocation_candidates/why: null when the search finds candidates. */
export interface WhyAnswer {
  why: string | null
  steps: NoCandidates['steps']
}

/** placemat's own routes, one method each. */
export interface PlacematApi {
  /** The host with its status and reason (404 when there is no such provider). */
  host(uuid: string): Promise<HostRecord>
  /** Every host, by name. */
  hosts(): Promise<HostListing[]>
  /** Takes a host out of service or brings it back; the host as it is after. */
  setHostStatus(uuid: string, body: {disabled: boolean; reason?: string}): Promise<HostRecord>
  hostDescription(uuid: string): Promise<HostDescription>
  /** The consumers that pass `filter` (its provider a uuid). */
  consumers(filter: ConsumerFilter): Promise<ConsumerListing[]>
  /** One consumer in full (404 when placemat knows nothing of it). */
  consumer(uuid: string): Promise<ConsumerView>
  /** The placement groups, kept and checked by placemat. */
  readonly groups: Groups
  /** Why the search `query` finds no candidate. */
  why(query: Record<string, string | string[]>): Promise<WhyAnswer>
  /** The headroom of the daemon's own flavor catalog (404 when it has none). */
  capacity(query: {flavor?: string[]; level?: string[]; without?: string[]; ratio?: string[]}): Promise<CatalogHeadroom>
  losses(query: {flavor?: string[]; without_each: string}): Promise<CatalogLosses>
  mix(query: {mix: string; level?: string[]}): Promise<CatalogMix>
  /** Providers by uuid, in one call (a few hundred at most: they go in the URL). */
  providers(uuids: string[]): Promise<ListedProvider[]>
  /** One claim, its rules and groups checked in the write; the consumer's generation after it. */
  claim(body: Record<string, unknown>, opts?: {allowViolations?: boolean}): Promise<{consumer_generation: number}>
  /** Several claims in one transaction: all or nothing. */
  claims(claims: Record<string, unknown>[]): Promise<void>
  /** Nova's move_allocations, decided in the write with the consumers' groups checked. */
  move(body: {consumer_uuid: string; to: string; consumer_type?: string}, opts?: {allowViolations?: boolean}): Promise<MoveResult>
  /** The stored layout with its generation. */
  layout(): Promise<Layout & {generation: number}>
  /** Consumers that gave their allocations away (claim move) and hold nothing since. */
  movedConsumers(): Promise<MovedRecord[]>
  /** The names apply files gave aggregates. */
  aggregateNames(): Promise<Array<{name: string; uuid: string}>>
}

const HOSTS = `${PLACEMAT_API}/hosts`
const CONSUMERS = `${PLACEMAT_API}/consumers`
const GROUPS = `${PLACEMAT_API}/groups`
const CLAIMS = `${PLACEMAT_API}/claims`
/** placemat's candidates route, which takes its own parameters beside Placement's. */
export const PLACEMAT_CANDIDATES = `${PLACEMAT_API}/allocation_candidates`

const hostPath = (uuid: string) => `${HOSTS}/${uuid}`
const groupPath = (name: string) => `${GROUPS}/${encodeURIComponent(name)}`
const allow = (opts?: {allowViolations?: boolean}) => (opts?.allowViolations ? {query: {allow_violations: 'true'}} : undefined)

/** placemat's groups: kept in the database, every rule checked there. */
function placematGroups(client: PlacementClient): Groups {
  return {
    list: async () => (await client.get<{groups: GroupRecord[]}>(GROUPS)).groups,
    show: (name) => client.get<GroupRecord>(groupPath(name)),
    create: (spec, opts) => client.post<GroupRecord>(GROUPS, spec, allow(opts)),
    delete: async (name) => {
      await client.delete(groupPath(name))
    },
    members: (name, change, opts) => client.post<GroupRecord>(`${groupPath(name)}/members`, change, allow(opts)),
  }
}

export function placematApi(client: PlacementClient): PlacematApi {
  return {
    host: (uuid) => client.get<HostRecord>(hostPath(uuid)),
    hosts: async () => (await client.get<{hosts: HostListing[]}>(HOSTS)).hosts,
    setHostStatus: (uuid, body) => client.put<HostRecord>(`${hostPath(uuid)}/status`, body),
    hostDescription: (uuid) => client.get<HostDescription>(`${hostPath(uuid)}/description`),
    async consumers(filter: ConsumerFilter): Promise<ConsumerListing[]> {
      const query: Record<string, string> = {}
      if (filter.inTree) query.in_tree = filter.inTree
      if (filter.project !== undefined) query.project_id = filter.project
      if (filter.group !== undefined) query.group = filter.group
      return (await client.get<{consumers: ConsumerListing[]}>(CONSUMERS, {query})).consumers
    },
    consumer: (uuid) => client.get<ConsumerView>(`${CONSUMERS}/${uuid}`),
    groups: placematGroups(client),
    why: (query) => client.get<WhyAnswer>(`${PLACEMAT_API}/allocation_candidates/why`, {query}),
    capacity: (query) => client.get<CatalogHeadroom>(`${PLACEMAT_API}/capacity`, {query}),
    losses: (query) => client.get<CatalogLosses>(`${PLACEMAT_API}/capacity`, {query}),
    mix: (query) => client.get<CatalogMix>(`${PLACEMAT_API}/capacity`, {query}),
    providers: async (uuids) =>
      (await client.get<{providers: ListedProvider[]}>(`${PLACEMAT_API}/providers`, {query: {uuid: uuids.join(',')}})).providers,
    claim: (body, opts) => client.post<{consumer_generation: number}>(CLAIMS, body, {query: allow(opts)?.query}),
    claims: async (claims) => {
      await client.post(CLAIMS, {claims})
    },
    move: (body, opts) => client.post<MoveResult>(`${PLACEMAT_API}/moves`, body, allow(opts)),
    layout: () => client.get<Layout & {generation: number}>(`${PLACEMAT_API}/topology/layout`),
    movedConsumers: async () => (await client.get<{moved_consumers: MovedRecord[]}>(`${PLACEMAT_API}/moves`)).moved_consumers,
    aggregateNames: async () => (await client.get<{names: Array<{name: string; uuid: string}>}>(`${PLACEMAT_API}/aggregates`)).names,
  }
}
