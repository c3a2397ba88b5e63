/**
 * GET /placemat/v1/allocation_candidates: Placement's GET /allocation_candidates (same
 * query, same engine, same body at the same microversion) plus soft topology affinity:
 *
 *   near=CONSUMER  candidates in the consumer's rack first, then its row, then its room, then the rest
 *   far=CONSUMER   the reverse: elsewhere first, same rack last
 *   group=NAME     for a new member of a placement group: a hard group's rule filters the
 *                  candidates (with every member where it is), a soft one orders them
 *   consumer=UUID  for that consumer: the rules of every group it is a member of apply as
 *                  group= does (the consumer counted where the candidate is), with group=,
 *                  near= or far= (which then orders what the hard rules keep)
 *
 * The order within each closeness band is the engine's (a stable sort). With `limit`, the
 * whole set is found and sorted first, then cut, so "near" really means the nearest
 * `limit` candidates; provider_summaries then cover only the candidates kept.
 *
 * GET /placemat/v1/allocation_candidates/why (the same query): why there is no candidate,
 * {why, steps: [{part, hosts}]} (core/candidates/why.ts), why null when there are some.
 */
import {findCandidates, type CandidateResult} from '../../core/candidates/engine.js'
import {parseCandidateRequest} from '../../core/candidates/request.js'
import {PlacementError} from '../../core/errors.js'
import {whyNoCandidates} from '../../core/candidates/why.js'
import {orderByCloseness} from '../../core/candidates/closeness.js'
import {fitToGroups, groupsToKeep} from '../../core/candidates/group-fit.js'
import {candidatesBody} from '../candidates-body.js'
import {JsonText, cacheHeaders, canonicalUuid, isUuidLike, queryParams, validateQuery, type Ctx, type RouteDef} from '../context.js'
import {JsonStream} from '../json-stream.js'
import {allocationCandidatesGetQuerySchema} from '../schemas/allocation-candidate.js'
import {PLACEMAT_PREFIX} from './placemat.js'

/** The query of placemat's candidates routes: Placement's, and near, far, group and consumer. */
function placematQuery(ctx: Ctx) {
  const params = queryParams(ctx.req)
  const near = params.get('near')
  const far = params.get('far')
  const group = params.get('group')?.at(-1)
  const consumerRaw = params.get('consumer')?.at(-1)
  params.delete('near')
  params.delete('far')
  params.delete('group')
  params.delete('consumer')
  if ([near, far, group].filter((x) => x !== undefined).length > 1) throw new PlacementError(400, 'Give one of near, far or group.')
  const direction = near ? ('near' as const) : far ? ('far' as const) : null
  const anchorRaw = (near ?? far)?.at(-1)
  if (anchorRaw !== undefined && !isUuidLike(anchorRaw)) {
    throw new PlacementError(400, `Invalid query string parameters: ${direction} must be a consumer uuid. Got: ${anchorRaw}`)
  }
  if (consumerRaw !== undefined && !isUuidLike(consumerRaw)) {
    throw new PlacementError(400, `Invalid query string parameters: consumer must be a consumer uuid. Got: ${consumerRaw}`)
  }
  validateQuery(params, allocationCandidatesGetQuerySchema(ctx.mv))
  const version = [ctx.mv.major, ctx.mv.minor] as const
  return {
    request: parseCandidateRequest(params, version),
    version,
    order: direction && anchorRaw !== undefined ? {direction, anchor: canonicalUuid(anchorRaw)} : null,
    fit: {consumer: consumerRaw !== undefined ? canonicalUuid(consumerRaw) : undefined, group},
  }
}

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/allocation_candidates`,
    minVersion: 10,
    async handler(ctx) {
      const {request, version, order, fit} = placematQuery(ctx)
      const state = await ctx.store.refresh()
      const nested = ctx.mv.gte(29)
      const ruled = groupsToKeep(state, fit).length > 0
      let result: CandidateResult
      if (ruled || order) {
        // The whole set judged (and ordered) before the cut.
        result = findCandidates(state, {...request, limit: undefined}, ctx.options.candidates ?? {})
        if (ruled) result = fitToGroups(state, result, fit, order ? undefined : request.limit, nested)
        if (order) result = orderByCloseness(state, result, order.anchor, order.direction, request.limit, nested)
      } else {
        result = findCandidates(state, request, ctx.options.candidates ?? {})
      }
      cacheHeaders(ctx)
      const body = candidatesBody(ctx.options, result, version)
      return body instanceof JsonStream ? body : new JsonText(body)
    },
  },
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/allocation_candidates/why`,
    minVersion: 10,
    async handler(ctx) {
      const {request, fit} = placematQuery(ctx)
      const state = await ctx.store.refresh()
      return whyNoCandidates(state, request, fit) ?? {why: null, steps: []}
    },
  },
]
