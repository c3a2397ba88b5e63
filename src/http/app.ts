import {Readable} from 'node:stream'
import {createHash, randomUUID, timingSafeEqual} from 'node:crypto'
import http from 'node:http'
import Fastify, {LogController, type FastifyInstance, type FastifyReply, type FastifyRequest} from 'fastify'
import {ErrorCode, PlacementError} from '../core/errors.js'
import {JsonText, placementJson, type AppOptions, type Ctx, type RouteDef} from './context.js'
import {JsonStream} from './json-stream.js'
import {detailText, errorBody, statusTitle, toPlacementError} from './errors.js'
import {MAX_VERSION, MIN_VERSION, Version, maxVersionString, minVersionString, negotiate} from './microversion.js'
import {routes as rootRoutes} from './routes/root.js'
import {routes as providerRoutes} from './routes/resource-providers.js'
import {routes as inventoryRoutes} from './routes/inventories.js'
import {routes as classRoutes} from './routes/resource-classes.js'
import {routes as traitRoutes} from './routes/traits.js'
import {routes as aggregateRoutes} from './routes/aggregates.js'
import {routes as allocationRoutes} from './routes/allocations.js'
import {routes as usageRoutes} from './routes/usages.js'
import {routes as candidateRoutes} from './routes/allocation-candidates.js'
import {routes as reshaperRoutes} from './routes/reshaper.js'
import {routes as placematRoutes} from './routes/placemat.js'
import {routes as topologyRoutes} from './routes/topology.js'
import {routes as placematCandidateRoutes} from './routes/placemat-candidates.js'
import {routes as claimRoutes} from './routes/claims.js'
import {routes as groupRoutes} from './routes/groups.js'
import {routes as hostRoutes} from './routes/hosts.js'
import {routes as hostDescriptionRoutes} from './routes/host-description.js'
import {routes as aggregateNameRoutes} from './routes/aggregate-names.js'
import {observabilityRoutes, observe} from './observability.js'
import {Policy} from './policy/policy.js'
import {ruleOfRoute} from './policy/defaults.js'
import {noauthCredentials, policyTarget} from './policy/credentials.js'

export const PLACEMENT_ROUTES: RouteDef[] = [
  ...rootRoutes,
  ...classRoutes,
  ...providerRoutes,
  ...inventoryRoutes,
  ...aggregateRoutes,
  ...allocationRoutes,
  ...candidateRoutes,
  ...traitRoutes,
  ...usageRoutes,
  ...reshaperRoutes,
]

/** placemat's extensions, under their own prefix. */
export const EXTENSION_ROUTES: RouteDef[] = [...placematRoutes, ...topologyRoutes, ...placematCandidateRoutes, ...claimRoutes, ...groupRoutes, ...hostRoutes, ...hostDescriptionRoutes, ...aggregateNameRoutes]

/** Every method Node's parser accepts (CONNECT aside): any a route lacks is a 405 with Allow, as in Placement. */
const ALL_METHODS = http.METHODS.filter((m) => m !== 'CONNECT')

/** What a route tells the request hook, which decides before the body is read. */
interface RouteConfig {
  placemat?: {def?: RouteDef; allow?: string}
}

/** Timeouts for slow or stalled clients; the defaults suit loopback and LAN clients. */
export const DEFAULT_TIMEOUTS = {headersMs: 30_000, requestMs: 120_000, keepAliveMs: 72_000}

const digest = (token: string) => createHash('sha256').update(token).digest()

/** Compares a presented token with the admin token's digest in constant time (digests have one length). */
const tokenMatches = (presented: string, adminDigest: Buffer): boolean => timingSafeEqual(digest(presented), adminDigest)

/** Sends Placement's error body (or webob's HTML page when the client prefers HTML). */
function sendError(
  req: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
  code: string | null,
  headers: Record<string, string> = {},
  versionKnown = true,
  title?: string,
) {
  const detail = detailText(status, message, req.method)
  const withCode = versionKnown && req.mv?.gte(23) ? (code ?? ErrorCode.DEFAULT) : null
  const extra = !versionKnown && status === 406 ? {max_version: maxVersionString(), min_version: minVersionString()} : {}
  for (const [k, v] of Object.entries(headers)) reply.header(k, v)
  reply.code(status)
  if (prefersHtml(req.headers.accept)) {
    reply.type('text/html; charset=UTF-8')
    return reply.send(`<html>\n <head>\n  <title>${status}</title>\n </head>\n <body>\n  <h1>${status}</h1>\n  ${escapeHtml(detail)}\n </body>\n</html>`)
  }
  reply.header('content-type', 'application/json')
  // A Buffer: fastify adds no charset to it, even where the onSend hook does not run (framework errors).
  return reply.send(Buffer.from(JSON.stringify(errorBody(status, detail, req.requestId, withCode as any, extra, title))))
}

function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false
  const a = accept.toLowerCase()
  return a.includes('text/html') && !a.includes('application/json') && !a.includes('*/*')
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** True when an Accept header admits application/json (webob's acceptable_offers). */
function acceptsJson(accept: string | undefined): boolean {
  if (!accept || accept.trim() === '') return true
  for (const range of accept.split(',')) {
    const [type, ...params] = range.trim().toLowerCase().split(';')
    let q = 1
    for (const p of params) {
      const [k, v] = p.trim().split('=')
      if (k === 'q') q = Number(v)
    }
    if (q <= 0) continue
    if (type === 'application/json' || type === 'application/*' || type === '*/*') return true
  }
  return false
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase()
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  if (options.auth === 'token' && !options.adminToken?.trim()) {
    throw new Error('auth "token" needs a non-empty admin token')
  }
  const adminDigest = options.auth === 'token' ? digest(options.adminToken!) : null
  const policy = options.policy ?? Policy.load()
  const timeouts = {...DEFAULT_TIMEOUTS, ...options.timeouts}
  const app = Fastify({
    logger: options.logger ?? false,
    // One access-log line per request (access-log.ts) instead of fastify's two.
    // Every log line of a request carries request_id: the x-openstack-request-id its client saw.
    logController: new LogController({disableRequestLogging: true, requestIdLogLabel: 'request_id'}),
    genReqId: () => `req-${randomUUID()}`,
    bodyLimit: options.bodyLimit ?? 16 * 1024 * 1024,
    exposeHeadRoutes: false,
    return503OnClosing: false,
    keepAliveTimeout: timeouts.keepAliveMs,
    // A URL is at most Node's 16 KiB header limit: let every path parameter reach its handler,
    // which answers as Placement does (404 for an unknown provider, 400 for a bad name).
    routerOptions: {ignoreDuplicateSlashes: false, maxParamLength: 16 * 1024},
    // Node checks request and header timeouts every connectionsCheckingInterval: keep it short.
    serverFactory: (handler) =>
      http.createServer(
        {
          requestTimeout: timeouts.requestMs,
          headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
          keepAliveTimeout: timeouts.keepAliveMs,
          connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
        },
        handler,
      ),
    // Requests fastify refuses before routing still get Placement's error body.
    frameworkErrors(err, req, reply) {
      req.requestId = req.id
      reply.header('x-openstack-request-id', req.requestId)
      const negotiated = negotiate(req.headers['openstack-api-version'])
      if (negotiated.ok) req.mv = negotiated.version
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendError(req, reply, 414, '', null, {}, negotiated.ok)
      return sendError(req, reply, 404, '', null, {}, negotiated.ok)
    },
    // Node's parser refuses some requests (a Content-Length that is not a number, a stalled
    // request past its timeout) before any hook runs.
    clientErrorHandler(err: NodeJS.ErrnoException, socket: import('node:net').Socket) {
      const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      const invalidLength = err.code === 'HPE_INVALID_CONTENT_LENGTH' || err.code === 'HPE_UNEXPECTED_CONTENT_LENGTH'
      const status = timedOut ? 408 : 400
      const detail = timedOut ? 'the request was not received in time' : invalidLength ? 'content-length header must be an integer' : 'Bad request'
      const body = JSON.stringify(errorBody(status, detailText(status, detail), `req-${randomUUID()}`, null))
      if (socket.writable) {
        socket.end(
          `HTTP/1.1 ${status} ${statusTitle(status)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        )
      } else socket.destroy()
    },
  })
  for (const method of ALL_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, {hasBody: true})
  }

  // Bodies are read raw; handlers parse and validate them so the errors read as Placement's.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', {parseAs: 'string'}, (_req, body, done) => done(null, body))

  app.decorateRequest('mv', null as unknown as Version)
  app.decorateRequest('requestId', '')
  app.decorateRequest('credentials', null)

  // Callback-style hooks: no promise per request. admit() either answers the request itself
  // (and returns false) or lets it through.
  const admit = (req: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean> => {
    req.requestId = req.id
    reply.header('x-openstack-request-id', req.requestId)

    // CORS (only when configured): preflights are answered here, before auth and routing.
    const origin = req.headers.origin
    if (options.cors && typeof origin === 'string') {
      const allowed = options.cors.origins.includes(origin) || options.cors.origins.includes('*')
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
        reply.header('openstack-api-version', `placement ${MIN_VERSION[0]}.${MIN_VERSION[1]}`)
        reply.header('vary', 'openstack-api-version')
        if (allowed) {
          reply.header('access-control-allow-origin', origin)
          reply.header('access-control-allow-methods', String(req.headers['access-control-request-method']))
          const wanted = String(req.headers['access-control-request-headers'] ?? '')
            .split(',')
            .map((h) => h.trim().toLowerCase())
            .filter(Boolean)
          const ok = wanted.filter((h) => options.cors!.allowHeaders.map((x) => x.toLowerCase()).includes(h))
          if (ok.length) reply.header('access-control-allow-headers', ok.join(','))
          reply.header('vary', 'Origin')
        }
        reply.code(200).send()
        return false
      }
      if (allowed) {
        reply.header('access-control-allow-origin', origin)
        reply.header('vary', 'Origin')
      }
    }

    const negotiated = negotiate(req.headers['openstack-api-version'])
    if (!negotiated.ok) {
      req.mv = new Version(MIN_VERSION[0], MIN_VERSION[1])
      sendError(req, reply, negotiated.status, negotiated.detail, null, {}, false)
      return false
    }
    req.mv = negotiated.version
    reply.header('openstack-api-version', `placement ${req.mv}`)
    reply.header('vary', 'openstack-api-version')

    const route = (req.routeOptions.config as RouteConfig | undefined)?.placemat
    if (!route?.def?.public) {
      const token = req.headers['x-auth-token']
      const tokenStr = typeof token === 'string' ? token : undefined
      if (options.auth === 'noauth2') {
        if (tokenStr === undefined) {
          sendError(req, reply, 401, 'Authentication required', null)
          return false
        }
        req.credentials = noauthCredentials(tokenStr, req.headers)
      } else if (options.auth === 'token') {
        if (tokenStr === undefined || !tokenMatches(tokenStr, adminDigest!)) {
          sendError(req, reply, 401, 'Authentication required', null)
          return false
        }
        req.credentials = policy.localAdmin
      } else if (options.auth === 'keystone') {
        const keystone = options.keystone!
        const unauthorized = () => {
          sendError(req, reply, 401, 'Authentication required', null, {'www-authenticate': keystone.wwwAuthenticate})
          return false
        }
        if (!tokenStr) return unauthorized()
        const service = req.headers['x-service-token']
        return keystone.validate(tokenStr, typeof service === 'string' ? service : undefined).then(
          (creds) => {
            if (!creds) return unauthorized()
            req.credentials = creds
            return admitToRoute(req, reply, route?.def)
          },
          (err: Error) => {
            req.log.error(err)
            sendError(req, reply, 503, 'The identity service (Keystone) cannot be reached to validate the token.', null)
            return false
          },
        )
      }
    }
    return admitToRoute(req, reply, route?.def)
  }

  /** The checks after authentication: the URL, the content type, and the route's own refusals. */
  const admitToRoute = (req: FastifyRequest, reply: FastifyReply, def: RouteDef | undefined): boolean => {
    if (req.url.includes('%00') || req.url.includes('\0')) {
      sendError(req, reply, 400, 'NUL characters are not allowed in the URL', null)
      return false
    }
    const clen = req.headers['content-length']
    if (clen !== undefined && Number(clen) > 0 && !req.headers['content-type']) {
      sendError(req, reply, 400, 'content-type header required when content-length > 0', null)
      return false
    }
    if (def) {
      // Decided before the body is read: a caller who may not use a route never sends it a byte.
      const refusal = routeRefusal(def, req, policy)
      if (refusal) {
        sendError(req, reply, refusal.status, refusal.detail, refusal.code)
        return false
      }
    }
    return true
  }
  app.addHook('onRequest', (req, reply, done) => {
    const admitted = admit(req, reply)
    if (admitted === true) done()
    else if (admitted !== false) void admitted.then((pass) => pass && done())
  })

  // Placement sends a bare application/json content type; fastify would add a charset.
  app.addHook('onSend', (_req, reply, payload, done) => {
    const type = reply.getHeader('content-type')
    if (typeof type === 'string' && type !== 'application/json' && type.startsWith('application/json')) reply.header('content-type', 'application/json')
    done(null, payload)
  })

  app.setErrorHandler((err, req, reply) => {
    const pe = toPlacementError(err)
    if (pe) return sendError(req, reply, pe.status, pe.detail, pe.code, pe.headers, true, pe.title)
    req.log.error(err)
    return sendError(req, reply, 500, 'An unexpected error occurred.', null)
  })

  app.setNotFoundHandler((req, reply) => sendError(req, reply, 404, '', null))

  observe(app, options)
  registerRoutes(app, [...PLACEMENT_ROUTES, ...EXTENSION_ROUTES, ...observabilityRoutes(options)], options)
  return app
}

/**
 * Why a request may not reach its route, in Placement's order of checks but with the policy
 * before the content type: version (404), policy (403), media type (415), Accept (406).
 */
function routeRefusal(def: RouteDef, req: FastifyRequest, policy: Policy): PlacementError | null {
  if (def.minVersion !== undefined && req.mv.lt(def.minVersion)) return new PlacementError(404, '')
  if (!def.public && req.credentials) {
    const rule = ruleOfRoute(def.method, def.url)
    if (!policy.authorize(rule, req.credentials, policyTarget(def, req))) return new PlacementError(403, `Policy does not allow ${rule} to be performed.`)
  }
  if (def.body && mediaType(req.headers['content-type']) !== 'application/json') {
    const given = mediaType(req.headers['content-type']) || 'None'
    return new PlacementError(415, `The media type ${given} is not supported, use application/json`)
  }
  if (def.method === 'GET' && !def.anyAccept && !acceptsJson(req.headers.accept)) {
    return new PlacementError(406, 'Only application/json is provided')
  }
  return null
}

/** Registers routes and, for each path, a 405 answer (with Allow) for every other method. */
function registerRoutes(app: FastifyInstance, defs: RouteDef[], options: AppOptions): void {
  const byPath = new Map<string, RouteDef[]>()
  for (const def of defs) {
    const list = byPath.get(def.url) ?? []
    list.push(def)
    byPath.set(def.url, list)
  }
  for (const [url, list] of byPath) {
    for (const def of list) {
      app.route({
        method: def.method,
        url,
        config: {placemat: {def}} satisfies RouteConfig,
        ...(def.bodyLimit ? {bodyLimit: def.bodyLimit} : {}),
        handler: async (req, reply) => {
          const ctx: Ctx = {req, reply, mv: req.mv, store: options.store, options, params: req.params as Record<string, string>}
          const result = await def.handler(ctx)
          if (reply.sent) return reply
          if (result === undefined) return reply.send()
          reply.header('content-type', 'application/json')
          if (result instanceof JsonStream) return reply.send(Readable.from(result.pieces(), {objectMode: false}))
          return reply.send(result instanceof JsonText ? result.text : placementJson(result))
        },
      })
    }
    const allow = list.map((d) => d.method).join(', ')
    app.route({
      method: ALL_METHODS.filter((m) => !list.some((d) => d.method === m)),
      url,
      config: {placemat: {allow}} satisfies RouteConfig,
      handler: async (req, reply) =>
        sendError(req, reply, 405, 'The method specified is not allowed for this resource.', null, {allow}),
    })
  }
}

export const VERSION_RANGE = {min: MIN_VERSION, max: MAX_VERSION}
