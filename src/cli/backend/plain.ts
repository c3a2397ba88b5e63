/**
 * Any OpenStack Placement, through its standard API only. It keeps no racks, rows or rooms
 * (aggregates whose names live in the operator's --layout file), no placement groups (the
 * --groups file's), no reasons and no consumers without allocations. The operator's verbs are
 * made by the domain core on a snapshot of what the endpoint shows (plain-*.ts, one concept a
 * file), and its plans turned into standard calls (each provider's own generation, re-read and
 * retried on 409).
 */
import type {PlacementClient, RequestOptions} from '../../client/client.js'
import type {BatchOperation} from '../../core/batch.js'
import type {CompiledReshape} from '../../core/reshape/compiled.js'
import {layoutNodes, type Layout} from '../../core/topology.js'
import {mapLimit} from '../../client/map-limit.js'
import type {NoCandidates} from '../../core/candidates/why.js'
import type {State} from '../../core/state/state.js'
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
import {plainCandidates, plainWhy, providersOneByOne} from './plain-candidates.js'
import {plainClaim, plainClaimant, plainClaims, plainMove} from './plain-claims.js'
import {plainConsumer, plainConsumers} from './plain-consumers.js'
import {plainApplyLayout, plainCurrentLayout, plainEditLayout, plainTopologyView} from './plain-layout.js'
import type {ConsumerFilter, ConsumerView} from '../../core/consumer-list.js'
import {plainHost, plainHostDescription, plainHosts, plainHostStatus} from './plain-hosts.js'
import type {HostListing, HostRecord} from '../../core/host-status.js'
import type {HostDescription} from '../../core/host-view.js'
import type {Groups} from '../groups/groups.js'
import {usageError} from '../failure.js'
import {loadStandard} from './standard-reads.js'

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

  /** Placement keeps no racks, rows, rooms, placement groups, moved consumers or aggregate names. */
  async ownRecords(): Promise<undefined> {
    return undefined
  }

  /** Placement has nowhere to keep a reason. */
  async disabledReasons(): Promise<Map<string, string>> {
    return new Map()
  }

  async catalogHeadroom(): Promise<CatalogHeadroom> {
    throw usageError('give --flavors FILE: plain Placement keeps no flavor catalog')
  }

  async catalogLosses(): Promise<CatalogLosses> {
    throw usageError('give --flavors FILE: plain Placement keeps no flavor catalog')
  }

  async catalogMix(): Promise<CatalogMix> {
    throw usageError('give --flavors FILE: plain Placement keeps no flavor catalog')
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

  currentLayout(files?: LocalFiles): Promise<Layout | undefined> {
    return plainCurrentLayout(this, files)
  }

  topologyView(
    files?: LocalFiles,
    opts?: {concurrency?: number; onProgress?: (done: number, total: number) => void},
  ): Promise<TopologyAnswer | undefined> {
    return plainTopologyView(this, files, opts)
  }

  applyLayout(layout: Layout, opts?: LayoutApplyOptions): Promise<LayoutApplyResult> {
    return plainApplyLayout(this, layout, opts)
  }

  editLayout(edit: (doc: Layout) => void, opts?: LayoutEditOptions): Promise<LayoutEditResult> {
    return plainEditLayout(this, edit, opts)
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
