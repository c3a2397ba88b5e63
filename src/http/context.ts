import type {ServiceState} from './service-state.js'
import type {FastifyReply, FastifyRequest} from 'fastify'
import {PlacementError} from '../core/errors.js'
import type {Store} from '../store/store.js'
import {validateSchema} from './jsonschema.js'
import {parseJsonBody} from './json-body.js'
import {mark, P, PROFILING} from '../store/phase-profile.js'
import type {Version} from './microversion.js'
import type {Credentials, Policy} from './policy/policy.js'
import type {KeystoneValidator} from './auth/keystone.js'
import {edgeOf, type EdgeOptions} from './edge.js'
import type {Schema} from './schemas/common.js'
import type {FlavorCatalog} from './flavor-catalog.js'

export type AuthMode = 'noauth2' | 'token' | 'trusted' | 'keystone'

export interface CandidateOptions {
  /** Cap on candidates generated before limit applies (Placement's max_allocation_candidates); -1 for none. */
  maxCandidates?: number
  /** Shuffle candidates when limited (Placement's randomize_allocation_candidates). */
  randomize?: boolean
  /** breadth-first spreads across roots; depth-first fills the first root first. */
  strategy?: 'breadth-first' | 'depth-first'
  /** Memoize serialized answers per State version (exact; on unless false). */
  answerCache?: boolean
}

export interface AppOptions {
  store: Store
  auth: AuthMode
  /** Answers with more entries than this (providers, candidates) are streamed (json-stream.ts STREAM_ABOVE). */
  streamAbove?: number
  /** The only token accepted with auth 'token'. */
  adminToken?: string
  cors?: {origins: string[]; allowHeaders: string[]}
  candidates?: CandidateOptions
  /** Largest request body accepted, bytes. */
  bodyLimit?: number
  /** fastify's logger: false for none, or pino options (level, stream). */
  logger?: boolean | Record<string, unknown>
  /** Client timeouts, ms (DEFAULT_TIMEOUTS in app.ts). */
  timeouts?: {headersMs?: number; requestMs?: number; keepAliveMs?: number}
  /** Serve /metrics without a token. */
  metricsPublic?: boolean
  /** Placement's policy (default: its 15.0.0 defaults, new defaults and scope enforced, as Placement 2026.1 runs them). */
  policy?: Policy
  /** Placement's [placement] incomplete_consumer_project_id / _user_id (default 00000000-...). */
  incompleteConsumer?: {project?: string; user?: string}
  /** With auth 'keystone': who validates the tokens. */
  keystone?: KeystoneValidator
  /** The daemon's life (stopping: health 503, connections closed after each answer); none in process. */
  service?: ServiceState
  /** Behind a balancer: the proxies trusted with forwarding headers, and the path the API is published under. */
  edge?: EdgeOptions
  /** Serve HTTPS with this certificate and key (PEM; TLS 1.2 at least). */
  tls?: {cert: Buffer; key: Buffer}
  /** The flavor catalog capacity and its gauges count (`daemon start --flavors`). */
  flavors?: FlavorCatalog
}

declare module 'fastify' {
  interface FastifyRequest {
    mv: Version
    requestId: string
    /** Who is asking, for the policy; null when every request is trusted (the CLI's own file). */
    credentials: Credentials | null
  }
}

export interface Ctx {
  req: FastifyRequest
  reply: FastifyReply
  mv: Version
  store: Store
  options: AppOptions
  params: Record<string, string>
}

/**
 * A body as Placement's Python writes it: allocation_ratio is a float column, so a whole
 * ratio is `1.0`, not `1` (clients such as osc-placement print what they get). Keys are
 * matched only where JSON puts a key: after `{` or `,`, never inside a string.
 */
export function placementJson(body: unknown): string {
  const text = JSON.stringify(body)
  return text.includes('"allocation_ratio":') ? text.replace(/([{,]"allocation_ratio":)(-?\d+)(?=[,}])/g, '$1$2.0') : text
}

/** A response body already serialized as JSON (for large answers built as text). */
export class JsonText {
  constructor(readonly text: string | Buffer) {}
}

export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  url: string
  /** Below this 1.x microversion the route answers 404, as Placement's version_handler does. */
  minVersion?: number
  /** Handler that returns the JSON body; or sets status on ctx.reply and returns undefined. */
  handler: (ctx: Ctx) => unknown | Promise<unknown>
  /** The route reads a JSON body: enforce content-type application/json (415 otherwise). */
  body?: boolean
  /** A body limit of its own (bytes), above the app's default. */
  bodyLimit?: number
  /** Skip the Accept check (Placement does not check it on every GET). */
  anyAccept?: boolean
  /** Served without a token or admin role (the version document, health). */
  public?: boolean
  /** A POST that only asks (a plan, a check): changes nothing, so it is not a write the candidates' answers follow. */
  asks?: boolean
  /** The token may come as `Authorization: Bearer <token>` too (a Prometheus scrape); Placement's own routes take X-Auth-Token only. */
  bearer?: boolean
}

/**
 * Parses the raw body as JSON and validates it, with Placement's wording for both failures:
 * with a schema, the body is the type the schema carries; without one, it is unknown.
 */
export function readJson<T>(ctx: Ctx, schema: Schema<T>): T
export function readJson(ctx: Ctx): unknown
export function readJson(ctx: Ctx, schema?: object): unknown {
  const raw = ctx.req.body
  const data = parseJsonBody(typeof raw === 'string' ? raw : '')
  if (PROFILING) mark(P.parse)
  return schema ? checkJson(data, schema as Schema<unknown>) : data
}

/** A body already read, held to `schema` (a route whose schema depends on the body's shape reads it once). */
export function checkJson<T>(data: unknown, schema: Schema<T>): T {
  const msg = validateSchema(schema, data)
  if (PROFILING) mark(P.validate)
  if (msg !== null) throw new PlacementError(400, `JSON does not validate: ${msg}`)
  return data as T
}

/** Every query parameter, each with its values in order. */
export function queryParams(req: FastifyRequest): Map<string, string[]> {
  const out = new Map<string, string[]>()
  const q = req.url.indexOf('?')
  if (q < 0) return out
  for (const [k, v] of new URLSearchParams(req.url.slice(q + 1))) {
    const list = out.get(k)
    if (list) list.push(v)
    else out.set(k, [v])
  }
  return out
}

/** Validates the query as Placement does: the schema sees each key's last value. */
/** A true/false query flag (absent: false). */
export function booleanParam(ctx: Ctx, name: string): boolean {
  const v = queryParams(ctx.req).get(name)?.at(-1)
  if (v === undefined) return false
  if (v !== 'true' && v !== 'false') throw new PlacementError(400, `${name} must be true or false`)
  return v === 'true'
}

export function validateQuery(params: Map<string, string[]>, schema: object): void {
  // No prototype: a key named __proto__ is a key like any other (and an unexpected one).
  const flat: Record<string, string> = Object.create(null)
  for (const [k, v] of params) flat[k] = v[v.length - 1]
  const msg = validateSchema(schema, flat)
  if (msg !== null) throw new PlacementError(400, `Invalid query string parameters: ${msg}`)
}

/**
 * An absolute URL for a Location header, as webob makes them: the scheme, host and path prefix
 * the client reached the API under (behind a trusted proxy, what it forwarded; edge.ts).
 */
export function absoluteUrl(ctx: Ctx, path: string): string {
  // Percent-encoded, so any accepted name can be put in a header.
  const edge = edgeOf(ctx.req, ctx.options.edge)
  const encoded = edge.prefix + encodeURI(path)
  if (!edge.host) return encoded
  return `${edge.protocol}://${edge.host}${encoded}`
}

/** What every link's href begins with: the path the client reached the API under ('' at the root), as Placement's SCRIPT_NAME. */
export const linkPrefix = (ctx: Ctx): string => edgeOf(ctx.req, ctx.options.edge).prefix

export const httpDate = (ms: number) => new Date(ms).toUTCString()

/** Sets Last-Modified and Cache-Control as Placement does from microversion 1.15. */
export function cacheHeaders(ctx: Ctx, lastModifiedMs: number | null = null): void {
  if (!ctx.mv.gte(15)) return
  ctx.reply.header('last-modified', httpDate(lastModifiedMs ?? Date.now()))
  ctx.reply.header('cache-control', 'no-cache')
}

/** Placement's is_uuid_like (oslo's), shared with the schema validator's uuid format. */
export {isUuidLike} from './jsonschema.js'

/** The canonical form placemat stores (one home: core/uuids.ts). */
export {canonicalUuid} from '../core/uuids.js'
