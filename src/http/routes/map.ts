/**
 * What the map page (/placemat/ui/) asks for, under placemat's API and its token like any call:
 *
 *   GET /placemat/v1/map/layout    rooms, rows, racks and hosts, the pools and whom they serve,
 *                                  the classes and the catalog's flavors (core/map/map-layout.ts)
 *   GET /placemat/v1/map/values    ?flavor=NAME&class=CLASS, with without=LEVEL:NAME and
 *                                  ratio=CLASS=R (each repeatable) a what-if: one view's numbers
 *                                  (core/map/map-values.ts)
 *   GET /placemat/v1/map/domain    ?level=LEVEL&name=NAME: one domain's hosts, use per class,
 *                                  consumers, pools and placement groups (core/map/map-domain.ts)
 *
 * Each answer carries an ETag of the State's version (the layout's: of its shape and topology), the
 * catalog and the query: the page polls with If-None-Match, and while nothing changed it is
 * answered 304, worked out once.
 */
import {createHash, randomUUID} from 'node:crypto'
import {PlacementError} from '../../core/errors.js'
import type {FlavorRequest} from '../../core/headroom/flavors.js'
import {lostDomainOf, ratioOf} from '../../core/headroom/what-if-headroom.js'
import {mapDomain} from '../../core/map/map-domain.js'
import {mapLayout, type DomainName, type MapLayoutAnswer} from '../../core/map/map-layout.js'
import {mapValues} from '../../core/map/map-values.js'
import type {State} from '../../core/state/state.js'
import {JsonText, queryParams, type AppOptions, type Ctx, type RouteDef} from '../context.js'
import {ResponseCache} from '../response-cache.js'
import {PLACEMAT_PREFIX} from './placemat.js'

export const MAP_PREFIX = `${PLACEMAT_PREFIX}/map`

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: `${MAP_PREFIX}/layout`,
    async handler(ctx) {
      const s = await ctx.store.refresh()
      // Its tag moves with the cloud's shape and topology, not with every claim.
      return conditional(
        ctx,
        s,
        'layout',
        (): MapLayoutAnswer => ({...mapLayout(s), flavors: catalogOf(ctx.options).map((f) => f.flavor)}),
        `L${s.shapeVersion}.${s.topologyGeneration}`,
      )
    },
  },
  {
    method: 'GET',
    url: `${MAP_PREFIX}/values`,
    async handler(ctx) {
      const q = queryParams(ctx.req)
      const one = (k: string) => q.get(k)?.at(-1) ?? null
      const catalog = catalogOf(ctx.options)
      const flavor = one('flavor')
      if (flavor !== null && !catalog.some((f) => f.flavor === flavor))
        throw new PlacementError(
          catalog.length ? 400 : 404,
          catalog.length
            ? `No flavor named ${flavor} in the catalog; it has ${catalog.map((f) => f.flavor).join(', ')}.`
            : 'This daemon has no flavor catalog: start it with --flavors FILE.',
        )
      const cls = one('class')
      const without = (q.get('without') ?? []).map(
        (v) => lostDomainOf(v) ?? badRequest(`Invalid without ${v}: host:NAME, rack:NAME, row:NAME or room:NAME.`),
      )
      const ratios = new Map((q.get('ratio') ?? []).map((v) => ratioOf(v) ?? badRequest(`Invalid ratio ${v}: CLASS=R, R above 0.`)))
      const s = await ctx.store.refresh()
      if (cls !== null && !s.classes.has(cls)) throw new PlacementError(400, `No resource class named ${cls}.`)
      const key = JSON.stringify(['values', flavor, cls, without, [...ratios]])
      return conditional(ctx, s, key, () => mapValues(s, catalog, {flavor, class: cls, without, ratios}))
    },
  },
  {
    method: 'GET',
    url: `${MAP_PREFIX}/domain`,
    async handler(ctx) {
      const q = queryParams(ctx.req)
      const level = q.get('level')?.at(-1)
      const name = q.get('name')?.at(-1)
      if (!level || name === undefined) throw new PlacementError(400, 'Give level (host, rack, row, room or cloud) and name.')
      const s = await ctx.store.refresh()
      return conditional(ctx, s, JSON.stringify(['domain', level, name]), () => mapDomain(s, {level, name} as DomainName))
    },
  },
]

const badRequest = (detail: string): never => {
  throw new PlacementError(400, detail)
}

const catalogOf = (options: AppOptions): readonly FlavorRequest[] => options.flavors?.flavors ?? []

/** This process's answers are told apart from another's (a restarted daemon starts its State's versions again). */
const BOOT = randomUUID().slice(0, 8)

/** Each State and each catalog by a number of its own (a reload makes new ones). */
const numbers = new WeakMap<object, number>()
let numbered = 0
const numberOf = (x: object): number => {
  let n = numbers.get(x)
  if (n === undefined) numbers.set(x, (n = ++numbered))
  return n
}

/** The answers worked out for the State's version, by their ETag (a few views of a few pages). */
const kept = new WeakMap<AppOptions, ResponseCache<Buffer>>()

/**
 * The answer of `compute` with its ETag (of the State's `version`, its write count unless told):
 * 304 with no body when the client holds it already, the answer kept for the next asker of the
 * same view until the State changes.
 */
function conditional(ctx: Ctx, s: State, key: string, compute: () => unknown, version = String(s.version)): JsonText | undefined {
  const catalog = ctx.options.flavors?.flavors
  const digest = createHash('sha256').update(key).digest('base64url').slice(0, 16)
  const tag = `"${BOOT}.${numberOf(s)}.${version}.${catalog ? numberOf(catalog) : 0}.${digest}"`
  ctx.reply.header('etag', tag)
  ctx.reply.header('cache-control', 'no-cache')
  const asked = ctx.req.headers['if-none-match']
  if (typeof asked === 'string' && asked.split(',').some((t) => t.trim() === tag)) {
    ctx.reply.code(304).send()
    return undefined
  }
  let cache = kept.get(ctx.options)
  if (!cache) kept.set(ctx.options, (cache = new ResponseCache<Buffer>(32, 64 * 1024 * 1024)))
  let body = cache.get(s.version, tag)
  if (!body) {
    body = Buffer.from(JSON.stringify(compute()))
    cache.set(s.version, tag, body)
  }
  return new JsonText(body)
}
