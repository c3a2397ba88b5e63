/**
 * A --db file: the placemat backend with its bulk reads and its batch served from the store
 * in process, as the batch and listing routes serve them but without their JSON. A cloud of a
 * million providers is a batch of millions of operations: as one body it would be a string
 * longer than V8 allows, and parsing it back would hold every operation twice.
 */
import {ApiError, shortDetail, type PlacementClient} from '../../client/client.js'
import type {LocalTransport} from './local-transport.js'
import {runBatch, type BatchOperation} from '../../core/batch.js'
import type {Layout, TopologyPlan} from '../../core/topology.js'
import {PlacementError} from '../../core/errors.js'
import type {State} from '../../core/state/state.js'
import {consumerRecord, providerRecord} from '../../core/wire.js'
import {detailText} from '../../http/errors.js'
import {sharedPayloadValidator} from '../../http/batch-validation.js'
import {asRefusal} from '../apply/check.js'
import {PLACEMAT_API, type CloudView, type LoadOptions, type OperationPlan, type Progress} from './backend.js'
import {PlacematBackend, layoutOperation} from './placemat.js'

const BATCH = `${PLACEMAT_API}/batch`

export class LocalPlacematBackend extends PlacematBackend {
  constructor(
    client: PlacementClient,
    private readonly transport: LocalTransport,
  ) {
    super(client)
  }

  /** The store's own State: a million providers are not copied to be planned on. */
  heldState(): Promise<State> {
    return this.transport.store.refresh()
  }

  /** A dry run on the store's State: the store reads the file again if it is used after it. */
  rehearse(plan: OperationPlan): Promise<void> {
    return asRefusal(() =>
      this.transport.store.rehearse((s, now) => runBatch(s, now, plan.operations(), {check: sharedPayloadValidator()})),
    )
  }

  /** The records GET /placemat/v1/providers (and /consumers) would answer, made from the store's State. */
  async loadCloud(opts: LoadOptions = {}): Promise<CloudView> {
    const s = await this.transport.store.refresh()
    const view: CloudView = {providers: new Map([...s.providers.values()].map((p) => [p.uuid, providerRecord(p)]))}
    if (opts.consumers) {
      view.consumers = new Map([...s.consumers.values()].map((c) => [c.uuid, consumerRecord(c)]))
      view.everyConsumer = true
    }
    return view
  }

  /** The operations, then the layout, in one transaction, as POST /placemat/v1/batch runs them. */
  async applyWithLayout(plan: OperationPlan, layout: Layout, opts: {prune: boolean; onProgress?: Progress}): Promise<TopologyPlan> {
    opts.onProgress?.(0, 1, `applying ${plan.operationCount} operations and the layout in one transaction`)
    function* operations(): Generator<BatchOperation> {
      yield* plan.operations()
      yield layoutOperation(layout, opts.prune)
    }
    const last = await this.batch((s, now) => runBatch(s, now, operations(), {check: sharedPayloadValidator()}))
    opts.onProgress?.(1, 1, `applied ${plan.operationCount} operations and the layout in one transaction`)
    return last!.plan!
  }

  /** Every operation in one transaction, as POST /placemat/v1/batch runs them; its refusals as the route's. */
  async applyOperations(plan: OperationPlan, opts: {onProgress?: Progress} = {}): Promise<number> {
    opts.onProgress?.(0, 1, `applying ${plan.operationCount} operations in one transaction`)
    // Each operation is made, checked against the batch route's schema and run in turn: a
    // refusal part way rolls the transaction back, and the store reloads what it had.
    await this.batch((s, now) => runBatch(s, now, plan.operations(), {check: sharedPayloadValidator()}))
    opts.onProgress?.(1, 1, `applied ${plan.operationCount} operations in one transaction`)
    return 1
  }

  /** A batch's work in one store write; its refusals as the batch route's. */
  private async batch<T>(work: (s: State, now: number) => T): Promise<T> {
    try {
      return await this.transport.store.write(work)
    } catch (err) {
      if (!(err instanceof PlacementError)) throw err
      throw new ApiError(err.status, shortDetail(detailText(err.status, err.detail)), err.code, 'POST', BATCH)
    }
  }
}
