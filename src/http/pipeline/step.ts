/**
 * The request pipeline's shape: each step looks at a request before its body is read and
 * either answers it itself (a refusal, a CORS preflight) and returns false, or lets it on to
 * the next step with true. A step that must wait (Keystone) returns a promise of that; the
 * others stay synchronous, so a request that waits for nothing makes no promise.
 */
import type {FastifyReply, FastifyRequest} from 'fastify'
import type {PlacementError} from '../../core/errors.js'
import type {RouteDef} from '../context.js'
import {sendError} from '../error-reply.js'

export type Step = (req: FastifyRequest, reply: FastifyReply) => boolean | Promise<boolean>

/** What a route tells the pipeline, which decides before the body is read. */
export interface RouteConfig {
  placemat?: {def?: RouteDef; allow?: string}
}

/** The route a request reached (undefined for a 405 of a known path, or no route at all). */
export const routeOf = (req: FastifyRequest): RouteDef | undefined => (req.routeOptions.config as RouteConfig | undefined)?.placemat?.def

/** Served without a token: the version document, health. A request no route serves (404, 405) is not public. */
export const isPublic = (req: FastifyRequest): boolean => routeOf(req)?.public === true

/** The steps one after the other: the first that answers the request ends it. */
export function compose(steps: Step[]): Step {
  const from = (i: number, req: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean> => {
    for (; i < steps.length; i++) {
      const passed = steps[i](req, reply)
      if (passed === false) return false
      if (passed !== true) {
        const next = i + 1
        return passed.then((ok) => ok && from(next, req, reply))
      }
    }
    return true
  }
  return (req, reply) => from(0, req, reply)
}

/** Answers with a PlacementError (its status, detail and code): the request ends there. */
export function refuse(req: FastifyRequest, reply: FastifyReply, e: PlacementError): false {
  sendError(req, reply, e.status, e.detail, e.code)
  return false
}

/** The 401 of every auth mode (with the header a mode adds, Keystone's WWW-Authenticate). */
export function unauthenticated(req: FastifyRequest, reply: FastifyReply, headers: Record<string, string> = {}): false {
  sendError(req, reply, 401, 'Authentication required', null, headers)
  return false
}

/** `Authorization: Bearer <token>` (the scheme in any case, RFC 7235), as Prometheus' scrape settings send it. */
const BEARER = /^bearer +(\S.*)$/i

/**
 * The token a request presents (x-auth-token), when it presents one header of it. A route that
 * takes a bearer token (GET /metrics) reads `Authorization: Bearer <token>` too when there is no
 * x-auth-token; an Authorization header of another scheme presents no token.
 */
export function presentedToken(req: FastifyRequest): string | undefined {
  const token = req.headers['x-auth-token']
  if (token !== undefined || routeOf(req)?.bearer !== true) return typeof token === 'string' ? token : undefined
  return BEARER.exec(req.headers.authorization ?? '')?.[1]
}
