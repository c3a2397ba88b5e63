/**
 * What a command talks to, chosen once per command: a placemat daemon or a --db file
 * (`PlacematBackend`: its own API under /placemat/v1 does bulk reads and writes in one
 * transaction) or any other OpenStack Placement (`PlainBackend`: the standard API only,
 * the same decisions made here on a snapshot of the cloud). Both speak the operator's verbs
 * (hosts, consumers, groups, candidates, claims, moves, the layout, apply) and carry out plans
 * the domain core made; neither decides anything itself. This file declares them and imports
 * no implementation: choose.ts picks one.
 */
import type {BreachRecord, GroupRecord} from '../../core/groups.js'
import type {ApiError, PlacementClient, RequestOptions} from '../../client/client.js'
import type {NoCandidates} from '../../core/candidates/why.js'
import type {ConsumerFilter, ConsumerListing, ConsumerView} from '../../core/consumer-list.js'
import type {HostListing, HostRecord} from '../../core/host-status.js'
import type {HostDescription} from '../../core/host-view.js'
import type {Headroom} from '../../core/headroom/headroom.js'
import type {LossesAnswer} from '../../core/headroom/losses.js'
import type {WhatIfAnswer} from '../../core/headroom/what-if-headroom.js'
import type {MixAnswer} from '../../core/headroom/flavor-mix.js'
import type {KnownConsumer, MovedRecord} from '../../core/consumer-moves.js'
import type {Groups} from '../groups/groups.js'
import type {NamedAggregate} from '../../core/aggregate-names.js'
import type {ApplyPlan} from '../../core/apply-plan/types.js'
import type {CompiledReshape} from '../../core/reshape/compiled.js'
import type {State, TopologyNode} from '../../core/state/state.js'
import type {Layout, TopologyPlan} from '../../core/topology.js'
import type {TopologyView} from '../../core/topology-view.js'
import type {ConsumerRecord, ListedProvider, ProviderRecord} from '../../core/wire.js'
import type {AffinityRule, Placement} from '../../core/affinity.js'
import type {Query} from '../candidates/query.js'
import type {CandidatesBody} from '../candidates/search.js'

export const PLACEMAT_API = '/placemat/v1'

export type BackendKind = 'placemat' | 'placement'

/** The cloud as records (providers in the order the endpoint lists them). */
export interface CloudView {
  providers: Map<string, ProviderRecord>
  /** Only when asked for. */
  consumers?: Map<string, ConsumerRecord>
  /** `consumers` holds every consumer record, those holding nothing too (placemat); else only those holding allocations. */
  everyConsumer?: boolean
}

export interface LoadOptions {
  /** Only the tree holding this provider (uuid). */
  inTree?: string
  /** On the standard API: which per-provider details to read (default all). */
  parts?: {inventories?: boolean; usages?: boolean; traits?: boolean; aggregates?: boolean}
  consumers?: boolean
  /** On the standard API: also read each consumer's project and user (one GET each). */
  consumerOwners?: boolean
  concurrency?: number
  /** Progress on the standard API: calls done so far and the calls known to be needed. */
  onProgress?: (done: number, total: number) => void
}

export type Progress = (done: number, total: number, label: string) => void

export interface LayoutApplyOptions {
  dryRun?: boolean
  /** Apply only if the topology is still at this generation (placemat). */
  generation?: number
  /** Apply even if it breaks placement groups (placemat refuses that otherwise). */
  allowViolations?: boolean
  /**
   * The topology becomes exactly the layout: racks, rows and rooms it does not name are deleted,
   * hosts it does not name leave. Otherwise what it does not name stays where it is.
   */
  prune?: boolean
  /** Plain Placement: the layout applied before, so its racks/rows/rooms that are gone can be emptied (with prune). */
  previous?: Layout
  concurrency?: number
  /** Called with the plan before anything is applied (e.g. to print it). */
  onPlan?: (plan: TopologyPlan) => void
  onProgress?: Progress
}

export interface LayoutApplyResult {
  transport: BackendKind
  plan: TopologyPlan
  applied: boolean
  /** Changes made (placemat: one transaction; placement: aggregate writes). */
  writes: number
  /** A dry run: what the write would be refused with (the error it would end with), if it would be. */
  refusal?: ApiError
}

/** A read-modify-write of the layout: its options. */
export interface LayoutEditOptions {
  dryRun?: boolean
  /** Plain Placement: the --layout file, which is the record of the topology (read, edited, written back). */
  files?: LocalFiles
  concurrency?: number
  allowViolations?: boolean
  onProgress?: Progress
}

export interface LayoutEditResult extends LayoutApplyResult {
  /** The layout as edited. */
  layout: Layout
}

export type TopologyNodeRecord = Omit<TopologyNode, 'createdAt' | 'updatedAt'>

export interface TopologyAnswer {
  generation: number | null
  topology: TopologyView[]
}

/** `placemat apply`'s operations, with the stages a plain endpoint runs them in. */
export type OperationPlan = Pick<ApplyPlan, 'operationCount' | 'operations' | 'stages'>

/**
 * A command's client, and its backend asked for only when a decision needs to know it:
 * choosing costs a request, which a plain query need not pay.
 */
export interface Endpoint {
  readonly client: PlacementClient
  backend(): Promise<Backend>
}

/**
 * The files an operator keeps what plain Placement has no place for in: --layout FILE (the
 * racks, rows and rooms by name) and --groups FILE (the placement groups). placemat keeps both
 * itself.
 */
export interface LocalFiles {
  layout?: string
  groups?: string
}

/** Where a candidate is and where a consumer is, in racks, rows and rooms. */
export interface PlaceLookup {
  /** Where each candidate of `body` is. */
  of(body: CandidatesBody): (candidate: CandidatesBody['allocation_requests'][number]) => Placement
  anchor(): Promise<Placement>
}

/** Candidates nearest to (near) or farthest from (far) where a consumer is, first. */
export interface CandidateOrder {
  direction: 'near' | 'far'
  consumer: string
  /** Where things are, for ordering on the command line (the topology a --layout file names). */
  place: PlaceLookup
}

/** What a search asks a backend for: Placement's query, and what placemat adds to it. */
export interface CandidatesAsk {
  /** Placement's own query (topology rules already member_of filters, `limit` the cut). */
  query: Query
  /** A placement group the candidates are for a new member of: its rule keeps or orders them. */
  group?: string
  /** The consumer they are for: the rules of the groups it is a member of keep or order them too. */
  consumer?: string
  order?: CandidateOrder
  files?: LocalFiles
}

export interface CandidatesAnswer {
  body: CandidatesBody
  /** The query as sent, and where to. */
  query: Query
  path: string
}

/** A consumer's allocations, project, user and type with its consumer generation, as GET /allocations/{consumer} shows them. */
export interface ConsumerAllocations {
  allocations: Record<string, {resources: Record<string, number>; generation?: number}>
  project_id?: string
  user_id?: string
  consumer_generation?: number | null
  consumer_type?: string
}

/** One claim as written: a candidate's allocations for a consumer, with what it must keep. */
export interface ClaimWrite {
  consumer: string
  project: string
  user: string
  /** Its consumer type; none: written without one. */
  type?: string
  /** Its consumer generation as read (null: a new consumer). */
  generation: number | null
  allocations: Record<string, {resources: Record<string, number>}>
  /** Topology rules placemat checks again in the write (plain Placement only when the candidates were read). */
  rules: AffinityRule[]
  /** A placement group the consumer joins. */
  group?: string
}

export type ClaimVia = 'PUT /allocations' | 'POST /allocations' | 'POST /placemat/v1/claims'

export interface ClaimWriteOptions {
  /** Write even if it breaks a placement group's rule. */
  allowViolations?: boolean
  files?: LocalFiles
}

/** Nova's move_allocations: the consumer's allocations to the migration consumer `to` (uuids as the operator gave them). */
export interface MoveAsk {
  consumer: string
  to: string
  /** The type the receiver is written with (else decided as placemat decides it). */
  consumerType?: string
}

export interface MoveOutcome {
  consumer_uuid: string
  migration_uuid: string
  allocations: Record<string, {resources: Record<string, number>}>
  /** The migration consumer held something before (it was overwritten, as Nova does). */
  overwrote: boolean
  /** The type the migration consumer was written with; null: none. */
  consumer_type: string | null
}

/** Consumers as listed, and whether their placement groups are known (placemat keeps them; plain Placement none). */
export interface ConsumerList {
  consumers: ConsumerListing[]
  groupsKept: boolean
}

/** A host taken out of service or brought back. */
export interface StatusOutcome {
  host: HostRecord
  /** Whether this call changed anything. */
  changed: boolean
  /** Plain Placement: the reason given could not be kept. */
  reasonDropped: boolean
}

/** What a backend keeps beyond Placement's own records (placemat: all of it; plain Placement: none). */
export interface OwnRecords {
  /** The racks, rows and rooms, with the topology's generation. */
  layout: Layout & {generation: number}
  groups: GroupRecord[]
  /** Consumers that gave their allocations away (claim move) and hold nothing since. */
  moved: MovedRecord[]
  /** The names apply files gave aggregates. */
  aggregateNames: Array<{name: string; uuid: string}>
}

/** GET /placemat/v1/capacity: the core's headroom of the daemon's catalog, with its flavors' warnings. */
export type CatalogHeadroom = Headroom & {warnings: Array<{flavor: string; warning: string}>; what_if?: WhatIfAnswer}

/** GET /placemat/v1/capacity?mix=NAME=WEIGHT,...: each domain's fit of a flavor mix, with the catalog's warnings. */
export type CatalogMix = MixAnswer & {warnings: Array<{flavor: string; warning: string}>}

/** GET /placemat/v1/capacity?without_each=LEVEL: every domain of the level lost in turn, with the catalog's warnings. */
export type CatalogLosses = LossesAnswer & {warnings: Array<{flavor: string; warning: string}>}

export interface Backend {
  readonly kind: BackendKind
  readonly client: PlacementClient
  /** Every host (core/host.ts decides which providers are hosts), by name, with its status and usage. */
  hosts(): Promise<HostListing[]>
  /** The host with its status and reason (exit 3 when there is no such provider). */
  host(uuid: string): Promise<HostRecord>
  /** The host in full: its tree, its consumers, where it is. */
  hostDescription(uuid: string): Promise<HostDescription>
  /**
   * Takes a host out of service (with the reason placemat keeps) or brings it back: the
   * COMPUTE_STATUS_DISABLED trait, which keeps nova's scheduler off it.
   */
  setHostStatus(uuid: string, disabled: boolean, reason?: string): Promise<StatusOutcome>
  /** The consumers that pass `filter` (its provider a uuid), in the order they were written. */
  consumers(filter: ConsumerFilter): Promise<ConsumerList>
  /** One consumer in full; exit 3 when the backend knows nothing of it. */
  consumer(uuid: string): Promise<ConsumerView>
  /** The placement groups: placemat's, each rule checked in its writes; plain Placement's those of the --groups file (none without it). */
  groups(files: LocalFiles): Promise<Groups | undefined>
  /** What it keeps beyond Placement's records; none on plain Placement, which keeps none of it. */
  ownRecords(): Promise<OwnRecords | undefined>
  /** Why each of these hosts is out of service, where it keeps a reason (plain Placement keeps none). */
  disabledReasons(hosts: string[]): Promise<Map<string, string>>
  /** The headroom of the flavor catalog a daemon holds (`daemon start --flavors`); exit 2 where there can be none. */
  catalogHeadroom(query: {flavor?: string[]; level?: string[]; without?: string[]; ratio?: string[]}): Promise<CatalogHeadroom>
  /** Every domain of a level lost in turn, on the daemon's own catalog (plain Placement keeps none). */
  catalogLosses(query: {flavor?: string[]; without_each: string}): Promise<CatalogLosses>
  /** A flavor mix's fit per domain, on the daemon's own catalog (plain Placement keeps none). */
  catalogMix(query: {mix: string; level?: string[]}): Promise<CatalogMix>
  /**
   * Allocation candidates, judged by the placement groups asked for (a hard rule keeps, a soft
   * one orders) and ordered by closeness, then cut to the query's limit. placemat does it in its own
   * route; plain Placement here, on its answer (the --groups file's groups, the --layout file's
   * racks), as it does wherever the topology is a file's.
   */
  candidates(ask: CandidatesAsk): Promise<CandidatesAnswer>
  /** Why the search `ask` finds no candidate (null: it finds some). */
  why(ask: CandidatesAsk): Promise<NoCandidates | null>
  /** These providers, as listed (one gone meanwhile left out). */
  providers(uuids: string[]): Promise<ListedProvider[]>
  /**
   * The cloud as a State with its racks, rows and rooms and its placement groups (plain
   * Placement: those of the --layout and --groups files), to judge the groups' rules and plan
   * on: a copy, the caller's to change.
   */
  stateWithGroups(files: LocalFiles, load?: LoadOptions): Promise<State>
  /**
   * A consumer as a claim finds it: what it holds, with its consumer generation, project, user
   * and type; one that holds nothing as placemat keeps it (a record without allocations, or
   * what it was when it gave its allocations away), of which plain Placement keeps nothing.
   */
  claimant(uuid: string): Promise<ConsumerAllocations>
  /** What placemat knows of a consumer that GET /allocations does not show; undefined when nothing (plain Placement: never anything). */
  knownConsumer(uuid: string): Promise<KnownConsumer | undefined>
  /**
   * One claim in one write (placemat: its rules and groups checked in the write; plain
   * Placement: PUT /allocations, and the --groups file takes the new member); the consumer
   * generation after it.
   */
  claim(write: ClaimWrite, opts?: ClaimWriteOptions): Promise<{consumer_generation: number; via: ClaimVia}>
  /** Several claims in one write: all or nothing. */
  claims(writes: ClaimWrite[], opts?: ClaimWriteOptions): Promise<{via: ClaimVia}>
  /** Nova's move_allocations in one write (placemat: the consumers' groups checked in it); exit 3 when the consumer holds nothing. */
  move(ask: MoveAsk, opts?: ClaimWriteOptions): Promise<MoveOutcome>
  /**
   * POST of allocations for several consumers at once (placemat: /placemat/v1/allocations, which
   * checks their placement groups' rules in the write; plain: /allocations).
   */
  writeAllocations(body: Record<string, unknown>, opts?: RequestOptions): Promise<void>
  /** applyOperations runs in one transaction: a refused operation leaves everything as it was. */
  readonly oneTransaction: boolean
  /** The cloud's providers (and consumers when asked). */
  loadCloud(opts?: LoadOptions): Promise<CloudView>
  /** The racks, rows and rooms placemat keeps (none on plain Placement, which keeps no names). */
  topologyNodes(): Promise<TopologyNodeRecord[]>
  /** Every named aggregate: racks, rows and rooms, and those apply files named (placemat only: Placement keeps no names). */
  namedAggregates?(): Promise<NamedAggregate[]>
  /** The layout now (placemat: stored, with its generation; plain: the --layout file's names, hosts as observed; none without it). */
  currentLayout(files?: LocalFiles): Promise<(Layout & {generation?: number}) | undefined>
  /** The rolled-up topology (plain: of the racks, rows and rooms the --layout file names; none without it). */
  topologyView(
    files?: LocalFiles,
    opts?: {concurrency?: number; onProgress?: (done: number, total: number) => void},
  ): Promise<TopologyAnswer | undefined>
  /** Makes the topology exactly `layout`. */
  applyLayout(layout: Layout, opts?: LayoutApplyOptions): Promise<LayoutApplyResult>
  /**
   * Edits the layout as it is now and applies it whole (what the edit took out is deleted):
   * placemat guards it with the generation it was read at, reading and editing again when
   * another edit came in between; plain Placement edits the --layout file and writes it back.
   */
  editLayout(edit: (doc: Layout) => void, opts?: LayoutEditOptions): Promise<LayoutEditResult>
  /**
   * Writes a checked reshape with its new child providers: true when it was one transaction.
   * Plain Placement creates the children first (their uuids pushed onto `created`, for the
   * caller to take back if the reshape fails), then POST /reshaper.
   */
  reshape(compiled: CompiledReshape, microversion: string, created: string[], opts?: {allowViolations?: boolean}): Promise<boolean>
  /**
   * The State the backend holds itself (a --db file's store), read where it is instead of
   * copied: for reading only, never to be changed. Absent where a State has to be made from
   * what the API answers.
   */
  heldState?(): Promise<State>
  /**
   * Every provider and every consumer in two reads (placemat's own lists), where the backend has
   * them: an export of 10,000 providers is then two calls, not four a provider and one a consumer.
   */
  wholeCloud?(): Promise<{providers: ProviderRecord[]; consumers: ConsumerRecord[]}>
  /**
   * Runs the operations on the held State as the write would, refusing what it would refuse,
   * and writes nothing (a dry run without a copy of the cloud).
   */
  rehearse?(plan: OperationPlan): Promise<void>
  /** The placement group breaches consumers placed on these providers would add (placemat only: it keeps groups). */
  groupBreaches?(placements: Record<string, string[]>): Promise<BreachRecord[]>
  /**
   * Carries out `placemat apply`'s operations and then `layout` (a datacenter file's racks, rows
   * and rooms) in one transaction: both or neither. placemat only (plain Placement has no
   * transactions: its apply writes the layout after the providers). Answers the layout's plan.
   */
  applyWithLayout?(plan: OperationPlan, layout: Layout, opts: {prune: boolean; onProgress?: Progress}): Promise<TopologyPlan>
  /** Carries out `placemat apply`'s operations; returns the number of writes. */
  applyOperations(plan: OperationPlan, opts?: {concurrency?: number; onProgress?: Progress}): Promise<number>
}

/**
 * The cloud as a State, with the names of classes and traits and placemat's racks, rows
 * and rooms: what the core plans `placemat apply` on.
 */
export async function loadState(
  backend: Backend,
  opts: LoadOptions & {changeable?: boolean; topology?: TopologyNodeRecord[]} = {},
): Promise<State> {
  // A --db file's own State, unless the caller will change it (a dry run's check).
  if (!opts.changeable && backend.heldState) return backend.heldState()
  const [cloud, rc, tr, topology, named, {stateFromSnapshot}] = await Promise.all([
    backend.loadCloud(opts),
    backend.client.get<{resource_classes: {name: string}[]}>('/resource_classes'),
    backend.client.get<{traits: string[]}>('/traits'),
    opts.topology ?? backend.topologyNodes(),
    backend.namedAggregates?.() ?? [],
    import('../../core/snapshot.js'),
  ])
  return stateFromSnapshot({
    classes: rc.resource_classes.map((c) => c.name),
    traits: tr.traits,
    providers: [...cloud.providers.values()],
    consumers: cloud.consumers ? [...cloud.consumers.values()] : undefined,
    topology,
    aggregateNames: named.filter((a) => a.level === null),
  })
}
