/**
 * A placemat daemon, or a --db file through the daemon's own app in process: bulk reads
 * in one call, and every plan written in one transaction by placemat's own routes.
 */
import type {NamedAggregate} from '../../core/aggregate-names.js'
import type {BreachRecord} from '../../core/groups.js'
import {ApiError, type PlacementClient, type RequestOptions} from '../../client/client.js'
import type {CompiledReshape} from '../../core/reshape/compiled.js'
import {layoutNodes, type Layout, type TopologyPlan} from '../../core/topology.js'
import type {BatchOperation, BatchResult} from '../../core/batch.js'
import type {ConsumerRecord, ProviderRecord} from '../../core/wire.js'
import {
  PLACEMAT_API,
  loadState,
  type Backend,
  type CandidatesAnswer,
  type CandidatesAsk,
  type ClaimVia,
  type ClaimWrite,
  type ClaimWriteOptions,
  type CloudView,
  type ConsumerAllocations,
  type ConsumerList,
  type MoveAsk,
  type MoveOutcome,
  type OwnRecords,
  type CatalogHeadroom,
  type CatalogLosses,
  type CatalogMix,
  type StatusOutcome,
  type LocalFiles,
  type LayoutApplyOptions,
  type LayoutApplyResult,
  type LayoutEditOptions,
  type LayoutEditResult,
  type LoadOptions,
  type OperationPlan,
  type Progress,
  type TopologyAnswer,
  type TopologyNodeRecord,
} from './backend.js'
import {planSize} from '../topology/plan-text.js'
import {layoutBody} from '../topology/layout-file.js'
import {isConcurrentUpdate, retryOnConcurrentUpdate} from './retry.js'
import {mapLimit} from '../../client/map-limit.js'
import type {NoCandidates} from '../../core/candidates/why.js'
import type {State} from '../../core/state/state.js'
import type {ListedProvider} from '../../core/wire.js'
import type {KnownConsumer} from '../../core/consumer-moves.js'
import {groupOfRecord, type Groups} from '../groups/groups.js'
import type {ConsumerFilter, ConsumerView} from '../../core/consumer-list.js'
import {unknownConsumer} from './consumer-lookup.js'
import type {HostListing, HostRecord} from '../../core/host-status.js'
import type {HostDescription} from '../../core/host-view.js'
import type {Query} from '../candidates/query.js'
import {notFoundError} from '../failure.js'
import {canonicalUuid as canonical} from '../../core/uuids.js'
import {askCandidates, PLACEMENT_CANDIDATES} from './candidates.js'
import {PLACEMAT_CANDIDATES, placematApi, type PlacematApi} from './placemat-api.js'

/** Uuids per GET /placemat/v1/providers?uuid=: the URL stays well below a server's 16 KiB of request head. */
const UUIDS_PER_CALL = 200

export const TOPOLOGY_API = `${PLACEMAT_API}/topology`
export const LAYOUT_API = `${TOPOLOGY_API}/layout`

export class PlacematBackend implements Backend {
  readonly kind = 'placemat' as const
  readonly oneTransaction = true

  /** placemat's own routes. */
  protected readonly api: PlacematApi

  constructor(readonly client: PlacementClient) {
    this.api = placematApi(client)
  }

  async writeAllocations(body: Record<string, unknown>, opts?: RequestOptions): Promise<void> {
    await this.client.post(`${PLACEMAT_API}/allocations`, body, opts)
  }

  async wholeCloud(): Promise<{providers: ProviderRecord[]; consumers: ConsumerRecord[]}> {
    const [p, c] = await Promise.all([
      this.client.get<{providers: ProviderRecord[]}>(`${PLACEMAT_API}/providers`),
      this.client.get<{consumers: ConsumerRecord[]}>(`${PLACEMAT_API}/consumers`),
    ])
    return {providers: p.providers, consumers: c.consumers}
  }

  async loadCloud(opts: LoadOptions = {}): Promise<CloudView> {
    const [p, c] = await Promise.all([
      this.client.get<{providers: ProviderRecord[]}>(`${PLACEMAT_API}/providers`),
      opts.consumers ? this.client.get<{consumers: ConsumerRecord[]}>(`${PLACEMAT_API}/consumers`) : undefined,
    ])
    const view: CloudView = {providers: new Map(p.providers.map((r) => [r.uuid, r]))}
    if (c) {
      view.consumers = new Map(c.consumers.map((r) => [r.uuid, r]))
      view.everyConsumer = true
    }
    return view
  }

  /**
   * placemat's own route judges the groups and orders by closeness on its own topology (not on
   * a --layout file's, which is left to the command line); Placement's when asked nothing more.
   */
  candidates(ask: CandidatesAsk): Promise<CandidatesAnswer> {
    const ownOrder = ask.order !== undefined && !ask.files?.layout
    const extra: Query = {}
    if (ownOrder) extra[ask.order!.direction] = [ask.order!.consumer]
    else if (ask.group !== undefined) extra.group = [ask.group]
    if (ask.consumer !== undefined) extra.consumer = [ask.consumer]
    const path = Object.keys(extra).length ? PLACEMAT_CANDIDATES : PLACEMENT_CANDIDATES
    return askCandidates(this.client, ask, {path, extra, order: ownOrder ? undefined : ask.order})
  }

  /** GET /placemat/v1/allocation_candidates/why with the search's query, group and consumer. */
  async why(ask: CandidatesAsk): Promise<NoCandidates | null> {
    const query: Query = {...ask.query}
    if (ask.group !== undefined) query.group = [ask.group]
    if (ask.consumer !== undefined) query.consumer = [ask.consumer]
    const r = await this.api.why(query)
    return r.why === null ? null : {why: r.why, steps: r.steps}
  }

  /** By the hundred (GET /placemat/v1/providers?uuid=...), a few calls in flight. */
  async providers(uuids: string[]): Promise<ListedProvider[]> {
    const calls: string[][] = []
    for (let i = 0; i < uuids.length; i += UUIDS_PER_CALL) calls.push(uuids.slice(i, i + UUIDS_PER_CALL))
    return (await mapLimit(calls, 4, (part) => this.api.providers(part))).flat()
  }

  /** The cloud with the groups placemat keeps (its racks, rows and rooms come with the cloud). */
  async stateWithGroups(_files: LocalFiles, load: LoadOptions = {}): Promise<State> {
    const [s, groups] = await Promise.all([loadState(this, {...load, changeable: true}), this.api.groups.list()])
    for (const g of groups) s.groups.set(g.name, groupOfRecord(g))
    return s
  }

  hosts(): Promise<HostListing[]> {
    return this.api.hosts()
  }

  host(uuid: string): Promise<HostRecord> {
    return this.api.host(uuid)
  }

  hostDescription(uuid: string): Promise<HostDescription> {
    return this.api.hostDescription(uuid)
  }

  /** One write sets or removes the trait with the reason, kept with the host; changed when the host's generation moved. */
  async setHostStatus(uuid: string, disabled: boolean, reason?: string): Promise<StatusOutcome> {
    const before = await this.api.host(uuid)
    const body: {disabled: boolean; reason?: string} = {disabled}
    if (reason !== undefined) body.reason = reason
    const host = await this.api.setHostStatus(uuid, body)
    return {host, changed: host.generation !== before.generation, reasonDropped: false}
  }

  async consumers(filter: ConsumerFilter): Promise<ConsumerList> {
    return {consumers: await this.api.consumers(filter), groupsKept: true}
  }

  async consumer(uuid: string): Promise<ConsumerView> {
    const known = await this.knownConsumer(uuid)
    if (!known) throw unknownConsumer(uuid)
    return known as ConsumerView
  }

  async groups(): Promise<Groups> {
    return this.api.groups
  }

  async ownRecords(): Promise<OwnRecords> {
    const [layout, groups, moved, aggregateNames] = await Promise.all([
      this.api.layout(),
      this.api.groups.list(),
      this.api.movedConsumers(),
      this.api.aggregateNames(),
    ])
    return {layout, groups, moved, aggregateNames}
  }

  /** GET /placemat/v1/hosts/{uuid} for each, a few calls in flight. */
  async disabledReasons(hosts: string[]): Promise<Map<string, string>> {
    const reasons = await mapLimit(hosts, 8, async (uuid) => (await this.api.host(uuid)).disabled_reason)
    return new Map(hosts.flatMap((uuid, i) => (reasons[i] ? [[uuid, reasons[i]] as [string, string]] : [])))
  }

  catalogHeadroom(query: {flavor?: string[]; level?: string[]; without?: string[]; ratio?: string[]}): Promise<CatalogHeadroom> {
    return this.api.capacity(query)
  }

  catalogLosses(query: {flavor?: string[]; without_each: string}): Promise<CatalogLosses> {
    return this.api.losses(query)
  }

  catalogMix(query: {mix: string; level?: string[]}): Promise<CatalogMix> {
    return this.api.mix(query)
  }

  /** GET /placemat/v1/consumers/{uuid}, one call for what it holds and what placemat kept of it. */
  async claimant(uuid: string): Promise<ConsumerAllocations> {
    const known = await this.knownConsumer(uuid)
    if (!known) return {allocations: {}}
    const out: ConsumerAllocations = {
      allocations: known.allocations,
      project_id: known.project_id,
      user_id: known.user_id,
      consumer_generation: known.consumer_generation,
    }
    // As GET /allocations shows it: a type only from microversion 1.38 (a claim at an older one writes none).
    if (known.consumer_type && showsConsumerTypes(this.client.version)) out.consumer_type = known.consumer_type
    return out
  }

  async knownConsumer(uuid: string): Promise<KnownConsumer | undefined> {
    try {
      return await this.api.consumer(uuid)
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined
      throw err
    }
  }

  /** POST /placemat/v1/claims: the rules, the group it joins and every group it is a member of checked in the write. */
  async claim(w: ClaimWrite, opts: ClaimWriteOptions = {}): Promise<{consumer_generation: number; via: ClaimVia}> {
    const res = await this.api.claim(claimBody(w), {allowViolations: opts.allowViolations})
    return {consumer_generation: res.consumer_generation, via: 'POST /placemat/v1/claims'}
  }

  /** POST /placemat/v1/claims with all of them: one transaction. */
  async claims(writes: ClaimWrite[]): Promise<{via: ClaimVia}> {
    await this.api.claims(writes.map(claimBody))
    return {via: 'POST /placemat/v1/claims'}
  }

  /** POST /placemat/v1/moves: decided in the write, what the consumer was kept while it holds nothing. */
  async move(ask: MoveAsk, opts: ClaimWriteOptions = {}): Promise<MoveOutcome> {
    const body: {consumer_uuid: string; to: string; consumer_type?: string} = {
      consumer_uuid: canonical(ask.consumer),
      to: canonical(ask.to),
    }
    if (ask.consumerType) body.consumer_type = ask.consumerType
    try {
      const r = await this.api.move(body, {allowViolations: opts.allowViolations})
      return {
        consumer_uuid: r.consumer_uuid,
        migration_uuid: r.migration_uuid,
        allocations: r.allocations,
        overwrote: r.overwrote,
        consumer_type: r.consumer_type,
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw notFoundError(`consumer ${ask.consumer} has no allocations to move`)
      throw err
    }
  }

  /** From the stored layout (names and parents; no rollup of usage needed for that). */
  async topologyNodes(): Promise<TopologyNodeRecord[]> {
    return [...layoutNodes(await this.currentLayout()).values()]
  }

  async namedAggregates(): Promise<NamedAggregate[]> {
    return (await this.client.get<{aggregates: NamedAggregate[]}>(`${PLACEMAT_API}/aggregates`)).aggregates
  }

  currentLayout(): Promise<Layout & {generation: number}> {
    return this.client.get(LAYOUT_API)
  }

  topologyView(): Promise<TopologyAnswer> {
    return this.client.get(TOPOLOGY_API)
  }

  /** GET the layout, edit it, PUT it with the generation it was read at; another edit in between reads and edits again (a few times). */
  editLayout(edit: (doc: Layout) => void, opts: LayoutEditOptions = {}): Promise<LayoutEditResult> {
    return retryOnConcurrentUpdate(async () => {
      const {generation, ...doc} = await this.currentLayout()
      edit(doc)
      const res = await this.applyLayout(layoutBody(doc), {
        dryRun: opts.dryRun,
        generation,
        allowViolations: opts.allowViolations,
        prune: true,
        onProgress: opts.onProgress,
      })
      // A dry run that met another edit in between reads and edits again, as the write would.
      if (res.refusal && isConcurrentUpdate(res.refusal)) throw res.refusal
      return {...res, layout: doc}
    }, 6)
  }

  /**
   * Plans (a dry run of the route, which also says what the write would be refused with), then
   * applies with the generation it planned at (or `generation`).
   */
  async applyLayout(layout: Layout, opts: LayoutApplyOptions = {}): Promise<LayoutApplyResult> {
    const query: Record<string, string> = {}
    if (opts.allowViolations) query.allow_violations = 'true'
    if (!opts.prune) query.prune = 'false'
    const pinned = opts.generation === undefined ? layout : {...layout, generation: opts.generation}
    const dry = await this.client.put<{plan: TopologyPlan; error?: {status: number; code?: string; detail: string} | null}>(
      LAYOUT_API,
      pinned,
      {
        query: {...query, dry_run: 'true'},
      },
    )
    const planned = dry.plan
    opts.onPlan?.(planned)
    const n = planSize(planned)
    // Nothing to change is not written, so not refused either (a file applied twice plans nothing, whatever its generation).
    if (n === 0) return {transport: this.kind, plan: planned, applied: false, writes: 0}
    if (opts.dryRun) {
      const refusal = dry.error ? new ApiError(dry.error.status, dry.error.detail, dry.error.code, 'PUT', LAYOUT_API) : undefined
      return {transport: this.kind, plan: planned, applied: false, writes: 0, refusal}
    }
    const generation = opts.generation ?? planned.generation
    opts.onProgress?.(0, 1, `applying ${n} changes in one transaction`)
    const res = await this.client.put<{plan: TopologyPlan}>(LAYOUT_API, {...layout, generation}, {query})
    opts.onProgress?.(1, 1, `applied ${n} changes in one transaction`)
    return {transport: this.kind, plan: res.plan, applied: true, writes: 1}
  }

  /** The new children and the reshape in one POST /placemat/v1/batch: one transaction. */
  async reshape(
    compiled: CompiledReshape,
    microversion: string,
    _created: string[] = [],
    opts: {allowViolations?: boolean} = {},
  ): Promise<boolean> {
    const operations = [...compiled.creates.map((c) => ({op: 'create_provider', ...c})), {op: 'reshape', microversion, ...compiled.body}]
    // The batch checks the placement groups of the consumers it moves (allocations taken to other hosts).
    await this.client.post(`${PLACEMAT_API}/batch`, {operations}, opts.allowViolations ? {query: {allow_violations: 'true'}} : undefined)
    return true
  }

  async groupBreaches(placements: Record<string, string[]>): Promise<BreachRecord[]> {
    return (await this.client.post<{violations: BreachRecord[]}>(`${PLACEMAT_API}/groups/check`, {placements})).violations
  }

  /** The operations, then the layout, in one POST /placemat/v1/batch: one transaction. */
  async applyWithLayout(plan: OperationPlan, layout: Layout, opts: {prune: boolean; onProgress?: Progress}): Promise<TopologyPlan> {
    opts.onProgress?.(0, 1, `applying ${plan.operationCount} operations and the layout in one transaction`)
    const operations = [...plan.operations(), layoutOperation(layout, opts.prune)]
    const res = await this.client.post<{results: BatchResult[]}>(`${PLACEMAT_API}/batch`, {operations})
    opts.onProgress?.(1, 1, `applied ${plan.operationCount} operations and the layout in one transaction`)
    return res.results.at(-1)!.plan!
  }

  /** Every operation in one transaction (POST /placemat/v1/batch). */
  async applyOperations(plan: OperationPlan, opts: {onProgress?: Progress} = {}): Promise<number> {
    opts.onProgress?.(0, 1, `applying ${plan.operationCount} operations in one transaction`)
    await this.client.post(`${PLACEMAT_API}/batch`, {operations: [...plan.operations()]})
    opts.onProgress?.(1, 1, `applied ${plan.operationCount} operations in one transaction`)
    return 1
  }
}

/** A claim as POST /placemat/v1/claims takes it. */
function claimBody(w: ClaimWrite): Record<string, unknown> {
  const body: Record<string, unknown> = {
    consumer_uuid: w.consumer,
    project_id: w.project,
    user_id: w.user,
    consumer_generation: w.generation,
    allocations: w.allocations,
    affinity: w.rules,
  }
  if (w.type) body.consumer_type = w.type
  if (w.group !== undefined) body.group = w.group
  return body
}

/** Whether a microversion shows consumer types (1.38 and later). */
function showsConsumerTypes(version: string): boolean {
  const m = /^(\d+)\.(\d+)$/.exec(version)
  return !m || Number(m[1]) > 1 || Number(m[2]) >= 38
}

/** A datacenter file's layout (rooms, rows and racks alone: layoutBody) as the last operation of its batch. */
export const layoutOperation = (layout: Layout, prune: boolean): BatchOperation => ({op: 'apply_layout', layout, prune})
