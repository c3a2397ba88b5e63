import {KeystoneValidator, type KeystoneSettings} from '../http/auth/keystone.js'
import {Policy, type PolicyOptions} from '../http/policy/policy.js'
import {FlavorCatalog} from '../http/flavor-catalog.js'
import type {FastifyInstance} from 'fastify'
import type https from 'node:https'
import {loggerOptions, type LogLevel} from '../http/access-log.js'
import {buildApp, TLS_MIN_VERSION} from '../http/app.js'
import type {AppOptions, AuthMode, CandidateOptions} from '../http/context.js'
import {describeTarget, type DatabaseTimeouts, type Durability} from '../store/backends.js'
import {databaseFault, describeCause} from '../store/database-faults.js'
import {Store} from '../store/store.js'
import {daemonFiles, ensureAdminToken} from './paths.js'
import {testPauseInTransaction, youngGenerationHint} from './node-flags.js'
import {ServiceState} from '../http/service-state.js'
import type {ServiceNotifier} from './service-notify.js'
import {trustOf, type EdgeSettings} from './edge-options.js'
import {readTlsFiles, type TlsPair} from './tls-files.js'
import {startHeartbeat} from './heartbeat.js'
import {LogBuffer} from './log-buffer.js'
import {logsAsText, textSink} from './log-text.js'
import {warmUp} from './warm-up.js'

export interface ServerOptions {
  db: string
  host: string
  port: number
  auth: AuthMode
  corsOrigins?: string[]
  corsAllowHeaders?: string[]
  candidates?: CandidateOptions
  /** The log's level: JSON lines on stdout, one per request at info (default silent: no log). */
  logLevel?: LogLevel
  /** Serve /metrics without a token. */
  metricsPublic?: boolean
  /** Rehearse a scheduler's requests once serving (warm-up.ts); off unless asked. */
  warmUp?: boolean
  /** Placement's policy: its file and oslo.policy's enforce_new_defaults and enforce_scope. */
  policy?: PolicyOptions
  /** A flavor file (osc's JSON or YAML): GET /placemat/v1/capacity and the flavor gauges count it. */
  flavors?: string
  /** full (default): every acknowledged write is on disk; normal: faster, a power loss may lose the last ones. */
  durability?: Durability
  /** Client timeouts, ms. */
  timeouts?: AppOptions['timeouts']
  /** auth 'keystone': the daemon's service credentials and where Keystone is. */
  keystone?: KeystoneSettings
  incompleteConsumer?: AppOptions['incompleteConsumer']
  /** Waiting for the database at start (ms; default: until it answers) and its timeouts. */
  database?: {waitMs?: number; timeouts?: Partial<DatabaseTimeouts>}
  /** systemd's notify socket: what the daemon waits for (STATUS=). */
  notifier?: ServiceNotifier
  /** Behind a balancer (trusted proxies, base path) and TLS (edge-options.ts). */
  edge?: EdgeSettings
  /** Called with the daemon's address once it listens, before its database has answered. */
  onListening?: (url: string) => void
  /** A line the operator sees outside the log (stderr by default; none where stderr is the log). */
  say?: (line: string) => void
}

/** The daemon cannot listen where it was told (the address taken, not this machine's, or a privileged port). */
export class ListenError extends Error {
  override name = 'ListenError'
}

const LISTEN_FAULTS: Record<string, string> = {
  EADDRINUSE: 'the address is in use (another daemon or program listens there)',
  EADDRNOTAVAIL: 'no interface of this machine has that address',
  EACCES: 'permission denied (a port below 1024 needs privileges)',
}

/** The listen failure `err` in one line, or `err` itself when it is not one. */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException)?.code
  if (!code || !(code in LISTEN_FAULTS)) return err
  return new ListenError(`cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}: ${LISTEN_FAULTS[code]}`)
}

const sayOnStderr = (line: string) => void process.stderr.write(`placemat: ${line}\n`)

/** How often an idle daemon asks whether other processes committed (and whether its database answers). */
const FOLLOW_EVERY_MS = 1000
/** How long the daemon has nothing to serve before its warm-up rehearsal starts. */
const WARM_UP_AFTER_QUIET_MS = 100

export interface RunningServer {
  app: FastifyInstance
  store: Store
  url: string
  /** Serving or stopping, and the requests in flight. */
  service: ServiceState
  policy: Policy
  /** The flavor catalog (--flavors), read again on a reload. */
  flavors?: FlavorCatalog
  /**
   * Reads --tls-cert and --tls-key again and serves them to new connections (those open keep
   * theirs): changed false when the files hold what is served (or the daemon serves plain HTTP).
   * Throws a TlsFilesError naming the file when the pair cannot be served, the old one kept.
   */
  reloadTls(): {changed: boolean}
  /** Stops listening, waits for every request in flight to be answered, then closes the store. */
  close(): Promise<void>
  /** Writes the log lines still buffered (before the process exits). */
  flushLog(): void
}

/** Opens the store and serves the Placement API on host:port (port 0 picks a free one). */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  // The token first: a daemon that can not trust it never opens the database.
  const adminToken = opts.auth === 'token' ? ensureAdminToken(opts.db) : undefined
  if (opts.auth === 'keystone' && !opts.keystone) throw new Error('auth keystone needs [keystone_authtoken] in a --config-file')
  // The certificate before the database too: a bad file stops the start, naming it.
  const tlsFiles = opts.edge?.tls
  let served: TlsPair | undefined = tlsFiles ? readTlsFiles(tlsFiles) : undefined
  const store = Store.create(opts.db, {
    backgroundCheckpoint: true,
    durability: opts.durability,
    beforeCommit: testPauseInTransaction(),
    timeouts: opts.database?.timeouts,
    // A clean stop leaves the State's image beside a SQLite file: the next start reads it and
    // the changes since, not every row.
    stateImage: daemonFiles(opts.db).state,
    saveStateImage: true,
  })
  const service = new ServiceState()
  const policy = Policy.load(opts.policy)
  // A flavor file that cannot be used stops the start, naming it.
  const flavors = opts.flavors ? new FlavorCatalog(opts.flavors) : undefined
  flavors?.load()
  // A person at a terminal reads text; a file, a pipe or journald gets pino's JSON lines.
  const log = new LogBuffer(logsAsText() ? textSink(process.stdout) : process.stdout)
  const app = await buildApp({
    service,
    store,
    auth: opts.auth,
    adminToken,
    cors: opts.corsOrigins?.length ? {origins: opts.corsOrigins, allowHeaders: opts.corsAllowHeaders ?? []} : undefined,
    candidates: opts.candidates,
    logger: loggerOptions(opts.logLevel ?? 'silent', log, true),
    metricsPublic: opts.metricsPublic,
    policy,
    keystone: opts.auth === 'keystone' ? new KeystoneValidator(opts.keystone!) : undefined,
    incompleteConsumer: opts.incompleteConsumer,
    timeouts: opts.timeouts,
    edge: opts.edge ? {trust: trustOf(opts.edge), basePath: opts.edge.basePath} : undefined,
    tls: served,
    flavors,
  })
  // Listening first: while the database is away the daemon answers, health saying it is starting.
  try {
    await app.listen({host: opts.host, port: opts.port})
  } catch (err) {
    await app.close().catch(() => undefined)
    await store.close().catch(() => undefined)
    log.flush()
    throw listenError(err, opts.host, opts.port)
  }
  const addr = app.server.address()
  const port = typeof addr === 'object' && addr ? addr.port : opts.port
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host
  const url = `${served ? 'https' : 'http'}://${host}:${port}`
  opts.onListening?.(url)
  // What the policy enforces depends on its generation when nothing says: the log says which.
  const {enforceNewDefaults, enforceScope} = policy.enforces
  app.log.info(
    {event: 'policy', defaults: opts.policy?.defaults ?? '15.0.0', enforce_new_defaults: enforceNewDefaults, enforce_scope: enforceScope},
    `policy: Placement ${opts.policy?.defaults ?? '15.0.0'}'s defaults, new defaults ${enforceNewDefaults ? '' : 'not '}enforced, scope ${enforceScope ? '' : 'not '}enforced`,
  )
  try {
    await store.start({
      waitMs: opts.database?.waitMs,
      onRetry: (err, ms) => {
        const line = `database ${describeTarget(opts.db)} not answering (${databaseFault(err)}: ${describeCause(err)}); trying again in ${(ms / 1000).toFixed(1)} s`
        app.log.warn({event: 'database_wait', cause: describeCause(err)}, line)
        ;(opts.say ?? sayOnStderr)(line)
        opts.notifier?.status(line)
      },
    })
  } catch (err) {
    await app.close()
    log.flush()
    throw err
  }
  const loaded = store.loaded
  if (loaded)
    app.log.info(
      {
        event: 'state_loaded',
        from: loaded.from,
        ms: Math.round(loaded.seconds * 1000),
        position: loaded.position,
        providers: store.state.providers.size,
      },
      `state loaded from ${loaded.from === 'image' ? 'the image of the last clean stop and the changes since' : 'the database'} in ${Math.round(loaded.seconds * 1000)} ms: ${store.state.providers.size} providers`,
    )
  const hint = youngGenerationHint(store.state.providers.size)
  if (hint) app.log.warn({event: 'young_generation'}, hint)
  // An idle daemon still follows the others (and notices its database leave and return).
  const follow = setInterval(() => void store.refresh().catch(() => undefined), FOLLOW_EVERY_MS)
  follow.unref()
  // A node of its database: registered, beating, judging the schema again with each beat.
  const heartbeat = await startHeartbeat(store, url, app.log)
  // The rehearsal waits for a moment with nothing to serve: the first requests after a start
  // are not held behind its set-up.
  const warming = opts.warmUp
    ? warmUp(opts.logLevel ?? 'silent', undefined, service.quiet(WARM_UP_AFTER_QUIET_MS), () =>
        app.log.debug({event: 'warm_up_began'}, 'warm-up began'),
      )
    : null
  void warming?.done.then(({requests, ms, stopped, statements}) => {
    if (stopped)
      return app.log.info({event: 'warm_up', requests, ms: Math.round(ms), stopped}, `warm-up ended after ${requests} requests: ${stopped}`)
    const prepared = store.prepareAhead(statements)
    app.log.info(
      {event: 'warm_up', requests, ms: Math.round(ms), prepared},
      `warmed up: ${requests} rehearsed requests in ${Math.round(ms)} ms; ${prepared} statements prepared`,
    )
  })
  return {
    app,
    store,
    service,
    policy,
    flavors,
    url,
    reloadTls() {
      if (!tlsFiles || !served) return {changed: false}
      const pair = readTlsFiles(tlsFiles)
      if (pair.cert.equals(served.cert) && pair.key.equals(served.key)) return {changed: false}
      ;(app.server as https.Server).setSecureContext({cert: pair.cert, key: pair.key, minVersion: TLS_MIN_VERSION})
      served = pair
      return {changed: true}
    },
    async close() {
      clearInterval(follow)
      heartbeat.stop()
      await warming?.stop()
      const closed = app.close()
      // Once nothing is in flight, a connection still open carries no request (a client that
      // connected and sent nothing yet, which Node does not count as idle): close it, or the
      // drain would wait for the client until the shutdown timeout.
      await service.whenIdle()
      app.server.closeAllConnections()
      await closed
      await store.close()
      log.flush()
    },
    flushLog: () => log.flush(),
  }
}
