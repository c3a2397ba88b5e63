/** GET /placemat/v1/health: for a load balancer or an orchestrator's probe; served without a token. */
import {PlacementError, SCHEMA_NOT_SERVED, STOPPING} from '../../core/errors.js'
import {DatabaseUnavailableError} from '../../store/database-faults.js'
import {RELEASE} from '../../store/release.js'
import {migrations} from '../../store/schema.js'
import type {RouteDef} from '../context.js'
import {PLACEMAT_PREFIX} from './placemat.js'

/** How long the database may take to answer before the daemon is reported unhealthy. */
export const HEALTH_TIMEOUT_MS = 2000

/** The newest schema migration this daemon knows: which release it is, for `placemat upgrade check`. */
const SCHEMA = Object.keys(migrations).sort().at(-1)!

/**
 * 200 while the daemon can serve ("ok", or "catching-up" while it applies or loads what other
 * nodes committed), with where it stands in the change journal; 503, in Placement's error
 * format, while it is starting, or its database is unavailable, read-only, out of space, too
 * slow, or (SQLite) no longer the file it opened, or when a newer release's contract moved the
 * database past this release (judged at the node's heartbeat, not per request). The answer names
 * no address or credential: the caller is not authenticated. `schema` is the newest migration
 * the daemon knows, `release` its placemat release.
 */
export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/health`,
    public: true,
    anyAccept: true,
    async handler(ctx) {
      if (ctx.options.service?.stopping) throw stopping()
      const refusal = ctx.store.schemaRefusal
      if (refusal) throw schemaNotServed(refusal)
      const h = await ctx.store.health(HEALTH_TIMEOUT_MS)
      const journal = {position: h.journal.position, head: h.journal.head, lag: Math.max(0, h.journal.head - h.journal.position)}
      if (h.status === 'ok' || h.status === 'catching-up')
        return {status: h.status, database: 'ok', journal, schema: SCHEMA, release: RELEASE}
      // Placement's error format, as every 503 of placemat's: the title and detail say which.
      const e = new DatabaseUnavailableError(h.status)
      throw new DatabaseUnavailableError(
        h.status,
        undefined,
        `database ${h.status}: ${e.detail} (journal position ${journal.position} of ${journal.head})`,
      )
    },
  },
]

/** A node draining before it exits: the balancer sends new requests elsewhere. */
const stopping = () =>
  new PlacementError(
    503,
    'stopping: this node is shutting down and finishing what it has in flight; send requests to another',
    STOPPING,
    {'retry-after': '1'},
    'Service Stopping',
  )

/** The database's schema is no longer one this release serves: the balancer takes the node out, an operator replaces it. */
const schemaNotServed = (refusal: string) =>
  new PlacementError(
    503,
    `${refusal}. Replace this node with that release; it keeps answering meanwhile.`,
    SCHEMA_NOT_SERVED,
    {'retry-after': '30'},
    'Schema Not Served',
  )
