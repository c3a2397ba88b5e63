/**
 * A --db file: the placemat backend with its bulk reads and its batch served from the store
 * in process, as the batch and listing routes serve them but without their JSON. A cloud of a
 * million providers is a batch of millions of operations: as one body it would be a string
 * longer than V8 allows, and parsing it back would hold every operation twice.
 */
import {ApiError, shortDetail, type PlacementClient} from '../../client/client.js'
import type {LocalTransport} from '../../client/transports.js'
import {runBatch} from '../../core/batch.js'
import {PlacementError} from '../../core/errors.js'
import {consumerRecord, providerRecord} from '../../core/wire.js'
import {detailText} from '../../http/errors.js'
import {validateOperations} from '../../http/routes/placemat.js'
import {schemasChecked} from '../apply/check.js'
import {PLACEMAT_API, type CloudView, type LoadOptions, type OperationPlan, type Progress} from './backend.js'
import {PlacematBackend} from './placemat.js'

const BATCH = `${PLACEMAT_API}/batch`

export class LocalPlacematBackend extends PlacematBackend {
  constructor(
    client: PlacementClient,
    private readonly transport: LocalTransport,
  ) {
    super(client)
  }

  /** The records GET /placemat/v1/providers (and /consumers) would answer, made from the store's State. */
  async loadCloud(opts: LoadOptions = {}): Promise<CloudView> {
    const s = await this.transport.store.refresh()
    const view: CloudView = {providers: new Map([...s.providers.values()].map((p) => [p.uuid, providerRecord(p)]))}
    if (opts.consumers) view.consumers = new Map([...s.consumers.values()].map((c) => [c.uuid, consumerRecord(c)]))
    return view
  }

  /** Every operation in one transaction, as POST /placemat/v1/batch runs them; its refusals as the route's. */
  async applyOperations(plan: OperationPlan, opts: {onProgress?: Progress} = {}): Promise<number> {
    opts.onProgress?.(0, 1, `applying ${plan.ops.length} operations in one transaction`)
    try {
      // Millions of operations take tens of seconds to check against their schemas: once is enough.
      if (!schemasChecked(plan.ops)) validateOperations(plan.ops)
      await this.transport.store.write((s, now) => {
        runBatch(s, now, plan.ops)
      })
    } catch (err) {
      if (!(err instanceof PlacementError)) throw err
      throw new ApiError(err.status, shortDetail(detailText(err.status, err.detail)), err.code, 'POST', BATCH)
    }
    opts.onProgress?.(1, 1, `applied ${plan.ops.length} operations in one transaction`)
    return 1
  }
}
