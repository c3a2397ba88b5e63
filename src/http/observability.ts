/**
 * What an operator watches: one access-log line per request, Prometheus metrics, and a
 * health answer for a load balancer. (Stub: filled in below.)
 */
import type {FastifyInstance} from 'fastify'
import type {AppOptions, RouteDef} from './context.js'

/** Hooks that log and count every request; registered before the routes. */
export function observe(_app: FastifyInstance, _options: AppOptions): void {}

/** GET /metrics (admin-only unless metricsPublic) and GET /placemat/v1/health (public). */
export function observabilityRoutes(_options: AppOptions): RouteDef[] {
  return []
}
