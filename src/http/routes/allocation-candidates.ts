import {findCandidates} from '../../core/candidates/engine.js'
import {parseCandidateRequest, type CandidateRequest} from '../../core/candidates/request.js'
import {candidatesBody} from '../candidates-body.js'
import {JsonText, cacheHeaders, queryParams, validateQuery, type RouteDef} from '../context.js'
import {JsonStream} from '../json-stream.js'
import {Lru} from '../lru.js'
import {ResponseCache} from '../response-cache.js'
import {allocationCandidatesGetQuerySchema} from '../schemas/allocation-candidate.js'

const answers = new WeakMap<object, ResponseCache>()
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
      // A shuffled answer must differ from call to call: never memoized.
      const options = ctx.options.candidates ?? {}
      let cache = answers.get(ctx.options)
      if (!cache) answers.set(ctx.options, (cache = new ResponseCache()))
      const memo = !options.randomize && options.answerCache !== false
      const hit = memo ? cache.get(state.version, key) : undefined
      if (hit !== undefined) return new JsonText(hit)
      const body = candidatesBody(ctx.options, findCandidates(state, request, options), version)
      // A streamed answer is too large to keep: it is never held whole.
      if (body instanceof JsonStream) return body
      if (memo) cache.set(state.version, key, body)
      return new JsonText(body)
    },
  },
]
