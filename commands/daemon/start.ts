import path from 'node:path'
import {Flags} from '@oclif/core'
import {ConfigFileError, readConfigFile, type ConfigFileSettings} from '../../src/daemon/config-file.js'
import type {AuthMode} from '../../src/http/context.js'
import {Policy, type PolicyOptions} from '../../src/http/policy/policy.js'
import {POLICY_GENERATIONS} from '../../src/http/policy/defaults.js'
import {policyOptionsOf} from '../../src/daemon/policy-options.js'
import {DETACHED_FROM, startDetached, isAlive, readRecord, waitReady} from '../../src/daemon/control.js'
import {AdminTokenError, DEFAULT_HOST, DEFAULT_PORT, daemonFiles, ensureAdminToken, evidenceOfMissingDatabase} from '../../src/daemon/paths.js'
import {runForeground} from '../../src/daemon/foreground.js'
import {EdgeOptionsError, TlsFilesError, resolveEdge} from '../../src/daemon/edge-options.js'
import {databaseOfFlags} from '../../src/daemon/database-source.js'
import {LOG_LEVELS, type LogLevel} from '../../src/http/access-log.js'
import {DatabaseWaitError, SchemaOutOfDateError} from '../../src/store/store.js'
import {describeTarget, type Durability} from '../../src/store/backends.js'
import {failure} from '../../src/cli/failure.js'
import {BaseCommand} from '../../src/cli/command.js'
import {localDbFlag} from '../../src/cli/local-db-flag.js'

export default class DaemonStart extends BaseCommand {
  static summary = 'Start the placemat daemon (the Placement API on SQLite).'
  static description =
    'Serves the OpenStack Placement HTTP API (microversions 1.0 to 1.39). Without --foreground it detaches, ' +
    'writing a pid file and a log file beside the database.'

  static examples = [
    '<%= config.bin %> daemon start',
    '<%= config.bin %> daemon start --foreground --db /tmp/p.db --port 8000 --auth noauth2',
  ]

  static flags = {
    foreground: Flags.boolean({description: 'stay in the foreground until SIGTERM or SIGINT'}),
    db: localDbFlag('SQLite database file, or a postgres:// URL'),
    host: Flags.string({description: 'address to listen on', default: DEFAULT_HOST}),
    port: Flags.integer({description: 'port to listen on (0: any free port)', default: DEFAULT_PORT}),
    auth: Flags.string({
      description:
        'token (default): only the admin token in the data directory; noauth2: Placement\'s test auth (keystonemiddleware\'s headers); ' +
        'keystone: tokens validated against Keystone ([keystone_authtoken] of --config-file)',
      options: ['token', 'noauth2', 'keystone'],
    }),
    'config-file': Flags.string({
      description:
        "OpenStack Placement's placement.conf: [api] auth_strategy, [keystone_authtoken], [oslo_policy], [cors], [placement], [placement_database] connection (flags override it)",
    }),
    'cors-origin': Flags.string({description: 'allowed CORS origin (repeatable)', multiple: true}),
    'cors-allow-headers': Flags.string({description: 'comma separated headers CORS preflights may ask for'}),
    'max-candidates': Flags.integer({description: 'cap on allocation candidates generated (-1: none, the default)'}),
    randomize: Flags.boolean({description: 'shuffle allocation candidates when a limit applies'}),
    'answer-cache': Flags.boolean({
      description: 'reuse the serialized answer to an identical candidates query until the next write',
      default: true,
      allowNo: true,
    }),
    strategy: Flags.string({
      description: 'candidate generation across trees',
      options: ['breadth-first', 'depth-first'],
      default: 'depth-first',
    }),
    'log-level': Flags.string({
      description:
        'least severe log lines written (JSON on stdout: the log file when detached); info (the default, or [DEFAULT] debug of --config-file) logs every request',
      options: [...LOG_LEVELS],
    }),
    durability: Flags.string({
      description:
        'full: every acknowledged write is fsynced before the answer (a power loss loses nothing); ' +
        'normal: SQLite syncs at checkpoints only, faster, but a power loss or kernel crash can lose the last ' +
        'acknowledged writes (PostgreSQL: synchronous_commit off)',
      options: ['full', 'normal'],
      default: 'full',
    }),
    'request-timeout': Flags.integer({description: 'seconds a client has to send a whole request (headers: at most 30)', default: 120}),
    'metrics-public': Flags.boolean({description: 'serve GET /metrics without a token (it needs the admin token otherwise)'}),
    'policy-file': Flags.string({
      description: 'Placement policy overrides (oslo.policy YAML or JSON: rule name -> check string), over the defaults --policy-defaults names',
      helpGroup: 'POLICY',
    }),
    'policy-defaults': Flags.string({
      description:
        "whose default rules: Placement 15.0.0's (9.0.0 onwards: project-scoped, role admin or service; a current cloud) " +
        "or 8.0.0's (Zed and before: system-scoped admins and readers; new defaults and scope then unenforced unless told)",
      options: [...POLICY_GENERATIONS],
      default: POLICY_GENERATIONS[0],
      helpGroup: 'POLICY',
    }),
    'enforce-new-defaults': Flags.boolean({
      description:
        "Placement's secure-RBAC defaults alone; --no-enforce-new-defaults: a deprecated default (role:admin) still allows what it allowed. " +
        "Default: on with 15.0.0's defaults (as Placement 2026.1), off with 8.0.0's (as a Zed-era cloud); over [oslo_policy] enforce_new_defaults",
      allowNo: true,
      helpGroup: 'POLICY',
    }),
    'enforce-scope': Flags.boolean({
      description:
        "refuse a token whose scope (system or project) the rule does not list (with 15.0.0's defaults, every system-scoped token); " +
        "--no-enforce-scope: any scope. Default: on with 15.0.0's defaults, off with 8.0.0's; over [oslo_policy] enforce_scope",
      allowNo: true,
      helpGroup: 'POLICY',
    }),
    'db-url-file': Flags.string({
      description:
        "a file holding the database URL (a container's or Kubernetes' secret; its trailing newline trimmed), as PLACEMAT_DB_FILE names one: " +
        'below --db and PLACEMAT_DB, above placement.conf\'s [placement_database] connection',
      helpGroup: 'DATABASE',
    }),
    'db-wait': Flags.integer({
      description: 'seconds to wait for the database at start (retrying with backoff, health answering "starting"); then exit 1. Default: wait until it answers or the daemon is stopped',
      helpGroup: 'DATABASE',
    }),
    'db-connect-timeout': Flags.integer({description: 'seconds to open a database connection before the request gets 503', default: 5, helpGroup: 'DATABASE'}),
    'db-statement-timeout': Flags.integer({description: 'seconds one database statement may take before the request gets 503', default: 30, helpGroup: 'DATABASE'}),
    'db-lock-timeout': Flags.integer({description: 'seconds a write waits for the write lock before it gets 503', default: 10, helpGroup: 'DATABASE'}),
    // Stopping and reloading: SIGTERM drains, SIGHUP reloads.
    'shutdown-delay': Flags.integer({
      description: 'seconds between SIGTERM and closing the listener, health answering 503 "stopping" so a balancer takes the node out (requests still served)',
      default: 0,
      min: 0,
      helpGroup: 'SERVICE',
    }),
    'shutdown-timeout': Flags.integer({
      description: 'seconds from SIGTERM to exit at most: requests in flight are answered and committed meanwhile; after it the daemon exits 1. `daemon stop` waits as long',
      default: 30,
      min: 1,
      helpGroup: 'SERVICE',
    }),
    // the edge: behind a balancer, TLS
    'trusted-proxies': Flags.string({
      description:
        'comma separated addresses or CIDR blocks of the proxies whose X-Forwarded-For/-Proto/-Host/-Prefix and Forwarded headers are believed ' +
        "(overrides placement.conf's [oslo_middleware] enable_proxy_headers_parsing; '' trusts none)",
      helpGroup: 'EDGE',
    }),
    'base-path': Flags.string({description: 'the path the API is published under (/placement): links and Location name it, and requests under it are served too', helpGroup: 'EDGE'}),
    'tls-cert': Flags.string({description: 'serve HTTPS (TLS 1.2 or later) with this PEM certificate (chain); needs --tls-key', helpGroup: 'EDGE'}),
    'tls-key': Flags.string({description: "the PEM private key of --tls-cert's certificate (unencrypted)", helpGroup: 'EDGE'}),
  }

  /** placement.conf's settings (warnings on stderr), or exit 1 naming what cannot be read. */
  private configFile(file: string | undefined): ConfigFileSettings {
    if (!file) return {policy: {}, warnings: []}
    try {
      const settings = readConfigFile(file)
      for (const w of settings.warnings) process.stderr.write(`placemat: warning: ${w}\n`)
      return settings
    } catch (err) {
      if (err instanceof ConfigFileError) throw failure(err.message)
      throw err
    }
  }

  /** The policy the flags and the file give, or exit 1 naming the file and rule that cannot be read. */
  private policyOptions(
    flags: {'policy-file'?: string; 'policy-defaults'?: string; 'enforce-new-defaults'?: boolean; 'enforce-scope'?: boolean},
    file: PolicyOptions,
  ): PolicyOptions {
    const options = policyOptionsOf(flags, file)
    try {
      Policy.load(options)
      if (options.file) {
        for (const name of Policy.unknownRules(options.file, options.defaults).filter((n) => /^placem(ent|at):/.test(n))) {
          process.stderr.write(`placemat: warning: ${options.file}: ${name} is not a rule of Placement's or placemat's (a typo?); it is kept for rule:${name}\n`)
        }
      }
    } catch (err) {
      throw failure((err as Error).message)
    }
    return options
  }

  /** Why the daemon will not start, as one line and its exit code; anything else is a crash. */
  private refuse(err: unknown): never {
    if (err instanceof SchemaOutOfDateError) this.error(err.message, {exit: 3})
    if (err instanceof DatabaseWaitError) throw failure(err.message)
    if (err instanceof AdminTokenError) throw failure(err.message)
    if (err instanceof EdgeOptionsError || err instanceof TlsFilesError) throw failure(err.message)
    throw err
  }

  async run(): Promise<void> {
    const {flags, metadata} = await this.parse(DaemonStart)
    const conf = this.configFile(flags['config-file'])
    // --db, PLACEMAT_DB, a URL file, placement.conf's or the data directory's: flags.db from here on.
    const database = databaseOfFlags(flags, !metadata.flags.db?.setFromDefault, flags['config-file'] ? {file: flags['config-file'], connection: conf.databaseConnection} : undefined)
    for (const w of database.unused) process.stderr.write(`placemat: warning: ${w}\n`)
    flags.db = database.target
    if (!process.env[DETACHED_FROM]) {
      const evidence = evidenceOfMissingDatabase(flags.db)
      if (evidence) {
        throw failure(
          `${flags.db} does not exist, but ${evidence} shows a database was there: not starting an empty one in its place. ` +
            `Restore the file, or run \`placemat db init --db ${flags.db}\` to begin a new database on purpose`,
        )
      }
    }
    if (flags['shutdown-delay'] >= flags['shutdown-timeout']) {
      throw failure(`--shutdown-delay (${flags['shutdown-delay']} s) must be shorter than --shutdown-timeout (${flags['shutdown-timeout']} s): the drain needs time after it`)
    }
    const policy = this.policyOptions(flags, conf.policy)
    const auth = (flags.auth ?? conf.auth ?? 'token') as AuthMode
    if (auth === 'keystone' && !conf.keystone) throw failure('--auth keystone needs [keystone_authtoken] (auth_url, username, password, project_name) in a --config-file')
    let edge
    try {
      edge = resolveEdge(flags, conf)
    } catch (err) {
      this.refuse(err)
    }
    for (const w of edge.warnings) process.stderr.write(`placemat: warning: ${w}\n`)
    const hostForUrl = flags.host.includes(':') ? `[${flags.host}]` : flags.host
    if (!flags.foreground) {
      // Refuse an untrustworthy token here, where the operator sees the message.
      if (auth === 'token') {
        try {
          ensureAdminToken(flags.db)
        } catch (err) {
          this.refuse(err)
        }
      }
      const existing = readRecord(flags.db)
      if (existing && isAlive(existing.pid)) throw failure(`a daemon already serves ${describeTarget(flags.db)} at ${existing.url} (pid ${existing.pid})`)
      const args = process.argv.slice(2).filter((a) => a !== 'daemon' && a !== 'start')
      if (!args.includes('--db')) args.push('--db', flags.db)
      const url = `${edge.scheme}://${hostForUrl}:${flags.port}`
      const record = await startDetached(args, flags.db, url)
      const ready = await waitReady(url, 15000)
      if (!ready) throw failure(`the daemon did not answer at ${url}; see ${daemonFiles(flags.db).log}`)
      if (ready === 'starting') {
        this.log(`placemat daemon listening on ${url} (pid ${record.pid}), waiting for its database ${describeTarget(flags.db)}; see ${daemonFiles(flags.db).log}`)
        return
      }
      this.log(`placemat daemon listening on ${url} (pid ${record.pid}, database ${record.db})`)
      return
    }
    // One daemon per database: a second one would take over its record (and its clients).
    const existing = readRecord(flags.db)
    if (existing && existing.pid !== process.pid && isAlive(existing.pid)) {
      throw failure(`a daemon already serves ${describeTarget(flags.db)} at ${existing.url} (pid ${existing.pid})`)
    }
    const configFile = flags['config-file']
    try {
      await runForeground(
        {
          db: flags.db,
          host: flags.host,
          port: flags.port,
          auth,
          corsOrigins: flags['cors-origin'] ?? conf.corsOrigins,
          corsAllowHeaders: flags['cors-allow-headers']?.split(',').map((h) => h.trim()).filter(Boolean) ?? conf.corsAllowHeaders,
          keystone: conf.keystone,
          incompleteConsumer: conf.incompleteConsumer,
          candidates: {
            maxCandidates: flags['max-candidates'] ?? conf.maxCandidates ?? -1,
            randomize: flags.randomize || conf.randomize,
            strategy: flags.strategy as 'breadth-first' | 'depth-first',
            answerCache: flags['answer-cache'],
          },
          logLevel: (flags['log-level'] ?? conf.logLevel ?? 'info') as LogLevel,
          // A level given as a flag stays; one from the file follows the file.
          reloadLogLevel: flags['log-level'] ? undefined : () => (configFile ? readConfigFile(configFile).logLevel : undefined) ?? 'info',
          metricsPublic: flags['metrics-public'],
          policy,
          durability: flags.durability as Durability,
          edge: edge.settings,
          timeouts: {requestMs: flags['request-timeout'] * 1000, headersMs: Math.min(30, flags['request-timeout']) * 1000},
          database: {
            waitMs: flags['db-wait'] === undefined ? undefined : flags['db-wait'] * 1000,
            timeouts: {
              connectMs: flags['db-connect-timeout'] * 1000,
              statementMs: flags['db-statement-timeout'] * 1000,
              lockMs: flags['db-lock-timeout'] * 1000,
            },
          },
          shutdown: {delayMs: flags['shutdown-delay'] * 1000, timeoutMs: flags['shutdown-timeout'] * 1000},
        },
        (line) => this.log(line),
      )
    } catch (err) {
      this.refuse(err)
    }
    await new Promise(() => undefined)
  }
}
