import {findCandidates} from '../../core/candidates/engine.js'
import {renderCandidatesJson} from '../../core/candidates/render.js'
import {parseCandidateRequest} from '../../core/candidates/request.js'
import {JsonText, cacheHeaders, queryParams, validateQuery, type RouteDef} from '../context.js'
import {ResponseCache} from '../response-cache.js'
import * as S from '../schemas.js'

const answers = new WeakMap<object, ResponseCache>()

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
      cacheHeaders(ctx)
      // A shuffled answer must differ from call to call: never memoized.
      const options = ctx.options.candidates ?? {}
      let cache = answers.get(ctx.options)
      if (!cache) answers.set(ctx.options, (cache = new ResponseCache()))
      const key = `${ctx.mv}?${ctx.req.url.slice(ctx.req.url.indexOf('?') + 1)}`
      const memo = !options.randomize && options.answerCache !== false
      const hit = memo ? cache.get(state.version, key) : undefined
      if (hit !== undefined) return new JsonText(hit)
      const text = renderCandidatesJson(findCandidates(state, request, options), version)
      if (memo) cache.set(state.version, key, text)
      return new JsonText(text)
    },
  },
]
