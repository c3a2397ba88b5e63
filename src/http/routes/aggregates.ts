import {getAggregates, setAggregates} from '../../core/aggregates.js'
import {getProvider} from '../../core/providers.js'
import {cacheHeaders, canonicalUuid, readJson, type RouteDef} from '../context.js'
import * as S from '../schemas.js'

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
      const data = readJson(ctx, S.aggregatesPutSchema(ctx.mv))
      const aggregates: string[] = withGeneration ? data.aggregates : data
      const generation: number | undefined = withGeneration ? data.resource_provider_generation : undefined
      const p = await ctx.store.write((s, now) => setAggregates(s, now, ctx.params.uuid, aggregates, generation))
      cacheHeaders(ctx)
      const out: Record<string, unknown> = {aggregates: [...new Set(aggregates.map(canonicalUuid))]}
      if (withGeneration) out.resource_provider_generation = p.generation
      return out
    },
  },
]
