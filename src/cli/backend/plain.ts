/**
 * Any OpenStack Placement, through its standard API only. It keeps no racks, rows or
 * rooms, so those are aggregates whose names live in the operator's layout file; the
 * domain core plans on a snapshot of what the endpoint shows, and this only turns the
 * plan into standard calls (each provider's own generation, re-read and retried on 409).
 */
import type {PlacementClient, RequestOptions} from '../../client/client.js'
import type {BatchOperation} from '../../core/batch.js'
import type {CompiledReshape} from '../../core/reshape/compiled.js'
import {stateFromSnapshot} from '../../core/snapshot.js'
import {
  currentLayout,
  layoutChanges,
  layoutNodes,
  legacyNodeUuid,
  observedNodes,
  type Layout,
  type WantedNode,
} from '../../core/topology.js'
import {topologyView} from '../../core/topology-view.js'
import {mapLimit} from '../../client/map-limit.js'
import {retryOnConcurrentUpdate} from '../services/retry.js'
import type {NoCandidates} from '../../core/candidates/why.js'
import type {State} from '../../core/state.js'
import type {ListedProvider} from '../../core/wire.js'
import {layoutBody, readLayoutFile} from '../topology/layout-file.js'
import {
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
  type StatusOutcome,
  type LocalFiles,
  type LayoutApplyOptions,
  type LayoutApplyResult,
  type LoadOptions,
  type OperationPlan,
  type Progress,
  type TopologyAnswer,
  type TopologyNodeRecord,
} from './backend.js'
import {plainCandidates, plainWhy, providersOneByOne} from './plain-candidates.js'
import {plainClaim, plainClaimant, plainClaims, plainMove} from './plain-claims.js'
import {plainConsumer, plainConsumers} from './plain-consumers.js'
import type {ConsumerFilter, ConsumerView} from '../../core/consumer-list.js'
import {plainHost, plainHostDescription, plainHosts, plainHostStatus} from './plain-hosts.js'
import type {HostListing, HostRecord} from '../../core/host-status.js'
import type {HostDescription} from '../../core/host-view.js'
import type {Groups} from '../groups/groups.js'
import {disabledProviders, listProviders, loadStandard, membersOf, sharingProviders} from './standard-reads.js'
import {DISABLED_TRAIT, SHARES_VIA_AGGREGATE} from '../../core/host.js'

export class PlainBackend implements Backend {
  readonly kind = 'placement' as const
  readonly oneTransaction = false

  constructor(readonly client: PlacementClient) {}

  async writeAllocations(body: Record<string, unknown>, opts?: RequestOptions): Promise<void> {
    await this.client.post('/allocations', body, opts)
  }

  loadCloud(opts: LoadOptions = {}): Promise<CloudView> {
    return loadStandard(this.client, opts)
  }

  candidates(ask: CandidatesAsk): Promise<CandidatesAnswer> {
    return plainCandidates(this, ask)
  }

  why(ask: CandidatesAsk): Promise<NoCandidates | null> {
    return plainWhy(this, ask)
  }

  providers(uuids: string[]): Promise<ListedProvider[]> {
    return providersOneByOne(this, uuids)
  }

  hosts(): Promise<HostListing[]> {
    return plainHosts(this)
  }

  host(uuid: string): Promise<HostRecord> {
    return plainHost(this, uuid)
  }

  hostDescription(uuid: string): Promise<HostDescription> {
    return plainHostDescription(this, uuid)
  }

  setHostStatus(uuid: string, disabled: boolean, reason?: string): Promise<StatusOutcome> {
    return plainHostStatus(this, uuid, disabled, reason)
  }

  consumers(filter: ConsumerFilter): Promise<ConsumerList> {
    return plainConsumers(this, filter)
  }

  consumer(uuid: string): Promise<ConsumerView> {
    return plainConsumer(this, uuid)
  }

  /** Those of the --groups file, judged on a snapshot of the cloud; none without one. */
  async groups(files: LocalFiles): Promise<Groups | undefined> {
    if (!files.groups) return undefined
    return (await import('../groups/file-groups.js')).fileGroups(this, files.groups, files.layout)
  }

  claimant(uuid: string): Promise<ConsumerAllocations> {
    return plainClaimant(this, uuid)
  }

  /** Placement keeps nothing of a consumer that holds nothing. */
  async knownConsumer(): Promise<undefined> {
    return undefined
  }

  claim(write: ClaimWrite, opts?: ClaimWriteOptions): Promise<{consumer_generation: number; via: ClaimVia}> {
    return plainClaim(this, write, opts)
  }

  claims(writes: ClaimWrite[]): Promise<{via: ClaimVia}> {
    return plainClaims(this, writes)
  }

  move(ask: MoveAsk): Promise<MoveOutcome> {
    return plainMove(this, ask)
  }

  /** A snapshot with the --groups file's groups, or without groups; the --layout file's racks, rows and rooms. */
  async stateWithGroups(files: LocalFiles, load: LoadOptions = {}): Promise<State> {
    if (files.groups) return (await import('../groups/file-groups.js')).groupsSnapshot(this, files.groups, files.layout, load)
    const topology = files.layout ? [...layoutNodes(layoutBody(readLayoutFile(files.layout))).values()] : []
    return loadState(this, {...load, changeable: true, topology})
  }

  async topologyNodes(): Promise<TopologyNodeRecord[]> {
    return []
  }

  /** The racks, rows and rooms of `file`, each rack's hosts as its aggregate has them now. */
  async currentLayout(file?: Layout): Promise<Layout | undefined> {
    if (!file) return undefined
    const nodes = layoutNodes(file)
    const racks = [...nodes.values()].filter((n) => n.level === 'rack').map((n) => n.uuid)
    const [providers, members] = await Promise.all([listProviders(this.client), membersOf(this.client, racks, 16)])
    const s = stateFromSnapshot({providers: withAggregates(providers, members), topology: [...nodes.values()]})
    const {generation: _generation, ...layout} = currentLayout(s)
    return layout
  }

  /** The view placemat computes, over the racks, rows and rooms of `file`. */
  async topologyView(
    file?: Layout,
    opts: {concurrency?: number; onProgress?: (done: number, total: number) => void} = {},
  ): Promise<TopologyAnswer | undefined> {
    if (!file) return undefined
    const [cloud, disabled, sharing] = await Promise.all([
      loadStandard(this.client, {parts: {inventories: true, usages: true, traits: false, aggregates: true}, ...opts}),
      // Which hosts are out of service and which providers share (no hosts), in one call each
      // rather than every provider's traits.
      disabledProviders(this.client),
      sharingProviders(this.client),
    ])
    const traitsOf = (uuid: string) => [
      ...(disabled.has(uuid) ? [DISABLED_TRAIT] : []),
      ...(sharing.has(uuid) ? [SHARES_VIA_AGGREGATE] : []),
    ]
    const providers = [...cloud.providers.values()].map((p) => ({...p, traits: traitsOf(p.uuid)}))
    const s = stateFromSnapshot({providers, topology: [...layoutNodes(file).values()]})
    return {generation: null, topology: topologyView(s)}
  }

  /**
   * Reads who is in each of the layout's aggregates (and the previous layout's), plans as
   * placemat would, and sets each changed host's aggregates, keeping its other aggregates.
   * Without `previous`, a rack/row/room left out of the layout cannot be known, so even with
   * prune its hosts keep that aggregate. There is no topology generation to pin and no group
   * to break here, so a dry run has no refusal to predict.
   */
  async applyLayout(layout: Layout, opts: LayoutApplyOptions = {}): Promise<LayoutApplyResult> {
    const concurrency = opts.concurrency ?? 16
    const named = layoutNodes(layout)
    const previous = opts.previous ? layoutNodes(opts.previous) : new Map<string, WantedNode>()
    const aggs = [...new Set([...previous.keys(), ...named.keys()])]
    // The same nodes under their uuids from before the one namespace: hosts still there move out.
    const legacy = [...new Set([...previous.values(), ...named.values()].map((n) => legacyNodeUuid(n.level, n.name)))]
    let reads = 0
    const toRead = aggs.length + legacy.length
    const progress = () => opts.onProgress?.(++reads, toRead, `reading ${toRead} aggregates`)
    const [providers, members, legacyMembers] = await Promise.all([
      listProviders(this.client),
      membersOf(this.client, aggs, concurrency, progress),
      membersOf(this.client, legacy, concurrency, progress),
    ])
    const records = withAggregates(providers, members)
    const aggregatesOf = new Map(records.map((r) => [r.uuid, r.aggregates]))
    const topology = observedNodes(
      previous,
      named,
      (a) => members.get(a) ?? [],
      (p) => aggregatesOf.get(p) ?? [],
    )
    const s = stateFromSnapshot({providers: records, topology})
    const prune = Boolean(opts.prune)
    const {plan, hostAggs, resolved} = layoutChanges(s, layout, {prune})
    // Hosts still in an old-namespace aggregate move out (into the new one where they are placed);
    // without prune, one placed nowhere keeps what it has.
    for (const list of legacyMembers.values()) {
      for (const u of list)
        if (!hostAggs.has(u) && s.providers.has(u) && (prune || resolved.hosts.has(u))) hostAggs.set(u, resolved.hosts.get(u) ?? [])
    }
    opts.onPlan?.(plan)
    if (opts.dryRun || hostAggs.size === 0) return {transport: this.kind, plan, applied: false, writes: 0}

    const topologyAggs = new Set([...aggs, ...legacy])
    let done = 0
    const total = hostAggs.size
    opts.onProgress?.(0, total, `0/${total} hosts`)
    await mapLimit([...hostAggs], concurrency, ([uuid, wanted]) =>
      retryOnConcurrentUpdate(async () => {
        // The snapshot knew only the topology aggregates: keep whatever else the host has now.
        const path = `/resource_providers/${uuid}/aggregates`
        const cur = await this.client.get<{aggregates: string[]; resource_provider_generation: number}>(path, {version: '1.19'})
        const next = [...cur.aggregates.filter((a) => !topologyAggs.has(a)), ...wanted.filter((a) => topologyAggs.has(a))]
        const same = next.length === cur.aggregates.length && next.every((a) => cur.aggregates.includes(a))
        if (!same)
          await this.client.put(path, {aggregates: next, resource_provider_generation: cur.resource_provider_generation}, {version: '1.19'})
        opts.onProgress?.(++done, total, `${done}/${total} hosts`)
      }, 10),
    )
    return {transport: this.kind, plan, applied: true, writes: total}
  }

  /** Placement has no call that creates a provider inside a reshape: the children first, then POST /reshaper. */
  async reshape(compiled: CompiledReshape, microversion: string, created: string[]): Promise<boolean> {
    for (const c of compiled.creates) {
      await this.client.post('/resource_providers', c, {version: '1.20'})
      created.push(c.uuid)
    }
    await this.client.post('/reshaper', compiled.body, {version: microversion})
    return false
  }

  /**
   * The operations as standard calls, in stages (classes and traits, renames, creates level
   * by level, re-parenting, per-provider writes, deletes level by level), with `concurrency`
   * calls in flight within a stage. Stops at the first failure; the calls made so far stay
   * made (apply again to finish).
   */
  async applyOperations(plan: OperationPlan, opts: {concurrency?: number; onProgress?: Progress} = {}): Promise<number> {
    const concurrency = opts.concurrency ?? 16
    const total = plan.operationCount
    let done = 0
    opts.onProgress?.(0, total, `0/${total} calls`)
    const generations = new Map<string, number>()
    const run = async (o: BatchOperation) => {
      await this.callFor(o, generations)
      opts.onProgress?.(++done, total, `${done}/${total} calls`)
    }
    const parallel = (ops: BatchOperation[]) => mapLimit(ops, concurrency, run)
    const serial = async (ops: BatchOperation[]) => {
      for (const o of ops) await run(o)
    }
    const st = plan.stages()
    await parallel(st.names)
    await serial(st.renames)
    for (const level of st.creates) await parallel(level)
    await serial(st.reparents)
    // Each provider's writes in order (they chain its generation), providers in parallel.
    await mapLimit(st.writes, concurrency, serial)
    for (const level of st.deletes) await parallel(level)
    return total
  }

  /** One operation as the standard call that does it; `generations` chains each provider's writes. */
  private async callFor(o: BatchOperation, generations: Map<string, number>): Promise<void> {
    const client = this.client
    const rp = (uuid: string) => `/resource_providers/${uuid}`
    switch (o.op) {
      case 'ensure_resource_class':
        await client.put(`/resource_classes/${o.name}`)
        return
      case 'ensure_trait':
        await client.put(`/traits/${o.name}`)
        return
      case 'create_provider': {
        const body = await client.post<{generation?: number}>('/resource_providers', {
          uuid: o.uuid,
          name: o.name,
          ...(o.parent_provider_uuid ? {parent_provider_uuid: o.parent_provider_uuid} : {}),
        })
        generations.set(o.uuid, body?.generation ?? 0)
        return
      }
      case 'update_provider':
        await client.put(rp(o.uuid), {name: o.name, parent_provider_uuid: o.parent_provider_uuid})
        return
      case 'delete_provider':
        await client.delete(rp(o.uuid))
        return
      case 'set_inventories':
      case 'set_traits':
      case 'set_aggregates': {
        const generation = o.generation ?? generations.get(o.uuid)
        if (generation === undefined) throw new Error(`no generation known for provider ${o.uuid}`)
        const [path, body] =
          o.op === 'set_inventories'
            ? [`${rp(o.uuid)}/inventories`, {inventories: o.inventories, resource_provider_generation: generation}]
            : o.op === 'set_traits'
              ? [`${rp(o.uuid)}/traits`, {traits: o.traits, resource_provider_generation: generation}]
              : [`${rp(o.uuid)}/aggregates`, {aggregates: o.aggregates, resource_provider_generation: generation}]
        const res = await client.put<{resource_provider_generation?: number}>(path, body)
        generations.set(o.uuid, res?.resource_provider_generation ?? generation + 1)
        return
      }
      case 'reshape':
        throw new Error('a reshape is not an apply operation')
    }
  }
}

/** Listed providers with the aggregates (among those read) each is a member of. */
function withAggregates(providers: Awaited<ReturnType<typeof listProviders>>, members: Map<string, string[]>) {
  const aggs = new Map<string, string[]>()
  for (const [agg, list] of members) for (const u of list) aggs.set(u, [...(aggs.get(u) ?? []), agg])
  return providers.map((p) => ({...p, aggregates: aggs.get(p.uuid) ?? []}))
}
