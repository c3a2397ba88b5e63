/**
 * What an operator watches: one access-log line per request, Prometheus metrics, and a
 * health answer for a load balancer.
 */
import type {FastifyInstance} from 'fastify'
import {accessLog} from './access-log.js'
import type {AppOptions, RouteDef} from './context.js'
import {countRequests} from './metrics.js'
import {routes as healthRoutes} from './routes/health.js'
import {routes as metricsRoutes} from './routes/metrics.js'

/** Hooks that log and count every request; registered before the routes. */
export function observe(app: FastifyInstance, options: AppOptions): void {
  if (options.logger) accessLog(app, options.edge)
  countRequests(app, options.store, options.flavors)
}

/** GET /metrics (admin-only unless metricsPublic) and GET /placemat/v1/health (public). */
export function observabilityRoutes(options: AppOptions): RouteDef[] {
  return [...metricsRoutes(options), ...healthRoutes]
}
