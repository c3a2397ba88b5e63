import {getAggregates, setAggregates} from '../../core/placement/aggregates.js'
import {getProvider} from '../../core/placement/providers.js'
import {cacheHeaders, canonicalUuid, readJson, type RouteDef} from '../context.js'
import {aggregatesPutSchema} from '../schemas/aggregate.js'

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/resource_providers/:uuid/aggregates',
    minVersion: 1,
    async handler(ctx) {
      const s = await ctx.store.refresh()
      const {provider, aggregates} = getAggregates(s, ctx.params.uuid)
      // Placement keeps no time for an association, so last-modified is now.
      cacheHeaders(ctx)
      const out: Record<string, unknown> = {aggregates}
      if (ctx.mv.gte(19)) out.resource_provider_generation = provider.generation
      return out
    },
  },
  {
    method: 'PUT',
    url: '/resource_providers/:uuid/aggregates',
    minVersion: 1,
    body: true,
    async handler(ctx) {
      // The provider is looked up before the body is read, as Placement does.
      getProvider(await ctx.store.refresh(), ctx.params.uuid)
      const withGeneration = ctx.mv.gte(19)
      // A bare list before 1.19, {aggregates, resource_provider_generation} from 1.19: the schema decides which.
      const data = readJson(ctx, aggregatesPutSchema(ctx.mv))
      const aggregates = Array.isArray(data) ? data : data.aggregates
      const generation = Array.isArray(data) ? undefined : data.resource_provider_generation
      const p = await ctx.store.write((s, now) => setAggregates(s, now, ctx.params.uuid, aggregates, generation))
      cacheHeaders(ctx)
      const out: Record<string, unknown> = {aggregates: [...new Set(aggregates.map(canonicalUuid))]}
      if (withGeneration) out.resource_provider_generation = p.generation
      return out
    },
  },
]
