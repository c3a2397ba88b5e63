/**
 * placemat's own API, under /placemat/v1: bulk operations a Placement client never
 * sees. Placement's routes are untouched by anything here.
 */
import {PlacementError} from '../../core/errors.js'
import {applyBatch} from '../../core/batch.js'
import {providerRecord} from '../../core/wire.js'
import {checkConsumerFilter, consumerLister, consumerView, selectConsumers} from '../../core/consumer-list.js'
import {booleanParam, canonicalUuid, isUuidLike, queryParams, readJson, validateQuery, type RouteDef} from '../context.js'
import {jsonArrayStream, streams} from '../json-stream.js'
import {BATCH_POST} from '../schemas/batch.js'
import {CONSUMERS_QUERY} from '../schemas/consumer.js'
import {validateOperations} from '../batch-validation.js'

export const PLACEMAT_PREFIX = '/placemat/v1'

export const routes: RouteDef[] = [
  {
    method: 'POST',
    url: `${PLACEMAT_PREFIX}/batch`,
    body: true,
    // A whole cloud in one transaction (`placemat apply`): about 100,000 providers fit.
    bodyLimit: 512 * 1024 * 1024,
    async handler(ctx) {
      const {operations} = readJson(ctx, BATCH_POST)
      validateOperations(operations)
      const allowViolations = booleanParam(ctx, 'allow_violations')
      const results = await ctx.store.write((s, now) => applyBatch(s, now, operations, {allowViolations}))
      return {results}
    },
  },
  {
    // Every provider as one record; ?uuid=A,B,... only those (the ones a table names), unknown ones left out.
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/providers`,
    async handler(ctx) {
      const wanted = queryParams(ctx.req)
        .get('uuid')
        ?.flatMap((v) => v.split(','))
      const bad = wanted?.find((u) => !isUuidLike(u))
      if (bad !== undefined) throw new PlacementError(400, `Invalid query string parameters: uuid must be uuids. Got: ${bad}`)
      const s = await ctx.store.refresh()
      const providers = wanted
        ? [...new Set(wanted.map(canonicalUuid))].flatMap((u) => s.providers.get(u) ?? [])
        : [...s.providers.values()]
      if (streams(ctx.options, providers.length)) return jsonArrayStream('providers', providers, providerRecord)
      return {providers: providers.map(providerRecord)}
    },
  },
  {
    // What placemat knows of one consumer: its record (also one without allocations, which
    // GET /allocations/{uuid} does not show), else what it was when it gave its allocations away.
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/consumers/:consumer_uuid`,
    async handler(ctx) {
      const raw = ctx.params.consumer_uuid
      if (!isUuidLike(raw)) throw new PlacementError(400, `Malformed consumer_uuid: ${raw}`)
      const s = await ctx.store.refresh()
      // Its hosts (with their racks, rows and rooms), the providers it holds on and its groups besides.
      const known = consumerView(s, canonicalUuid(raw))
      if (!known) throw new PlacementError(404, `placemat knows no consumer ${raw}.`)
      return known
    },
  },
  {
    // Every consumer with its allocations, project, user and times (placemat audit / top), its
    // hosts and its placement groups; ?in_tree=UUID, ?project_id=P and ?group=NAME keep only some
    // (placemat consumer list).
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/consumers`,
    async handler(ctx) {
      const params = queryParams(ctx.req)
      validateQuery(params, CONSUMERS_QUERY)
      const one = (k: string) => params.get(k)?.at(-1)
      const inTree = one('in_tree')
      const filter = {inTree: inTree === undefined ? undefined : canonicalUuid(inTree), project: one('project_id'), group: one('group')}
      const s = await ctx.store.refresh()
      checkConsumerFilter(s, filter)
      const consumers = selectConsumers(s, filter)
      const listing = consumerLister(s)
      if (streams(ctx.options, consumers.length)) return jsonArrayStream('consumers', consumers, listing)
      return {consumers: consumers.map(listing)}
    },
  },
]
