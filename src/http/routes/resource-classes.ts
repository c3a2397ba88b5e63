import {
  createResourceClass,
  deleteResourceClass,
  ensureResourceClass,
  getResourceClass,
  listResourceClasses,
  renameResourceClass,
} from '../../core/placement/resource-classes.js'
import {PlacementError} from '../../core/errors.js'
import type {NamedRecord} from '../../core/state/state.js'
import {absoluteUrl, cacheHeaders, linkPrefix, readJson, type Ctx, type RouteDef} from '../context.js'
import {validateSchema} from '../jsonschema.js'
import {lastModifiedOf} from '../render.js'
import {RESOURCE_CLASS_POST, RESOURCE_CLASS_PUT} from '../schemas/resource-class.js'

export const resourceClassUrl = (name: string) => `/resource_classes/${name}`

const renderClass = (rc: NamedRecord, prefix: string) => ({name: rc.name, links: [{rel: 'self', href: prefix + resourceClassUrl(rc.name)}]})

/** Placement's require_content('application/json'), for the route that needs it only below 1.7. */
function requireJsonContent(ctx: Ctx): void {
  const type = String(ctx.req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase()
  if (type !== 'application/json') {
    throw new PlacementError(415, `The media type ${type || 'None'} is not supported, use application/json`)
  }
}

/**
 * At 1.7+ Placement validates the path's name by parsing '{"name": "<name>"}' and checking it
 * against the PUT schema, so a bad name reads as a body validation failure.
 */
function validatePathName(name: string): void {
  let data: unknown
  try {
    data = JSON.parse(`{"name": "${name}"}`)
  } catch (err) {
    throw new PlacementError(400, `Malformed JSON: ${(err as Error).message}`)
  }
  const msg = validateSchema(RESOURCE_CLASS_PUT, data)
  if (msg !== null) throw new PlacementError(400, `JSON does not validate: ${msg}`)
}

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/resource_classes',
    minVersion: 2,
    async handler(ctx) {
      const state = await ctx.store.refresh()
      const classes = listResourceClasses(state)
      cacheHeaders(ctx, lastModifiedOf(classes))
      const prefix = linkPrefix(ctx)
      return {resource_classes: classes.map((rc) => renderClass(rc, prefix))}
    },
  },
  {
    method: 'POST',
    url: '/resource_classes',
    minVersion: 2,
    body: true,
    async handler(ctx) {
      const data = readJson(ctx, RESOURCE_CLASS_POST)
      const rc = await ctx.store.write((s, now) => createResourceClass(s, now, data.name))
      ctx.reply.header('location', absoluteUrl(ctx, resourceClassUrl(rc.name)))
      ctx.reply.code(201)
      return undefined
    },
  },
  {
    method: 'GET',
    url: '/resource_classes/:name',
    minVersion: 2,
    async handler(ctx) {
      const state = await ctx.store.refresh()
      const rc = getResourceClass(state, ctx.params.name)
      cacheHeaders(ctx, rc.updatedAt)
      return renderClass(rc, linkPrefix(ctx))
    },
  },
  {
    method: 'PUT',
    url: '/resource_classes/:name',
    minVersion: 2,
    async handler(ctx) {
      const name = ctx.params.name
      if (ctx.mv.gte(7)) {
        validatePathName(name)
        const {rc, created} = await ctx.store.write((s, now) => ensureResourceClass(s, now, name))
        ctx.reply.header('location', absoluteUrl(ctx, resourceClassUrl(rc.name)))
        ctx.reply.code(created ? 201 : 204)
        return undefined
      }
      requireJsonContent(ctx)
      const data = readJson(ctx, RESOURCE_CLASS_PUT)
      const rc = await ctx.store.write((s, now) => renameResourceClass(s, now, name, data.name))
      return renderClass(rc, linkPrefix(ctx))
    },
  },
  {
    method: 'DELETE',
    url: '/resource_classes/:name',
    minVersion: 2,
    async handler(ctx) {
      await ctx.store.write((s) => deleteResourceClass(s, ctx.params.name))
      ctx.reply.code(204)
      return undefined
    },
  },
]
