import {parseCandidateRequest, type CandidateRequest} from '../../core/candidates/request.js'
import {candidateAnswers} from '../candidate-answers.js'
import {JsonText, cacheHeaders, queryParams, validateQuery, type RouteDef} from '../context.js'
import {JsonStream} from '../json-stream.js'
import {Lru} from '../lru.js'
import {allocationCandidatesGetQuerySchema} from '../schemas/allocation-candidate.js'

// Checking and parsing a query depends on nothing but its text and the microversion; a
// scheduler sends the same few queries over and over. Only valid queries are kept.
const parsed = new Lru<string, CandidateRequest>(256)

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/allocation_candidates',
    minVersion: 10,
    async handler(ctx) {
      const version = [ctx.mv.major, ctx.mv.minor] as const
      const key = `${ctx.mv}?${ctx.req.url.slice(ctx.req.url.indexOf('?') + 1)}`
      let request = parsed.get(key)
      if (!request) {
        const params = queryParams(ctx.req)
        validateQuery(params, allocationCandidatesGetQuerySchema(ctx.mv))
        request = parseCandidateRequest(params, version)
        parsed.set(key, request)
      }
      const state = await ctx.store.refresh()
      cacheHeaders(ctx)
      const body = candidateAnswers(ctx.options).answer(state, key, request, version)
      // A streamed answer is too large to keep: it is never held whole.
      return body instanceof JsonStream ? body : new JsonText(body)
    },
  },
]
