import {
  createInventory,
  deleteAllInventories,
  deleteInventory,
  INVENTORY_FIELDS,
  listInventories,
  setInventories,
  showInventory,
  updateInventory,
} from '../../core/placement/inventories.js'
import {PlacementError} from '../../core/errors.js'
import type {Inventory} from '../../core/state/state.js'
import {getProvider} from '../../core/placement/providers.js'
import {absoluteUrl, httpDate, readJson, type Ctx, type RouteDef} from '../context.js'
import {providerUrl} from '../render.js'
import {INVENTORIES_PUT, INVENTORY_POST, INVENTORY_PUT_SINGLE} from '../schemas/inventory.js'

/**
 * An absolute URL for a Location header: webob makes every relative Location absolute
 * against the request URL (scheme and Host), and Placement's tests expect exactly that.
 */

/**
 * Cache headers from microversion 1.15, as webob sets them: Cache-Control always,
 * Last-Modified only when there is a time (Placement assigns None for an empty list,
 * which leaves the header out).
 */
function cacheHeadersOrNone(ctx: Ctx, lastModifiedMs: number | null): void {
  if (!ctx.mv.gte(15)) return
  if (lastModifiedMs !== null) ctx.reply.header('last-modified', httpDate(lastModifiedMs))
  ctx.reply.header('cache-control', 'no-cache')
}

export const inventoryUrl = (uuid: string, rc?: string) => `${providerUrl(uuid)}/inventories${rc ? `/${rc}` : ''}`

function renderInventory(inv: Inventory, generation?: number): Record<string, number> {
  const out: Record<string, number> = {}
  for (const f of INVENTORY_FIELDS) out[f] = inv[f]
  // Placement's _serialize_inventory adds the generation only when it is truthy.
  if (generation) out.resource_provider_generation = generation
  return out
}

function renderInventories(inventories: Map<string, Inventory>, generation: number) {
  const out: Record<string, Record<string, number>> = {}
  for (const [rc, inv] of inventories) out[rc] = renderInventory(inv)
  return {resource_provider_generation: generation, inventories: out}
}

const capacityOpts = (ctx: Ctx) => ({reservedCanEqualTotal: ctx.mv.gte(26)})

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/resource_providers/:uuid/inventories',
    async handler(ctx) {
      const state = await ctx.store.refresh()
      const {provider, inventories} = listInventories(state, ctx.params.uuid)
      // Inventory rows carry no time of their own here; the provider's updated time moves with them.
      cacheHeadersOrNone(ctx, inventories.size ? provider.updatedAt : null)
      return renderInventories(inventories, provider.generation)
    },
  },
  {
    method: 'POST',
    url: '/resource_providers/:uuid/inventories',
    body: true,
    async handler(ctx) {
      const uuid = ctx.params.uuid
      await ctx.store.refresh().then((s) => getProvider(s, uuid))
      const data = readJson(ctx, INVENTORY_POST)
      const {provider, inventory} = await ctx.store.write((s, now) => createInventory(s, now, uuid, data, capacityOpts(ctx)))
      ctx.reply.header('location', absoluteUrl(ctx, inventoryUrl(provider.uuid, data.resource_class)))
      ctx.reply.code(201)
      cacheHeadersOrNone(ctx, Date.now())
      return renderInventory(inventory, provider.generation)
    },
  },
  {
    method: 'PUT',
    url: '/resource_providers/:uuid/inventories',
    body: true,
    async handler(ctx) {
      const uuid = ctx.params.uuid
      await ctx.store.refresh().then((s) => getProvider(s, uuid))
      const data = readJson(ctx, INVENTORIES_PUT)
      const {provider, inventories} = await ctx.store.write((s, now) => setInventories(s, now, uuid, data, capacityOpts(ctx)))
      cacheHeadersOrNone(ctx, inventories.size ? Date.now() : null)
      return renderInventories(inventories, provider.generation)
    },
  },
  {
    method: 'DELETE',
    url: '/resource_providers/:uuid/inventories',
    async handler(ctx) {
      // Placement's version_handler('1.5', status_code=405): older versions get a 405.
      if (ctx.mv.lt(5)) throw new PlacementError(405, '')
      await ctx.store.write((s, now) => deleteAllInventories(s, now, ctx.params.uuid))
      ctx.reply.code(204)
      return undefined
    },
  },
  {
    method: 'GET',
    url: '/resource_providers/:uuid/inventories/:resource_class',
    async handler(ctx) {
      const state = await ctx.store.refresh()
      const {provider, inventory} = showInventory(state, ctx.params.uuid, ctx.params.resource_class)
      cacheHeadersOrNone(ctx, provider.updatedAt)
      return renderInventory(inventory, provider.generation)
    },
  },
  {
    method: 'PUT',
    url: '/resource_providers/:uuid/inventories/:resource_class',
    body: true,
    async handler(ctx) {
      const {uuid, resource_class: rc} = ctx.params
      await ctx.store.refresh().then((s) => getProvider(s, uuid))
      const data = readJson(ctx, INVENTORY_PUT_SINGLE)
      const {provider, inventory} = await ctx.store.write((s, now) => updateInventory(s, now, uuid, rc, data, capacityOpts(ctx)))
      cacheHeadersOrNone(ctx, Date.now())
      return renderInventory(inventory, provider.generation)
    },
  },
  {
    method: 'DELETE',
    url: '/resource_providers/:uuid/inventories/:resource_class',
    async handler(ctx) {
      await ctx.store.write((s, now) => deleteInventory(s, now, ctx.params.uuid, ctx.params.resource_class))
      ctx.reply.code(204)
      return undefined
    },
  },
]
