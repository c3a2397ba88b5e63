/**
 * `placemat daemon start`: the daemon's settings worked out from the flags, placement.conf and
 * the environment, each refusal said as one line (exit 1; 3 for a database that needs
 * migrations), then the daemon run here in the foreground, or started detached and waited for.
 * What it says on the way (warnings, the foreground's lines) goes to the caller's `warn` and `say`.
 */
import type {Interfaces} from '@oclif/core'
import {ConfigFileError, readConfigFile, type ConfigFileSettings} from '../../daemon/config-file.js'
import {awaitStart, isAlive, readRecord, startDetached, type StartOutcome} from '../../daemon/control.js'
import {drainProblem, foregroundOptions} from '../../daemon/daemon-settings.js'
import {databaseOfFlags} from '../../daemon/database-source.js'
import {EdgeOptionsError, resolveEdge, TlsFilesError} from '../../daemon/edge-options.js'
import {runForeground} from '../../daemon/foreground.js'
import {AdminTokenError, daemonFiles, ensureAdminToken, evidenceOfMissingDatabase} from '../../daemon/paths.js'
import {policyOptionsOf} from '../../daemon/policy-options.js'
import {ListenError} from '../../daemon/server.js'
import type {AuthMode} from '../../http/context.js'
import {Policy, type PolicyOptions} from '../../http/policy/policy.js'
import {describeTarget} from '../../store/backends.js'
import {DatabaseWaitError, SchemaOutOfDateError} from '../../store/store.js'
import type {daemonStartFlags} from '../daemon-start-flags.js'
import {Failure, failure} from '../failure.js'

export type DaemonStartFlags = Interfaces.InferredFlags<typeof daemonStartFlags>

export interface DaemonStartContext {
  /** This process is a daemon `daemon start` detached: it runs in the foreground, its output its log. */
  detached: boolean
  /** --db was given, not its default. */
  dbGiven: boolean
  /** The command line after `placemat daemon start`'s words, for the detached daemon's own. */
  argv: string[]
  warn: (line: string) => void
  /** A foreground daemon's own lines (where it listens, what it does). */
  say: (line: string) => void
}

/** A daemon started detached: how its start went, where it listens and logs, and its database. */
export interface DetachedStart {
  started: StartOutcome
  url: string
  log: string
  db: string
}

/** placement.conf's settings (its warnings said), or exit 1 naming what cannot be read. */
function configFile(file: string | undefined, warn: (line: string) => void): ConfigFileSettings {
  if (!file) return {policy: {}, warnings: []}
  try {
    const settings = readConfigFile(file)
    for (const w of settings.warnings) warn(w)
    return settings
  } catch (err) {
    if (err instanceof ConfigFileError) throw failure(err.message)
    throw err
  }
}

/** The policy the flags and the file give, or exit 1 naming the file and rule that cannot be read. */
function policyOptions(flags: DaemonStartFlags, file: PolicyOptions, warn: (line: string) => void): PolicyOptions {
  const options = policyOptionsOf(flags, file)
  try {
    Policy.load(options)
    if (options.file) {
      for (const name of Policy.unknownRules(options.file, options.defaults).filter((n) => /^placem(ent|at):/.test(n))) {
        warn(`${options.file}: ${name} is not a rule of Placement's or placemat's (a typo?); it is kept for rule:${name}`)
      }
    }
  } catch (err) {
    throw failure((err as Error).message)
  }
  return options
}

/** Why the daemon will not start, as one line and its exit code; anything else is a crash. */
function refuse(err: unknown): never {
  // 3, as the daemon itself exits for a database that needs migrations.
  if (err instanceof SchemaOutOfDateError) throw new Failure('error', err.message, 3)
  if (
    err instanceof DatabaseWaitError ||
    err instanceof AdminTokenError ||
    err instanceof EdgeOptionsError ||
    err instanceof TlsFilesError ||
    err instanceof ListenError
  )
    throw failure(err.message)
  throw err
}

const alreadyServed = (db: string, record: {url: string; pid: number}) =>
  failure(`a daemon already serves ${describeTarget(db)} at ${record.url} (pid ${record.pid})`)

/**
 * Starts the daemon `flags` describe: detached (the outcome of its start, to be said), or here in
 * the foreground, serving until the process is stopped (never returning).
 */
export async function startDaemon(given: DaemonStartFlags, ctx: DaemonStartContext): Promise<DetachedStart> {
  const conf = configFile(given['config-file'], ctx.warn)
  // --db, PLACEMAT_DB, a URL file, placement.conf's or the data directory's: flags.db from here on.
  const database = databaseOfFlags(
    given,
    ctx.dbGiven,
    given['config-file'] ? {file: given['config-file'], connection: conf.databaseConnection} : undefined,
  )
  for (const w of database.unused) ctx.warn(w)
  const flags = {...given, db: database.target}
  const {db} = flags
  if (!ctx.detached) {
    const evidence = evidenceOfMissingDatabase(db)
    if (evidence) {
      throw failure(
        `${db} does not exist, but ${evidence} shows a database was there: not starting an empty one in its place. ` +
          `Restore the file, or run \`placemat db init --db ${db}\` to begin a new database on purpose`,
      )
    }
  }
  const drain = drainProblem(flags)
  if (drain) throw failure(drain)
  const policy = policyOptions(flags, conf.policy, ctx.warn)
  const auth = (flags.auth ?? conf.auth ?? 'token') as AuthMode
  if (auth === 'keystone' && !conf.keystone)
    throw failure('--auth keystone needs [keystone_authtoken] (auth_url, username, password, project_name) in a --config-file')
  let edge
  try {
    edge = resolveEdge(flags, conf)
  } catch (err) {
    refuse(err)
  }
  for (const w of edge.warnings) ctx.warn(w)
  if (!flags.foreground) {
    // Refuse an untrustworthy token here, where the operator sees the message.
    if (auth === 'token') {
      try {
        ensureAdminToken(db)
      } catch (err) {
        refuse(err)
      }
    }
    const existing = readRecord(db)
    if (existing && isAlive(existing.pid)) throw alreadyServed(db, existing)
    const args = [...ctx.argv]
    if (!args.includes('--db')) args.push('--db', db)
    const hostForUrl = flags.host.includes(':') ? `[${flags.host}]` : flags.host
    const url = `${edge.scheme}://${hostForUrl}:${flags.port}`
    const started = await awaitStart(startDetached(args, db), db, url, 15000)
    return {started, url, log: daemonFiles(db).log, db}
  }
  // One daemon per database: a second one would take over its record (and its clients).
  const existing = readRecord(db)
  if (existing && existing.pid !== process.pid && isAlive(existing.pid)) throw alreadyServed(db, existing)
  try {
    await runForeground({...foregroundOptions(flags, conf, {auth, policy, edge: edge.settings}), detached: ctx.detached}, ctx.say)
  } catch (err) {
    refuse(err)
  }
  return new Promise(() => undefined)
}
