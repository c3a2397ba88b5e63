/**
 * GET /metrics (and GET /placemat/v1/metrics): Prometheus' text exposition. Admin only, unless
 * the daemon runs with --metrics-public; the token as X-Auth-Token or as `Authorization: Bearer`
 * (what Prometheus' `authorization:` scrape setting sends).
 */
import type {AppOptions, Ctx, RouteDef} from '../context.js'
import {PLACEMAT_PREFIX} from './placemat.js'

async function scrape(ctx: Ctx): Promise<undefined> {
  const metrics = ctx.req.server.metrics
  const text = await metrics.scrape(ctx.store)
  ctx.reply.header('content-type', metrics.contentType)
  ctx.reply.send(text)
  return undefined
}

export function routes(options: AppOptions): RouteDef[] {
  const common = {method: 'GET', anyAccept: true, public: options.metricsPublic === true, bearer: true, handler: scrape} as const
  return [
    {...common, url: '/metrics'},
    {...common, url: `${PLACEMAT_PREFIX}/metrics`},
  ]
}
