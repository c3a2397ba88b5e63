/**
 * GET /placemat/v1/allocation_candidates: Placement's GET /allocation_candidates (same
 * query, same engine, same body at the same microversion) plus soft topology affinity:
 *
 *   near=CONSUMER  candidates in the consumer's rack first, then its row, then its room, then the rest
 *   far=CONSUMER   the reverse: elsewhere first, same rack last
 *   group=NAME     for a new member of a placement group: a hard group's rule filters the
 *                  candidates (with every member where it is), a soft one orders them
 *
 * The order within each closeness band is the engine's (a stable sort). With `limit`, the
 * whole set is found and sorted first, then cut, so "near" really means the nearest
 * `limit` candidates; provider_summaries then cover only the candidates kept.
 */
import {findCandidates, type CandidateResult} from '../../core/candidates/engine.js'
import {parseCandidateRequest} from '../../core/candidates/request.js'
import {PlacementError} from '../../core/errors.js'
import {orderByCloseness} from '../../core/candidates/closeness.js'
import {fitToGroup} from '../../core/candidates/group-fit.js'
import {candidatesBody} from '../candidates-body.js'
import {JsonText, cacheHeaders, canonicalUuid, isUuidLike, queryParams, validateQuery, type RouteDef} from '../context.js'
import {JsonStream} from '../json-stream.js'
import * as S from '../schemas.js'
import {PLACEMAT_PREFIX} from './placemat.js'

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/allocation_candidates`,
    minVersion: 10,
    async handler(ctx) {
      const params = queryParams(ctx.req)
      const near = params.get('near')
      const far = params.get('far')
      const group = params.get('group')?.at(-1)
      params.delete('near')
      params.delete('far')
      params.delete('group')
      if ([near, far, group].filter((x) => x !== undefined).length > 1) throw new PlacementError(400, 'Give one of near, far or group.')
      const direction = near ? 'near' : far ? 'far' : null
      const anchorRaw = (near ?? far)?.at(-1)
      if (anchorRaw !== undefined && !isUuidLike(anchorRaw)) {
        throw new PlacementError(400, `Invalid query string parameters: ${direction} must be a consumer uuid. Got: ${anchorRaw}`)
      }
      validateQuery(params, S.allocationCandidatesGetQuerySchema(ctx.mv))
      const version = [ctx.mv.major, ctx.mv.minor] as const
      const request = parseCandidateRequest(params, version)
      const state = await ctx.store.refresh()
      let result: CandidateResult
      if (group !== undefined) {
        const all = findCandidates(state, {...request, limit: undefined}, ctx.options.candidates ?? {})
        result = fitToGroup(state, all, group, request.limit, ctx.mv.gte(29))
      } else if (direction && anchorRaw !== undefined) {
        const all = findCandidates(state, {...request, limit: undefined}, ctx.options.candidates ?? {})
        result = orderByCloseness(state, all, canonicalUuid(anchorRaw), direction, request.limit, ctx.mv.gte(29))
      } else {
        result = findCandidates(state, request, ctx.options.candidates ?? {})
      }
      cacheHeaders(ctx)
      const body = candidatesBody(ctx.options, result, version)
      return body instanceof JsonStream ? body : new JsonText(body)
    },
  },
]
