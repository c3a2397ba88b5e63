/**
 * Prometheus metrics of one app: requests and their latency by route pattern, claims and
 * conflicts, write transactions, and (from the State's rollups, core/rollups.ts) capacity and usage per
 * resource class and per rack, row and room. The process's own metrics (CPU, memory, event
 * loop, GC) live in one registry per process, started with the first app: their samplers are
 * per process, and several apps in one process would otherwise start one each.
 */
import {rollupsOf} from '../core/rollups.js'
import {headroomTable, releaseTable, type HeadroomTable} from '../core/headroom/headroom.js'
import {hostDomains} from '../core/topology.js'
import type {FlavorCatalog} from './flavor-catalog.js'
import type {FastifyInstance} from 'fastify'
import {Counter, Gauge, Histogram, Registry, collectDefaultMetrics} from 'prom-client'
import type {State} from '../core/state/state.js'
import type {Store, StoreObserver} from '../store/store.js'
import {answeredByServer, describeCause} from '../store/database-faults.js'
import {PLACEMAT_PREFIX} from './routes/placemat.js'

/** The route label of a request that matched no route. */
export const UNMATCHED_ROUTE = 'unmatched'

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Successful allocation writes: [method, route pattern, statuses that count]. */
const CLAIM_ROUTES: Array<[string, string, (status: number) => boolean]> = [
  ['PUT', '/allocations/:consumer_uuid', (s) => s === 204],
  ['POST', '/allocations', (s) => s === 204],
  ['POST', `${PLACEMAT_PREFIX}/claims`, (s) => s >= 200 && s < 300],
]

export class Metrics {
  readonly registry = new Registry()
  private readonly processWide = processRegistry()

  readonly requests = new Counter({
    name: 'placemat_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  })

  readonly latency = new Histogram({
    name: 'placemat_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer sent, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  })

  readonly claims = new Counter({
    name: 'placemat_claims_total',
    help: 'Successful allocation writes (PUT /allocations/{consumer_uuid}, POST /allocations, POST /placemat/v1/claims), by route.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  })

  readonly conflicts = new Counter({
    name: 'placemat_conflicts_total',
    help: 'Requests answered 409 Conflict (generation conflicts, capacity short, affinity refused), by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    registers: [this.registry],
  })

  readonly writes = new Histogram({
    name: 'placemat_store_write_duration_seconds',
    help: 'Write transactions: time from their turn to COMMIT (outcome commit) or ROLLBACK (outcome rollback).',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  })

  readonly capacity = new Gauge({
    name: 'placemat_capacity',
    help: 'Capacity per resource class as Placement counts it, (total - reserved) * allocation_ratio, summed over providers.',
    labelNames: ['resource_class'] as const,
    registers: [this.registry],
  })

  readonly usage = new Gauge({
    name: 'placemat_usage',
    help: 'Amount allocated per resource class, summed over providers.',
    labelNames: ['resource_class'] as const,
    registers: [this.registry],
  })

  readonly topologyCapacity = new Gauge({
    name: 'placemat_topology_capacity',
    help: 'Capacity per resource class of the hosts in each rack, row and room.',
    labelNames: ['level', 'name', 'resource_class'] as const,
    registers: [this.registry],
  })

  readonly topologyUsage = new Gauge({
    name: 'placemat_topology_usage',
    help: 'Amount allocated per resource class on the hosts in each rack, row and room.',
    labelNames: ['level', 'name', 'resource_class'] as const,
    registers: [this.registry],
  })

  /** placemat_flavor_fit and placemat_fragmentation_loss as of the last scrape (flavorGauges). */
  private flavorText = flavorGauges(null)

  readonly stranded = new Gauge({
    name: 'placemat_stranded',
    help: 'Free capacity per resource class on enabled hosts where no flavor of the catalog fits, per rack, row, room and the cloud.',
    labelNames: ['class', 'level', 'domain'] as const,
    registers: [this.registry],
  })

  readonly providers = new Gauge({
    name: 'placemat_resource_providers',
    help: 'Resource providers.',
    registers: [this.registry],
  })

  readonly consumers = new Gauge({
    name: 'placemat_consumers',
    help: 'Consumers holding allocations.',
    registers: [this.registry],
  })

  readonly databaseUp = new Gauge({
    name: 'placemat_database_up',
    help: 'Whether the database answered the health question at the last scrape (1) or not (0).',
    registers: [this.registry],
  })

  readonly databaseErrors = new Counter({
    name: 'placemat_database_errors_total',
    help: 'Database calls that failed for a reason of the database, by kind (unavailable, read-only, out-of-space, timeout, replaced).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  })

  readonly databaseReconnects = new Counter({
    name: 'placemat_database_reconnects_total',
    help: 'Connections opened to the database after one was lost.',
    registers: [this.registry],
  })

  readonly databaseNodeChanges = new Counter({
    name: 'placemat_database_node_changes_total',
    help: 'Times new database connections reached another MariaDB node than the pooled ones (a balancer failed over or back); the pooled ones are closed and opened again on the new node.',
    registers: [this.registry],
  })

  readonly commitsUnknown = new Counter({
    name: 'placemat_database_commit_unknown_total',
    help: 'Writes whose connection was lost during COMMIT (answered 503; the State follows whatever the database kept).',
    registers: [this.registry],
  })

  readonly commitsFound = new Counter({
    name: 'placemat_database_commit_found_total',
    help: 'Of those, what became of each: kept (answered as committed), not kept (run again), or unknown (answered 503, may or may not be kept).',
    labelNames: ['kept'] as const,
    registers: [this.registry],
  })

  readonly writesRetried = new Counter({
    name: 'placemat_writes_retried_total',
    help: 'Writes that ran again: tried in one round trip (PostgreSQL), another process had committed first (moved) or the write did not fit (too-big); on Galera, another node won the race at COMMIT (contended).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  })

  readonly journalPosition = new Gauge({
    name: 'placemat_journal_position',
    help: "The change journal position this node's State reflects.",
    registers: [this.registry],
  })

  readonly journalHead = new Gauge({
    name: 'placemat_journal_head',
    help: 'The newest change journal position this node has seen in the database.',
    registers: [this.registry],
  })

  readonly journalLag = new Gauge({
    name: 'placemat_journal_lag',
    help: 'Transactions committed by other processes that this node has seen but not yet applied (head - position).',
    registers: [this.registry],
  })

  readonly changesApplied = new Counter({
    name: 'placemat_journal_changes_applied_total',
    help: "Changed rows (providers, consumers, classes, traits, racks/rows/rooms, groups) applied from other processes' commits.",
    registers: [this.registry],
  })

  readonly catchUps = new Counter({
    name: 'placemat_journal_catchups_total',
    help: 'Times this node applied other processes\' commits from the journal: from their recorded rows (from="images", PostgreSQL) or by reading the rows their keys name (from="rows").',
    labelNames: ['from'] as const,
    registers: [this.registry],
  })

  readonly reloads = new Counter({
    name: 'placemat_state_reloads_total',
    help: "Times this node loaded the whole State again after start (behind the journal's floor, or a change too large to journal).",
    registers: [this.registry],
  })

  readonly schemaServed = new Gauge({
    name: 'placemat_schema_served',
    help: "Whether this release serves the database's schema (1), or a newer release's contract moved it past this one (0), as judged at the node's last heartbeat.",
    registers: [this.registry],
  })

  /** Counts an answered request (route: the matched pattern, or UNMATCHED_ROUTE). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = {method, route, status: String(status)}
    this.requests.inc(labels)
    this.latency.observe(labels, seconds)
    if (status === 409) this.conflicts.inc({method, route})
    for (const [m, r, counts] of CLAIM_ROUTES) {
      if (m === method && r === route && counts(status)) this.claims.inc({route})
    }
  }

  /** `flavors`: the daemon's catalog, whose headroom the flavor gauges show (none: no such gauges). */
  constructor(private readonly flavors?: FlavorCatalog) {
    // Both series from the start, at zero, so a rate can be taken before the first retry.
    for (const reason of ['moved', 'too-big']) this.writesRetried.inc({reason}, 0)
    for (const from of ['images', 'rows']) this.catchUps.inc({from}, 0)
  }

  observeWrite(seconds: number, committed: boolean): void {
    this.writes.observe({outcome: committed ? 'commit' : 'rollback'}, seconds)
  }

  /**
   * Sets the capacity and usage gauges from the State as it is now: from its rollups, which
   * follow its changes, so a scrape costs what changed since the last one, not the cloud.
   */
  observeState(s: State): void {
    const cloud = rollupsOf(s).cloudSums()
    this.capacity.reset()
    this.usage.reset()
    for (const [rc, n] of cloud.capacity) this.capacity.set({resource_class: rc}, n)
    for (const [rc, n] of cloud.used) this.usage.set({resource_class: rc}, n)
    this.topologyCapacity.reset()
    this.topologyUsage.reset()
    for (const v of rollupsOf(s).topologySums()) {
      for (const [rc, n] of v.capacity) this.topologyCapacity.set({level: v.level, name: v.name, resource_class: rc}, n)
      for (const [rc, n] of v.used) this.topologyUsage.set({level: v.level, name: v.name, resource_class: rc}, n)
    }
    this.providers.set(cloud.providers)
    this.consumers.set(cloud.holding)
    this.observeHeadroom(s)
  }

  /** The flavor gauges, worked out from the State as it is now (no call per provider or flavor). */
  private observeHeadroom(s: State): void {
    const flavors = this.flavors?.flavors
    if (!flavors?.length) return
    const t = headroomTable(s, flavors, {levels: ['rack', 'row', 'room', 'cloud']})
    this.flavorText = flavorGauges(t)
    releaseTable(t)
    this.stranded.reset()
    for (const st of t.stranded) {
      const host = s.providerByName.get(st.host)
      const where = hostDomains(s, host)
      for (const [level, domain] of [...Object.entries(where), ['cloud', 'cloud']] as Array<[string, string | null]>) {
        if (domain === null) continue
        this.stranded.inc({class: st.class, level, domain}, st.amount)
      }
    }
  }

  /** Sets the journal and database gauges from the store as it is now. */
  async observeStore(store: Store): Promise<void> {
    const health = await store.health(1000)
    this.databaseUp.set(health.status === 'ok' || health.status === 'catching-up' ? 1 : 0)
    this.schemaServed.set(store.schemaRefusal ? 0 : 1)
    this.journalPosition.set(health.journal.position)
    this.journalHead.set(health.journal.head)
    this.journalLag.set(Math.max(0, health.journal.head - health.journal.position))
  }

  /** The exposition text: this app's metrics, then the process's (served during an outage too, from the State as it is). */
  async scrape(store: Store): Promise<string> {
    // Never waits on a load or an outage: the gauges keep their last values while the State is
    // being loaded, and come from the State as it is when the database is away.
    if (!store.loadingNow) this.observeState(await store.refresh().catch(() => store.state))
    await this.observeStore(store)
    return `${await this.registry.metrics()}\n${this.flavorText}\n\n${await this.processWide.metrics()}`
  }

  get contentType(): string {
    return this.registry.contentType
  }
}

/** The flavor gauges: a series per flavor and rack, row, room and the cloud, each a column of the headroom. */
const FLAVOR_GAUGES = [
  {
    name: 'placemat_flavor_fit',
    help: 'How many more instances of each flavor of the catalog fit (one flavor at a time), per rack, row, room and the cloud (daemon start --flavors).',
    column: 'fit',
  },
  {
    name: 'placemat_fragmentation_loss',
    help: 'Instances of each flavor lost to host boundaries: the fit if the domain were one host, less the fit.',
    column: 'fragmentation_loss',
  },
] as const

/**
 * The flavor gauges as exposition text, as prom-client writes a gauge (labels flavor, level,
 * domain), written from the headroom's columns: 10,000 hosts make ~20,000 series, which cost more
 * set and formatted one by one than the headroom itself. No series without a table.
 */
function flavorGauges(t: HeadroomTable | null): string {
  return FLAVOR_GAUGES.map(({name, help, column}) => {
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`]
    if (t) {
      const D = t.levels.length
      const tails = t.levels.map((level, d) => `",level="${labelValue(level)}",domain="${labelValue(t.names[d])}"} `)
      t.flavors.forEach((flavor, f) => {
        const head = `${name}{flavor="${labelValue(flavor)}`
        for (let d = 0, k = f * D; d < D; d++, k++) lines.push(head + tails[d] + sampleValue(t[column][k]))
      })
    }
    return lines.join('\n')
  }).join('\n\n')
}

/** A label value escaped as Prometheus' text format wants it (backslash, newline, double quote). */
const labelValue = (x: string): string => x.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')

/** A sample value as prom-client writes it. */
const sampleValue = (x: number): string => (Number.isNaN(x) ? 'Nan' : x === Infinity ? '+Inf' : x === -Infinity ? '-Inf' : `${x}`)

let processMetrics: Registry | null = null

/** CPU, memory, file descriptors, event loop lag and GC of this process (one registry per process). */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry()
    // The event loop's lag is sampled every 100 ms, not prom-client's 10: each sample wakes the
    // process, and 100 wake-ups a second were most of an idle daemon's CPU (8 ms a second here),
    // paid by every node of a cluster whatever its load. A stall of 100 ms or more is still seen.
    collectDefaultMetrics({register: processMetrics, eventLoopMonitoringPrecision: 100})
  }
  return processMetrics
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

/**
 * Gives the app its Metrics (app.metrics), counts every answered request, and times the
 * store's write transactions while the app is open.
 */
export function countRequests(app: FastifyInstance, store: Store, flavors?: FlavorCatalog): Metrics {
  const metrics = new Metrics(flavors)
  app.decorate('metrics', metrics)
  app.addHook('onResponse', (req, reply, done) => {
    metrics.observeRequest(req.method, req.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  const observer = (seconds: number, ok: boolean) => metrics.observeWrite(seconds, ok)
  store.onWrite = observer
  const events = watchStore(app, metrics)
  store.observer = events
  app.addHook('onClose', (_app, done) => {
    if (store.onWrite === observer) store.onWrite = null
    if (store.observer === events) store.observer = null
    done()
  })
  return metrics
}

/** Why a lost COMMIT stays unresolved, in the log's words. */
const UNRESOLVED = {
  'no-answer': 'the database did not answer in time to be asked',
  'not-proven': 'not found on the node asked, and another Galera node may yet commit it',
  'too-large': 'the write was too large to record the rows it is looked for by',
} as const

/**
 * What the store tells of the database and of other processes' commits, counted and logged: a
 * full reload and a write whose COMMIT outcome is unknown always, a fault when the database goes
 * from answering to not, a reconnect when it answers again.
 */
function watchStore(app: FastifyInstance, metrics: Metrics): StoreObserver {
  let down: string | null = null
  // An episode: from the first fault after the database answered to its answering again.
  let faults = 0
  let since = 0
  return {
    caughtUp(keys, _seconds, from) {
      metrics.changesApplied.inc(keys)
      metrics.catchUps.inc({from})
    },
    reloaded(reason, seconds) {
      metrics.reloads.inc()
      app.log.warn({event: 'state_reloaded', reason, seconds: Math.round(seconds * 1000) / 1000}, `loaded the whole State again: ${reason}`)
    },
    fault(kind, err) {
      metrics.databaseErrors.inc({kind})
      if (down === null) [faults, since] = [0, Date.now()]
      faults++
      if (down !== kind) {
        const line = {event: 'database_fault', kind, cause: describeCause(err)}
        // A replaced file loses writes if anyone relies on it: an operator must act.
        if (kind === 'replaced') app.log.error(line, 'the database file was deleted or replaced: writes are refused')
        else app.log.warn(line, `database ${kind}`)
      }
      down = kind
    },
    reconnected() {
      metrics.databaseReconnects.inc()
      const seconds = down === null ? 0 : Math.round((Date.now() - since) / 100) / 10
      app.log.info(
        {event: 'database_reconnected', faults: down === null ? 0 : faults, seconds},
        down === null ? 'database answering again' : `database answering again after ${faults} fault(s) in ${seconds} s`,
      )
      down = null
    },
    nodeChanged(from, to) {
      metrics.databaseNodeChanges.inc()
      app.log.warn(
        {event: 'database_node_changed', from, to},
        `new database connections reach ${to}, not ${from}: the connections on ${from} are closed as they come back`,
      )
    },
    nodesSpread(nodes) {
      app.log.warn(
        {event: 'database_nodes_spread', nodes},
        `database connections reach ${nodes.length} nodes at once (${nodes.join(', ')}): each daemon then writes from several nodes and loses races at certification; give the balancer one active server and the others as backups`,
      )
    },
    schemaJudged(refusal) {
      metrics.schemaServed.set(refusal ? 0 : 1)
      if (refusal) app.log.error({event: 'schema_not_served', refusal}, `${refusal}: health answers 503`)
      else app.log.info({event: 'schema_served'}, "the database's schema is served by this release again")
    },
    writeRetried(why) {
      metrics.writesRetried.inc({reason: why})
    },
    commitUnknown(err) {
      metrics.commitsUnknown.inc()
      app.log.error(
        {event: 'commit_outcome_unknown', cause: describeCause(err)},
        `${answeredByServer(err) ? 'the database failed COMMIT without saying whether it kept it' : 'the connection was lost during COMMIT'}: the write is looked for once the database answers (else answered 503: it may or may not be kept)`,
      )
    },
    commitUnresolved(why) {
      metrics.commitsFound.inc({kept: 'unknown'})
      app.log.warn(
        {event: 'commit_outcome_unresolved', why},
        `whether the write whose COMMIT failed was kept is not known (${UNRESOLVED[why]}): answered 503, it may or may not be kept; the State follows what the database holds`,
      )
    },
    commitFound(kept) {
      metrics.commitsFound.inc({kept: String(kept)})
      app.log.warn(
        {event: 'commit_outcome_found', kept},
        kept
          ? 'the write whose COMMIT lost its connection was kept: answered as committed'
          : 'the write whose COMMIT lost its connection was not kept: it runs again',
      )
    },
  }
}
