import {Readable} from 'node:stream'
import {randomUUID} from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import Fastify, {LogController, type FastifyInstance, type FastifyReply, type FastifyRequest} from 'fastify'
import Router from 'find-my-way'
import {JsonText, placementJson, type AppOptions, type Ctx, type RouteDef} from './context.js'
import {JsonStream} from './json-stream.js'
import {detailText, errorBody, statusTitle, toPlacementError} from './errors.js'
import {sendError} from './error-reply.js'
import {MAX_VERSION, MIN_VERSION, type Version, negotiate} from './microversion.js'
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
import {routes as capacityRoutes} from './routes/capacity.js'
import {routes as makeRoomRoutes} from './routes/make-room.js'
import {routes as mapRoutes} from './routes/map.js'
import {routes as uiRoutes} from './routes/ui.js'
import {observabilityRoutes, observe} from './observability.js'
import {stripBasePath} from './edge.js'
import {Policy} from './policy/policy.js'
import {compose, routeOf, type RouteConfig, type Step} from './pipeline/step.js'
import {requestId} from './pipeline/request-id.js'
import {cors} from './pipeline/cors.js'
import {negotiateVersion, routeVersion} from './pipeline/microversion.js'
import {authToken} from './pipeline/auth-token.js'
import {authNoauth2} from './pipeline/auth-noauth2.js'
import {authKeystone} from './pipeline/auth-keystone.js'
import {admission} from './pipeline/admission.js'
import {authorize} from './pipeline/policy.js'
import {acceptable, mediaType} from './pipeline/content.js'
import {mark, P, PROFILING} from '../store/phase-profile.js'
import {traced} from './phase-trace.js'
import {candidateAnswers} from './candidate-answers.js'

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
export const EXTENSION_ROUTES: RouteDef[] = [
  ...placematRoutes,
  ...topologyRoutes,
  ...placematCandidateRoutes,
  ...claimRoutes,
  ...groupRoutes,
  ...hostRoutes,
  ...hostDescriptionRoutes,
  ...aggregateNameRoutes,
  ...makeRoomRoutes,
  ...mapRoutes,
  ...uiRoutes,
]

/**
 * How paths are matched, by fastify's router and by the one of paths alone (registerRoutes). A URL
 * is at most Node's 16 KiB header limit: every path parameter reaches its handler, which answers
 * as Placement does (404 for an unknown provider, 400 for a bad name).
 */
const ROUTER_OPTIONS = {ignoreDuplicateSlashes: false, maxParamLength: 16 * 1024}

/** Every method Node's parser accepts (CONNECT aside): any a route lacks is a 405 with Allow, as in Placement. */
const ALL_METHODS = http.METHODS.filter((m) => m !== 'CONNECT')

/** The oldest TLS a client may speak (1.0 and 1.1 are broken); reloads of the certificate keep it. */
export const TLS_MIN_VERSION = 'TLSv1.2'

/** Timeouts for slow or stalled clients; the defaults suit loopback and LAN clients. */
export const DEFAULT_TIMEOUTS = {headersMs: 30_000, requestMs: 120_000, keepAliveMs: 72_000}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  if (options.auth === 'token' && !options.adminToken?.trim()) {
    throw new Error('auth "token" needs a non-empty admin token')
  }
  const policy = options.policy ?? Policy.load()
  const timeouts = {...DEFAULT_TIMEOUTS, ...options.timeouts}
  const app = Fastify({
    logger: options.logger ?? false,
    // One access-log line per request (access-log.ts) instead of fastify's two.
    // Every log line of a request carries request_id: the x-openstack-request-id its client saw.
    logController: new LogController({disableRequestLogging: true, requestIdLogLabel: 'request_id'}),
    genReqId: () => `req-${randomUUID()}`,
    // A request's logger takes the daemon's level as it is now (fastify's default fixes each
    // route's at registration), so a reload's new level reaches every request.
    childLoggerFactory: (logger, bindings) => logger.child(bindings),
    bodyLimit: options.bodyLimit ?? 16 * 1024 * 1024,
    exposeHeadRoutes: false,
    // No route has a fastify schema (bodies are read raw and held to Placement's schemas,
    // jsonschema.ts): fastify's own compilers (ajv, fast-json-stringify) are never loaded, a
    // tenth of a daemon's start.
    schemaController: {compilersFactory: {buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler}},
    return503OnClosing: false,
    keepAliveTimeout: timeouts.keepAliveMs,
    routerOptions: ROUTER_OPTIONS,
    // The server is serverFactory's; this only makes fastify's own lines say https.
    ...(options.tls ? {https: {}} : {}),
    // Forwarding headers only from trusted proxies (edge.ts); without any, fastify reads none.
    ...(options.edge?.trust ? {trustProxy: options.edge.trust} : {}),
    // Published under a base path: requests under it are served as at the root (edge.ts).
    ...(options.edge?.basePath ? {rewriteUrl: (req: http.IncomingMessage) => stripBasePath(req.url ?? '/', options.edge!.basePath!)} : {}),
    // Node checks request and header timeouts every connectionsCheckingInterval: keep it short.
    serverFactory: (fastifyHandler) => {
      const handler = PROFILING ? traced(fastifyHandler) : fastifyHandler
      const serverOptions = {
        requestTimeout: timeouts.requestMs,
        headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
        keepAliveTimeout: timeouts.keepAliveMs,
        connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
      }
      const server = options.tls
        ? https.createServer({...serverOptions, cert: options.tls.cert, key: options.tls.key, minVersion: TLS_MIN_VERSION}, handler)
        : http.createServer(serverOptions, handler)
      // A client that half-closes after its request (HTTP/1.0-style clients, scripts, balancers'
      // checks) still reads: Node would abandon the request and end the connection at the
      // client's FIN, losing the answer to a write committed meanwhile. The connection now ends
      // after the last answer. (A property of Node's http.Server, not in its types.)
      ;(server as {httpAllowHalfOpen?: boolean}).httpAllowHalfOpen = true
      return server
    },
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
      const detail = timedOut
        ? 'the request was not received in time'
        : invalidLength
          ? 'content-length header must be an integer'
          : 'Bad request'
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

  // Every request goes through these steps, in this order, before its body is read (as
  // Placement's deploy() wraps its handler in an ordered tuple of middleware):
  //  - the request id first, so every answer, refusals included, carries it;
  //  - CORS next, so a preflight is answered before anything asks for a version or a token;
  //  - the microversion before authentication, so every refusal from here on is worded for
  //    the version asked (error codes from 1.23), and a bad version is refused even unauthenticated;
  //  - authentication (one mode: token, noauth2 or keystone; none when every request is
  //    trusted), which tells the policy who is asking; public routes skip it;
  //  - then the route's own checks, in Placement's order but with the policy before the content
  //    type: a request any route would refuse (NUL in the URL, a body without a content type),
  //    a route below its microversion (404), the policy (403), the body's media type (415), the
  //    Accept header (406).
  const pipeline = compose([
    requestId,
    ...(options.cors ? [cors(options.cors)] : []),
    negotiateVersion,
    ...authentication(options, policy),
    admission,
    routeVersion,
    authorize(policy),
    mediaType,
    acceptable,
  ])
  // A callback-style hook: no promise per request unless a step waits (Keystone).
  app.addHook('onRequest', (req, reply, done) => {
    const admitted = pipeline(req, reply)
    if (admitted === true) done()
    else if (admitted !== false) void admitted.then((pass) => pass && done())
  })

  // Placement sends a bare application/json content type; fastify would add a charset.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (PROFILING) mark(P.reply)
    const type = reply.getHeader('content-type')
    if (typeof type === 'string' && type !== 'application/json' && type.startsWith('application/json'))
      reply.header('content-type', 'application/json')
    done(null, payload)
  })

  app.setErrorHandler((err, req, reply) => {
    const pe = toPlacementError(err)
    if (pe) return sendError(req, reply, pe.status, pe.detail, pe.code, pe.headers, true, pe.title)
    req.log.error(err)
    return sendError(req, reply, 500, 'An unexpected error occurred.', null)
  })

  // A write answered: the candidates queries a scheduler keeps asking are worked out again while
  // the daemon waits for its next request (candidate-answers.ts).
  app.addHook('onResponse', (req, reply, done) => {
    if (req.method !== 'GET' && reply.statusCode < 300 && !routeOf(req)?.asks) candidateAnswers(options).afterWrite()
    done()
  })

  observe(app, options)
  const service = options.service
  if (service) {
    service.attach(app)
    options.store.othersServed = () => service.overlapped()
  }
  registerRoutes(app, [...PLACEMENT_ROUTES, ...EXTENSION_ROUTES, ...capacityRoutes(options), ...observabilityRoutes(options)], options)
  return app
}

/** The step that authenticates, for the auth mode (none when every request is trusted: the CLI's own file). */
function authentication(options: AppOptions, policy: Policy): Step[] {
  switch (options.auth) {
    case 'token':
      return [authToken(options.adminToken!, policy)]
    case 'noauth2':
      return [authNoauth2]
    case 'keystone':
      return [authKeystone(options.keystone!)]
    default:
      return []
  }
}

/** Stands in for fastify's schema compilers, which no route needs. */
function noSchemaCompiler(): never {
  throw new Error('placemat routes have no fastify schemas')
}

/**
 * Registers routes and, for each path, a 405 answer (with Allow) for every other method.
 *
 * Why two ways: find-my-way keeps a tree per method and compiles every route it is given, so a
 * 405 route per path for each of Node's 33 methods was most of building the app (a tenth of a
 * daemon's start). A 405 route is registered for the methods some route uses, where it must win
 * over a parametric route of the same method; any other method never matches a route, and its
 * 404 handler answers 405 for the paths `pathsOnly` knows, matched as its tree would have.
 */
function registerRoutes(app: FastifyInstance, defs: RouteDef[], options: AppOptions): void {
  const byPath = new Map<string, RouteDef[]>()
  for (const def of defs) {
    const list = byPath.get(def.url) ?? []
    list.push(def)
    byPath.set(def.url, list)
  }
  const used = ALL_METHODS.filter((m) => defs.some((d) => d.method === m))
  const pathsOnly = Router(ROUTER_OPTIONS)
  for (const [url, list] of byPath) {
    for (const def of list) {
      app.route({
        method: def.method,
        url,
        config: {placemat: {def}} satisfies RouteConfig,
        ...(def.bodyLimit ? {bodyLimit: def.bodyLimit} : {}),
        handler: async (req, reply) => {
          if (PROFILING) mark(P['http in'])
          const ctx: Ctx = {req, reply, mv: req.mv, store: options.store, options, params: req.params as Record<string, string>}
          const result = await def.handler(ctx)
          if (PROFILING) mark(P.settle)
          if (reply.sent) return reply
          if (result === undefined) return reply.send()
          reply.header('content-type', 'application/json')
          if (result instanceof JsonStream) return reply.send(Readable.from(result.pieces(), {objectMode: false}))
          return reply.send(result instanceof JsonText ? result.text : placementJson(result))
        },
      })
    }
    const allow = list.map((d) => d.method).join(', ')
    const notAllowed = used.filter((m) => !list.some((d) => d.method === m))
    if (notAllowed.length > 0) {
      app.route({
        method: notAllowed,
        url,
        config: {placemat: {allow}} satisfies RouteConfig,
        handler: async (req, reply) => methodNotAllowed(req, reply, allow),
      })
    }
    pathsOnly.on('GET', url, () => undefined, allow)
  }
  app.setNotFoundHandler((req, reply) => {
    const allow = used.includes(req.method) ? undefined : (pathsOnly.find('GET', req.raw.url ?? '/')?.store as string | undefined)
    return allow === undefined ? sendError(req, reply, 404, '', null) : methodNotAllowed(req, reply, allow)
  })
}

function methodNotAllowed(req: FastifyRequest, reply: FastifyReply, allow: string) {
  return sendError(req, reply, 405, 'The method specified is not allowed for this resource.', null, {allow})
}

export const VERSION_RANGE = {min: MIN_VERSION, max: MAX_VERSION}
