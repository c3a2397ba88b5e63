import {findCandidates} from '../../core/candidates/engine.js'
import {renderCandidates} from '../../core/candidates/render.js'
import {parseCandidateRequest} from '../../core/candidates/request.js'
import {cacheHeaders, queryParams, validateQuery, type RouteDef} from '../context.js'
import * as S from '../schemas.js'

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/allocation_candidates',
    minVersion: 10,
    async handler(ctx) {
      const params = queryParams(ctx.req)
      validateQuery(params, S.allocationCandidatesGetQuerySchema(ctx.mv))
      const version = [ctx.mv.major, ctx.mv.minor] as const
      const request = parseCandidateRequest(params, version)
      const state = await ctx.store.refresh()
      const result = findCandidates(state, request, ctx.options.candidates ?? {})
      cacheHeaders(ctx)
      return renderCandidates(result, version)
    },
  },
]
