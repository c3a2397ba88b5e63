import {createProvider, deleteProvider, getProvider, updateProvider} from '../../core/placement/providers.js'
import {listProviders} from '../../core/placement/provider-list.js'
import {
  JsonText,
  absoluteUrl,
  canonicalUuid,
  cacheHeaders,
  linkPrefix,
  placementJson,
  queryParams,
  readJson,
  validateQuery,
  type RouteDef,
} from '../context.js'
import {jsonArrayStream, streams} from '../json-stream.js'
import {lastModifiedOf, listedNow, providerUrl, renderProvider} from '../render.js'
import {resourceProviderPostSchema, resourceProviderPutSchema, resourceProvidersGetQuerySchema} from '../schemas/resource-provider.js'
import {ResponseCache} from '../response-cache.js'

/** Provider lists already serialized, with the newest change among them (Last-Modified). */
const lists = new WeakMap<object, ResponseCache<{body: string; lastModified: number | null}>>()

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/resource_providers',
    async handler(ctx) {
      const params = queryParams(ctx.req)
      validateQuery(params, resourceProvidersGetQuerySchema(ctx.mv))
      const state = await ctx.store.refresh()
      const prefix = linkPrefix(ctx)
      // The same list asked again before any write is the same bytes (the links hold the prefix).
      const memo = ctx.options.candidates?.answerCache !== false
      let cache = lists.get(ctx.options)
      if (!cache) lists.set(ctx.options, (cache = new ResponseCache()))
      const key = `${ctx.mv}|${prefix}|${ctx.req.url.slice(ctx.req.url.indexOf('?') + 1)}`
      const hit = memo ? cache.get(state.version, key) : undefined
      if (hit) {
        cacheHeaders(ctx, hit.lastModified)
        return new JsonText(hit.body)
      }
      const providers = listProviders(state, params, ctx.mv)
      const lastModified = lastModifiedOf(providers)
      cacheHeaders(ctx, lastModified)
      // A long list goes out in pieces: memory holds a piece, not the whole answer.
      if (streams(ctx.options, providers.length)) {
        const now = listedNow(providers)
        return jsonArrayStream('resource_providers', now.indexes, (i) => now.render(i, ctx.mv, prefix))
      }
      const body = placementJson({resource_providers: providers.map((p) => renderProvider(p, ctx.mv, prefix))})
      if (memo) cache.set(state.version, key, {body, lastModified})
      return new JsonText(body)
    },
  },
  {
    method: 'POST',
    url: '/resource_providers',
    body: true,
    async handler(ctx) {
      const data = readJson(ctx, resourceProviderPostSchema(ctx.mv))
      if (data.uuid) data.uuid = canonicalUuid(data.uuid)
      const p = await ctx.store.write((s, now) => createProvider(s, now, data))
      ctx.reply.header('location', absoluteUrl(ctx, providerUrl(p.uuid)))
      if (ctx.mv.gte(20)) {
        cacheHeaders(ctx, p.updatedAt)
        return renderProvider(p, ctx.mv, linkPrefix(ctx))
      }
      ctx.reply.code(201)
      return undefined
    },
  },
  {
    method: 'GET',
    url: '/resource_providers/:uuid',
    async handler(ctx) {
      const state = await ctx.store.refresh()
      const p = getProvider(state, ctx.params.uuid)
      cacheHeaders(ctx, p.updatedAt)
      return renderProvider(p, ctx.mv, linkPrefix(ctx))
    },
  },
  {
    method: 'PUT',
    url: '/resource_providers/:uuid',
    body: true,
    async handler(ctx) {
      await ctx.store.refresh().then((s) => getProvider(s, ctx.params.uuid))
      const data = readJson(ctx, resourceProviderPutSchema(ctx.mv))
      const p = await ctx.store.write((s, now) => updateProvider(s, now, ctx.params.uuid, data, {allowReparenting: ctx.mv.gte(37)}))
      cacheHeaders(ctx, p.updatedAt)
      return renderProvider(p, ctx.mv, linkPrefix(ctx))
    },
  },
  {
    method: 'DELETE',
    url: '/resource_providers/:uuid',
    async handler(ctx) {
      await ctx.store.write((s) => deleteProvider(s, ctx.params.uuid))
      ctx.reply.code(204)
      return undefined
    },
  },
]
