/**
 * `placemat db upgrade`: the schema migrations, in one transaction (a failing migration leaves
 * the database as it was), in three ways (schema-contract.ts says which migration is which):
 *   plain       every pending migration at once, on a database no daemon serves (a SQLite file
 *               with a live daemon, or a PostgreSQL database with nodes of an older release, is
 *               refused); SQLite: after a backup.
 *   --expand    this release's expands only: additive, so the nodes serving the database, of the
 *               release before and of this one, keep serving while they run (SQLite: under the
 *               write lock, between the daemon's writes).
 *   --contract  everything pending, this release's contracts included, refused while a node of an
 *               older release serves the database (live-nodes.ts), naming each.
 */
import fs from 'node:fs'
import SQLite from 'better-sqlite3'
import {Kysely, Migrator, SqliteDialect, sql, type MigrationProvider} from 'kysely'
import {conflictError, failure, notFoundError, usageError} from '../../failure.js'
import {openBackend} from '../../../store/backends.js'
import {RELEASE} from '../../../store/release.js'
import {migrations} from '../../../store/schema.js'
import {lastExpand, pendingUpTo, phaseOf, releaseOf, type SchemaFacts} from '../../../store/schema-contract.js'
import {Store} from '../../../store/store.js'
import {BACKUP_TOOL, DATABASE_NOUN, databaseKind, describeTarget, foreignDatabaseUrl, isDatabaseUrl} from '../../../store/target.js'
import {dbStatus, type DbStatus} from './status.js'
import {olderNodes} from './live-nodes.js'

export type UpgradePhase = 'all' | 'expand' | 'contract'

export interface UpgradeResult {
  file: string
  phase: UpgradePhase
  from: string | null
  to: string
  applied: string[]
  /** Migrations this release knows that are still pending (the contract, after --expand). */
  pending: string[]
  backup: string | null
}

function openRaw(file: string, readonly: boolean): SQLite.Database {
  const foreign = foreignDatabaseUrl(file)
  if (foreign) throw foreign
  if (isDatabaseUrl(file)) {
    const kind = databaseKind(file)
    throw usageError(`${describeTarget(file)} is ${DATABASE_NOUN[kind]}: back it up with ${BACKUP_TOOL[kind]}`)
  }
  if (!fs.existsSync(file)) throw notFoundError(`no database file at ${file}`)
  const raw = new SQLite(file, {readonly, fileMustExist: true})
  raw.pragma('busy_timeout = 10000')
  return raw
}

/** Copies the database (a consistent snapshot, WAL included) beside it; returns the backup's path. */
export async function backupFile(file: string, tag: string): Promise<string> {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')
  let dest = `${file}.backup-${tag}-${stamp}`
  for (let i = 2; fs.existsSync(dest); i++) dest = `${file}.backup-${tag}-${stamp}-${i}`
  const raw = openRaw(file, true)
  try {
    await raw.backup(dest)
  } finally {
    raw.close()
  }
  return dest
}

/** The migrations the phase runs, in order (the last is the one migrated to), or a refusal. */
function plan(status: DbStatus, phase: UpgradePhase): string[] {
  const target = status.file
  if (status.state === 'newer') {
    throw failure(
      `${target} was written by a newer placemat (migrations ${status.unknown.join(', ')} are unknown here); upgrade placemat instead`,
    )
  }
  if (phase !== 'expand') return status.pending
  const facts: SchemaFacts = {applied: status.applied, minRelease: status.min_release}
  const runs = pendingUpTo(facts, lastExpand() ?? status.latest)
  const baseline = runs.filter((m) => phaseOf(m) === 'baseline')
  if (baseline.length && status.applied.length) {
    throw failure(
      `${target} is older than placemat 0.1.0's schema (${baseline.join(', ')} pending): those migrations are not made for nodes serving meanwhile; ` +
        `run \`placemat db upgrade --db ${target}\` with no daemon serving it`,
    )
  }
  const contract = runs.find((m) => phaseOf(m) === 'contract')
  if (contract) {
    throw failure(
      `the contract of placemat ${releaseOf(contract) ?? 'an earlier release'} (${contract}) has not run on ${target}: ` +
        `finish that upgrade first (every node on it, then \`placemat db upgrade --contract\`)`,
    )
  }
  return runs
}

/** Refuses when a node of an older release serves the database (what a contract would break). */
function refuseOlderNodes(status: DbStatus, phase: UpgradePhase): void {
  const older = olderNodes(status.nodes)
  if (!older.length) return
  throw conflictError(
    `refusing to ${phase === 'contract' ? 'contract' : 'upgrade'} ${status.file}: ${older.length} node(s) of a release before placemat ${RELEASE} serve it, ` +
      `which this release's contract (${status.pending_contract.join(', ')}) would break: ${older.join('; ')}. ` +
      `Replace them with placemat ${RELEASE} first (\`placemat db upgrade --expand\` lets both serve meanwhile); nothing was changed`,
  )
}

export async function dbUpgrade(file: string, opts: {backup: boolean; phase?: UpgradePhase}): Promise<UpgradeResult> {
  const phase = opts.phase ?? 'all'
  const sqlite = !isDatabaseUrl(file)
  const status = await dbStatus(file)
  const runs = plan(status, phase)
  const done = (applied: string[], backup: string | null, after: DbStatus): UpgradeResult => ({
    file: status.file,
    phase,
    from: status.schema_version,
    to: after.schema_version ?? status.latest,
    applied,
    pending: after.pending,
    backup,
  })
  if (!runs.length) return done([], null, status)
  if (phase === 'all' && sqlite && status.daemon) {
    throw conflictError(
      `a daemon serves ${file} (pid ${status.daemon.pid}, ${status.daemon.url}); stop it first (placemat daemon stop), ` +
        'or run `placemat db upgrade --expand` while it serves',
    )
  }
  if (phase !== 'expand' && runs.some((m) => phaseOf(m) === 'contract')) refuseOlderNodes(status, phase)
  const to = runs.at(-1)!
  const backup = sqlite && opts.backup ? await backupFile(file, status.schema_version ?? 'empty') : null
  if (sqlite) await migrateFile(file, to)
  else await migrateDatabase(file, to)
  // The result must load as the daemon loads it.
  const store = await Store.open(file)
  await store.close()
  return done(runs, backup, await dbStatus(file))
}

const provider: MigrationProvider = {getMigrations: async () => migrations}

const failed = (error: unknown, results: Array<{status: string; migrationName: string}> | undefined) => {
  const name = results?.find((r) => r.status === 'Error')?.migrationName
  return failure(`migration ${name ?? '?'} failed: ${(error as Error).message ?? error}; nothing was changed`)
}

/**
 * SQLite: the migrations up to `to` in ONE transaction, BEGIN IMMEDIATE: it waits for the write
 * lock as a daemon's write does, and no write gets in until it commits.
 */
async function migrateFile(file: string, to: string): Promise<void> {
  const raw = openRaw(file, false)
  const db = new Kysely<any>({dialect: new SqliteDialect({database: raw})})
  try {
    await db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn)
      try {
        const {error, results} = await new Migrator({db: conn, provider}).migrateTo(to)
        if (error) throw failed(error, results)
        await sql`commit`.execute(conn)
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => undefined)
        throw err
      }
    })
  } finally {
    await db.destroy()
  }
}

/**
 * PostgreSQL: kysely's migrator runs the migrations up to `to` in one transaction under its own
 * lock (a failure changes nothing). No backup is made: that is pg_dump's job.
 */
async function migrateDatabase(url: string, to: string): Promise<void> {
  const backend = await openBackend(url, {})
  try {
    const {error, results} = await new Migrator({db: backend.db, provider}).migrateTo(to)
    if (error) throw failed(error, results)
  } finally {
    await backend.close()
  }
}
