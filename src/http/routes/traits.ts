import {PlacementError} from '../../core/errors.js'
import {
  clearProviderTraits,
  deleteTrait,
  ensureTrait,
  getProviderTraits,
  getTrait,
  listTraits,
  parseTraitFilters,
  setProviderTraits,
} from '../../core/placement/traits.js'
import type {NamedRecord} from '../../core/state/state.js'
import {absoluteUrl, cacheHeaders, queryParams, readJson, validateQuery, type RouteDef} from '../context.js'
import {validateSchema} from '../jsonschema.js'
import {lastModifiedOf} from '../render.js'
import {CUSTOM_TRAIT, RESOURCE_PROVIDER_TRAITS_PUT, TRAITS_GET_QUERY} from '../schemas/trait.js'

export const traitUrl = (name: string) => `/traits/${name}`

const INVALID_TRAIT =
  'The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" ' +
  'and use following characters: "A"-"Z", "0"-"9" and "_"'

const names = (traits: NamedRecord[]) => traits.map((t) => t.name)

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/traits',
    minVersion: 6,
    async handler(ctx) {
      const params = queryParams(ctx.req)
      validateQuery(params, TRAITS_GET_QUERY)
      const last = (k: string) => params.get(k)?.at(-1)
      const filters = parseTraitFilters(last('name'), last('associated'))
      const state = await ctx.store.refresh()
      const traits = listTraits(state, filters)
      cacheHeaders(ctx, lastModifiedOf(traits))
      return {traits: names(traits)}
    },
  },
  {
    method: 'GET',
    url: '/traits/:name',
    minVersion: 6,
    anyAccept: true,
    async handler(ctx) {
      const state = await ctx.store.refresh()
      const trait = getTrait(state, ctx.params.name)
      cacheHeaders(ctx, trait.createdAt)
      ctx.reply.code(204)
      return undefined
    },
  },
  {
    method: 'PUT',
    url: '/traits/:name',
    minVersion: 6,
    async handler(ctx) {
      const name = ctx.params.name
      if (validateSchema(CUSTOM_TRAIT, name) !== null) throw new PlacementError(400, INVALID_TRAIT)
      const {trait, created} = await ctx.store.write((s, now) => ensureTrait(s, now, name))
      ctx.reply.header('location', absoluteUrl(ctx, traitUrl(trait.name)))
      cacheHeaders(ctx, trait.createdAt)
      ctx.reply.code(created ? 201 : 204)
      return undefined
    },
  },
  {
    method: 'DELETE',
    url: '/traits/:name',
    minVersion: 6,
    async handler(ctx) {
      await ctx.store.write((s) => deleteTrait(s, ctx.params.name))
      ctx.reply.code(204)
      return undefined
    },
  },
  {
    method: 'GET',
    url: '/resource_providers/:uuid/traits',
    minVersion: 6,
    async handler(ctx) {
      const state = await ctx.store.refresh()
      const {provider, traits} = getProviderTraits(state, ctx.params.uuid)
      cacheHeaders(ctx, lastModifiedOf(traits))
      return {traits: names(traits), resource_provider_generation: provider.generation}
    },
  },
  {
    method: 'PUT',
    url: '/resource_providers/:uuid/traits',
    minVersion: 6,
    body: true,
    async handler(ctx) {
      const data = readJson(ctx, RESOURCE_PROVIDER_TRAITS_PUT)
      const {provider, traits} = await ctx.store.write((s, now) => setProviderTraits(s, now, ctx.params.uuid, data))
      cacheHeaders(ctx, lastModifiedOf(traits))
      return {traits: names(traits), resource_provider_generation: provider.generation}
    },
  },
  {
    method: 'DELETE',
    url: '/resource_providers/:uuid/traits',
    minVersion: 6,
    async handler(ctx) {
      await ctx.store.write((s, now) => clearProviderTraits(s, now, ctx.params.uuid))
      ctx.reply.code(204)
      return undefined
    },
  },
]
