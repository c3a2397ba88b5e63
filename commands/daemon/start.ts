import {ConfigFileError, readConfigFile, type ConfigFileSettings} from '../../src/daemon/config-file.js'
import type {AuthMode} from '../../src/http/context.js'
import {Policy, type PolicyOptions} from '../../src/http/policy/policy.js'
import {policyOptionsOf} from '../../src/daemon/policy-options.js'
import {DETACHED_FROM, awaitStart, startDetached, isAlive, readRecord} from '../../src/daemon/control.js'
import {logLine} from '../../src/daemon/log-line.js'
import {ListenError} from '../../src/daemon/server.js'
import {AdminTokenError, daemonFiles, ensureAdminToken, evidenceOfMissingDatabase} from '../../src/daemon/paths.js'
import {runForeground} from '../../src/daemon/foreground.js'
import {drainProblem, foregroundOptions} from '../../src/daemon/daemon-settings.js'
import {daemonStartFlags} from '../../src/cli/daemon-start-flags.js'
import {EdgeOptionsError, TlsFilesError, resolveEdge} from '../../src/daemon/edge-options.js'
import {databaseOfFlags} from '../../src/daemon/database-source.js'
import {DatabaseWaitError, SchemaOutOfDateError} from '../../src/store/store.js'
import {describeTarget} from '../../src/store/backends.js'
import {failure, failureReport} from '../../src/cli/failure.js'
import {BaseCommand} from '../../src/cli/base-command.js'

export default class DaemonStart extends BaseCommand {
  static summary = 'Start the placemat daemon (the Placement API on SQLite).'
  static description =
    'Serves the OpenStack Placement HTTP API (microversions 1.0 to 1.39). Without --foreground it detaches, ' +
    'writing a pid file and a log file beside the database.'

  static examples = [
    '<%= config.bin %> daemon start',
    '<%= config.bin %> daemon start --foreground --db /tmp/p.db --port 8000 --auth noauth2',
  ]

  static flags = daemonStartFlags

  /** A daemon `daemon start` detached: its stdout and stderr are its log file, JSON lines only. */
  private readonly detached = Boolean(process.env[DETACHED_FROM])

  private warning(line: string): void {
    process.stderr.write(this.detached ? logLine('warn', line) : `placemat: warning: ${line}\n`)
  }

  /** A detached daemon's failure to start is the last line of its log, the one its parent relays. */
  protected override async catch(err: Parameters<BaseCommand['catch']>[0]): Promise<any> {
    const report = this.detached ? failureReport(err) : null
    if (!report) return super.catch(err)
    process.stderr.write(logLine('fatal', report.message, {event: 'start_failed', exit: report.exit}))
    this.exit(report.exit)
  }

  /** placement.conf's settings (warnings on stderr), or exit 1 naming what cannot be read. */
  private configFile(file: string | undefined): ConfigFileSettings {
    if (!file) return {policy: {}, warnings: []}
    try {
      const settings = readConfigFile(file)
      for (const w of settings.warnings) this.warning(w)
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
          this.warning(`${options.file}: ${name} is not a rule of Placement's or placemat's (a typo?); it is kept for rule:${name}`)
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
    if (err instanceof ListenError) throw failure(err.message)
    throw err
  }

  async run(): Promise<void> {
    const {flags, metadata} = await this.parse(DaemonStart)
    const conf = this.configFile(flags['config-file'])
    // --db, PLACEMAT_DB, a URL file, placement.conf's or the data directory's: flags.db from here on.
    const database = databaseOfFlags(
      flags,
      !metadata.flags.db?.setFromDefault,
      flags['config-file'] ? {file: flags['config-file'], connection: conf.databaseConnection} : undefined,
    )
    for (const w of database.unused) this.warning(w)
    flags.db = database.target
    if (!this.detached) {
      const evidence = evidenceOfMissingDatabase(flags.db)
      if (evidence) {
        throw failure(
          `${flags.db} does not exist, but ${evidence} shows a database was there: not starting an empty one in its place. ` +
            `Restore the file, or run \`placemat db init --db ${flags.db}\` to begin a new database on purpose`,
        )
      }
    }
    const drain = drainProblem(flags)
    if (drain) throw failure(drain)
    const policy = this.policyOptions(flags, conf.policy)
    const auth = (flags.auth ?? conf.auth ?? 'token') as AuthMode
    if (auth === 'keystone' && !conf.keystone)
      throw failure('--auth keystone needs [keystone_authtoken] (auth_url, username, password, project_name) in a --config-file')
    let edge
    try {
      edge = resolveEdge(flags, conf)
    } catch (err) {
      this.refuse(err)
    }
    for (const w of edge.warnings) this.warning(w)
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
      if (existing && isAlive(existing.pid))
        throw failure(`a daemon already serves ${describeTarget(flags.db)} at ${existing.url} (pid ${existing.pid})`)
      const args = process.argv.slice(2).filter((a) => a !== 'daemon' && a !== 'start')
      if (!args.includes('--db')) args.push('--db', flags.db)
      const url = `${edge.scheme}://${hostForUrl}:${flags.port}`
      const started = await awaitStart(startDetached(args, flags.db), flags.db, url, 15000)
      const log = daemonFiles(flags.db).log
      // The daemon's own words and exit code: 3 for a database that needs migrations, as in the foreground.
      if (started.state === 'exited')
        this.error(started.said ?? `the daemon exited (code ${started.code}); see ${log}`, {exit: started.code})
      if (started.state === 'silent') throw failure(`the daemon did not answer at ${url}; see ${log}`)
      if (started.state === 'starting') {
        this.log(
          `placemat daemon listening on ${url} (pid ${started.record.pid}), waiting for its database ${describeTarget(flags.db)}; see ${log}`,
        )
        return
      }
      this.log(`placemat daemon listening on ${url} (pid ${started.record.pid}, database ${started.record.db})`)
      return
    }
    // One daemon per database: a second one would take over its record (and its clients).
    const existing = readRecord(flags.db)
    if (existing && existing.pid !== process.pid && isAlive(existing.pid)) {
      throw failure(`a daemon already serves ${describeTarget(flags.db)} at ${existing.url} (pid ${existing.pid})`)
    }
    try {
      const say = (line: string) => (this.detached ? process.stdout.write(logLine('info', line)) : this.log(line))
      await runForeground({...foregroundOptions(flags, conf, {auth, policy, edge: edge.settings}), detached: this.detached}, say)
    } catch (err) {
      this.refuse(err)
    }
    await new Promise(() => undefined)
  }
}
