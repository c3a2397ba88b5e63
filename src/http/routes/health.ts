/** GET /placemat/v1/health: for a load balancer or an orchestrator's probe; served without a token. */
import {PlacementError} from '../../core/errors.js'
import type {RouteDef} from '../context.js'
import {PLACEMAT_PREFIX} from './placemat.js'

/** How long the database may take to answer select 1 before the daemon is reported unhealthy. */
export const HEALTH_TIMEOUT_MS = 2000

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/health`,
    public: true,
    anyAccept: true,
    async handler(ctx) {
      try {
        await ctx.store.ping(HEALTH_TIMEOUT_MS)
      } catch (err) {
        throw new PlacementError(503, `database unreachable: ${(err as Error).message}`)
      }
      return {status: 'ok', database: 'ok'}
    },
  },
]
