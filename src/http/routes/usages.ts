import {notFound} from '../../core/errors.js'
import {providerUsages, totalUsages, usagesByConsumerType} from '../../core/placement/usages.js'
import {cacheHeaders, queryParams, validateQuery, type RouteDef} from '../context.js'
import {usagesGetQuerySchema} from '../schemas/usage.js'

const last = (params: Map<string, string[]>, key: string): string | undefined => {
  const v = params.get(key)
  return v ? v[v.length - 1] : undefined
}

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/resource_providers/:uuid/usages',
    async handler(ctx) {
      const s = await ctx.store.refresh()
      const uuid = ctx.params.uuid
      const p = s.providers.get(uuid)
      if (!p) throw notFound(`No resource provider with uuid ${uuid} found: No resource provider with uuid ${uuid} found`)
      // Placement answers "what is the usage now", so last-modified is now.
      cacheHeaders(ctx)
      return {resource_provider_generation: p.generation, usages: providerUsages(p)}
    },
  },
  {
    method: 'GET',
    url: '/usages',
    minVersion: 9,
    async handler(ctx) {
      const params = queryParams(ctx.req)
      validateQuery(params, usagesGetQuerySchema(ctx.mv))
      const projectId = last(params, 'project_id')!
      const userId = last(params, 'user_id')
      const s = await ctx.store.refresh()
      const usages = ctx.mv.gte(38)
        ? usagesByConsumerType(s, projectId, userId, last(params, 'consumer_type'))
        : totalUsages(s, projectId, userId)
      cacheHeaders(ctx)
      return {usages}
    },
  },
]
