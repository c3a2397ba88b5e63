/**
 * The database file itself: schema version and pending migrations, the offline upgrade
 * (one transaction, after a backup), and Placement-style upgrade checks on the data.
 * All of this works on the database directly, without a daemon (and refuses to upgrade a
 * SQLite file while one serves it); status, upgrade and check also work on a PostgreSQL URL.
 */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import {conflictError, failure, notFoundError, usageError} from '../failure.js'
import {Kysely, Migrator, SqliteDialect, sql, type MigrationProvider, type RawBuilder} from 'kysely'
import {INCOMPLETE_CONSUMER_ID} from '../../core/allocations.js'
import {capacityOf} from '../../core/capacity.js'
import {isAlive, readRecord} from '../../daemon/control.js'
import {migrations} from '../../store/schema.js'
import {describeTarget, isDatabaseUrl, openBackend, resolveTarget} from '../../store/backends.js'
import {Store} from '../../store/store.js'
import {executedMigrations, inspect, knownMigrations} from './db-inspect.js'
import {foreignDatabaseUrl} from '../../store/target.js'

/** Exit codes of the db commands (besides 0 ok, 1 error, 2 usage, 3 no such file). */
export const DbExit = {
  /** db status: migrations are pending (run db upgrade). */
  UPGRADE_NEEDED: 7,
  /** db check: warnings only. */
  WARNINGS: 8,
  /** db check: at least one failure; db status: the integrity check failed. */
  FAILURES: 9,
  /** db upgrade: a daemon serves the file. */
  IN_USE: 4,
} as const


const known = knownMigrations

function openRaw(file: string, readonly: boolean): SQLite.Database {
  const foreign = foreignDatabaseUrl(file)
  if (foreign) throw foreign
  if (isDatabaseUrl(file)) {
    throw usageError(`${describeTarget(file)} is a PostgreSQL database: back it up with pg_dump`)
  }
  if (!fs.existsSync(file)) throw notFoundError(`no database file at ${file}`)
  const raw = new SQLite(file, {readonly, fileMustExist: true})
  raw.pragma('busy_timeout = 10000')
  return raw
}

export interface DbStatus {
  file: string
  /** The newest migration the file has (null: an empty file). */
  schema_version: string | null
  /** The newest migration this placemat knows. */
  latest: string
  applied: string[]
  pending: string[]
  /** Migrations the file has and this placemat does not know: it was written by a newer placemat. */
  unknown: string[]
  state: 'current' | 'upgrade-needed' | 'newer' | 'empty'
  integrity: string[]
  integrity_ok: boolean
  journal_mode: string
  counts: Record<string, number>
  daemon: {pid: number; url: string} | null
}

function daemonOn(file: string): DbStatus['daemon'] {
  const record = readRecord(file)
  if (!record || resolveTarget(record.db) !== resolveTarget(file) || !isAlive(record.pid)) return null
  // A record left by a daemon that was killed in a container names pid 1, which is this process
  // when it runs in the next container on the same volume: it is no daemon.
  if (record.pid === process.pid) return null
  return {pid: record.pid, url: record.url}
}

export async function dbStatus(file: string): Promise<DbStatus> {
  const db = await inspect(file)
  try {
    const applied = await executedMigrations(db)
    const all = known()
    const pending = all.filter((m) => !applied.includes(m))
    const unknown = applied.filter((m) => !all.includes(m))
    // PostgreSQL checks its own pages; SQLite's integrity check reads the whole file.
    const integrity =
      db.kind === 'sqlite' ? (await db.rows<{integrity_check: string}>('pragma integrity_check')).map((r) => r.integrity_check) : ['ok']
    const counts: Record<string, number> = {}
    for (const t of ['resource_providers', 'inventories', 'consumers', 'allocations', 'resource_classes', 'traits']) {
      if (await db.hasTable(t)) counts[t] = Number((await db.rows<{n: number}>(`select count(*) as n from ${t}`))[0].n)
    }
    const state: DbStatus['state'] =
      applied.length === 0 ? 'empty' : unknown.length ? 'newer' : pending.length ? 'upgrade-needed' : 'current'
    return {
      file: describeTarget(file),
      schema_version: applied.at(-1) ?? null,
      latest: all.at(-1)!,
      applied,
      pending,
      unknown,
      state,
      integrity,
      integrity_ok: integrity.length === 1 && integrity[0] === 'ok',
      journal_mode: db.kind === 'sqlite' ? String((await db.rows<{journal_mode: string}>('pragma journal_mode'))[0].journal_mode) : 'postgresql',
      counts,
      daemon: daemonOn(file),
    }
  } finally {
    await db.close()
  }
}

export interface UpgradeResult {
  file: string
  from: string | null
  to: string
  applied: string[]
  backup: string | null
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

/**
 * Runs every pending migration in ONE transaction (BEGIN IMMEDIATE: no other writer gets
 * in); a failing migration rolls all of them back and leaves the file as it was. A
 * backup copy is made first unless `backup` is false.
 */
export async function dbUpgrade(file: string, opts: {backup: boolean}): Promise<UpgradeResult> {
  if (isDatabaseUrl(file)) return upgradeDatabase(file)
  const status = await dbStatus(file)
  if (status.daemon) {
    throw conflictError(`a daemon serves ${file} (pid ${status.daemon.pid}, ${status.daemon.url}); stop it first (placemat daemon stop)`)
  }
  if (status.state === 'newer') {
    throw failure(`${file} was written by a newer placemat (migrations ${status.unknown.join(', ')} are unknown here); upgrade placemat instead`)
  }
  if (!status.pending.length) return {file, from: status.schema_version, to: status.schema_version ?? status.latest, applied: [], backup: null}
  const backup = opts.backup ? await backupFile(file, status.schema_version ?? 'empty') : null

  const raw = openRaw(file, false)
  const db = new Kysely<any>({dialect: new SqliteDialect({database: raw})})
  const provider: MigrationProvider = {getMigrations: async () => migrations}
  try {
    await db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn)
      try {
        const {error, results} = await new Migrator({db: conn, provider}).migrateToLatest()
        if (error) {
          const failed = results?.find((r) => r.status === 'Error')?.migrationName
          throw failure(`migration ${failed ?? '?'} failed: ${(error as Error).message ?? error}; nothing was changed`)
        }
        await sql`commit`.execute(conn)
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => undefined)
        throw err
      }
    })
  } finally {
    await db.destroy()
  }
  // The result must load as the daemon loads it.
  const store = await Store.open(file)
  await store.close()
  const after = await dbStatus(file)
  return {file, from: status.schema_version, to: after.schema_version!, applied: status.pending, backup}
}

/**
 * PostgreSQL: kysely's migrator runs the pending migrations in one transaction under its own
 * lock (a failure changes nothing). No backup is made: that is pg_dump's job.
 */
async function upgradeDatabase(url: string): Promise<UpgradeResult> {
  const backend = await openBackend(url, {})
  let before: string[]
  let applied: string[]
  try {
    const migrator = new Migrator({db: backend.db, provider: {getMigrations: async () => migrations}})
    before = (await migrator.getMigrations()).filter((m) => m.executedAt).map((m) => m.name)
    const unknownHere = await backend.db
      .selectFrom('kysely_migration' as any)
      .select('name' as any)
      .execute()
      .then((rows) => rows.map((r: any) => String(r.name)).filter((n) => !known().includes(n)))
      .catch(() => [] as string[])
    if (unknownHere.length) {
      throw failure(`${describeTarget(url)} was written by a newer placemat (migrations ${unknownHere.join(', ')} are unknown here); upgrade placemat instead`)
    }
    const {error, results} = await migrator.migrateToLatest()
    if (error) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName
      throw failure(`migration ${failed ?? '?'} failed: ${(error as Error).message ?? error}; nothing was changed`)
    }
    applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
  } finally {
    await backend.close()
  }
  // The result must load as the daemon loads it.
  const store = await Store.open(url)
  await store.close()
  const all = known()
  return {file: describeTarget(url), from: before.at(-1) ?? null, to: all.at(-1)!, applied, backup: null}
}

// ---------------------------------------------------------------------------
// Upgrade checks
// ---------------------------------------------------------------------------

export type CheckCode = 'success' | 'warning' | 'failure'

export interface CheckResult {
  name: string
  result: CheckCode
  details: string[]
}

const LIMIT = 20
function result(name: string, code: CheckCode, problems: string[], hint?: string): CheckResult {
  if (!problems.length) return {name, result: 'success', details: []}
  const details = problems.slice(0, LIMIT)
  if (problems.length > LIMIT) details.push(`... and ${problems.length - LIMIT} more`)
  if (hint) details.push(hint)
  return {name, result: code, details}
}

/**
 * Placement's `placement-status upgrade check` (missing root provider ids, incomplete
 * consumers) and the other checks that make sense on a placemat file: the schema, the
 * SQLite integrity check, the provider trees, rows pointing at nothing, inventories and
 * allocations that break Placement's rules, and allocations over capacity.
 */
export async function dbCheck(file: string): Promise<CheckResult[]> {
  const status = await dbStatus(file)
  const out: CheckResult[] = []
  out.push(
    result(
      'Schema version',
      'failure',
      status.state === 'upgrade-needed'
        ? [`migrations pending: ${status.pending.join(', ')}`]
        : status.state === 'newer'
          ? [`written by a newer placemat (${status.unknown.join(', ')})`]
          : status.state === 'empty'
            ? ['no placemat schema in this file']
            : [],
      status.state === 'upgrade-needed' ? `Run "placemat db upgrade --db ${file}".` : undefined,
    ),
  )
  if (!isDatabaseUrl(file)) out.push(result('SQLite integrity', 'failure', status.integrity_ok ? [] : status.integrity))
  if (status.state === 'empty') return out

  const db = await inspect(file)
  try {
    const rows = <T>(q: RawBuilder<T> | string) => db.rows<T>(q)
    type P = {uuid: string; name: string; parent_uuid: string | null; root_uuid: string | null}
    const providers = new Map((await rows<P>('select uuid, name, parent_uuid, root_uuid from resource_providers')).map((p) => [p.uuid, p]))

    // Placement's "Missing Root Provider IDs", and roots that are not what the parents say.
    const rootProblems: string[] = []
    const treeProblems: string[] = []
    const trueRoot = (p: P): string | null => {
      const seen = new Set<string>()
      let cur: P | undefined = p
      while (cur && cur.parent_uuid) {
        if (seen.has(cur.uuid)) return null
        seen.add(cur.uuid)
        cur = providers.get(cur.parent_uuid)
      }
      return cur ? cur.uuid : null
    }
    for (const p of providers.values()) {
      if (p.parent_uuid && !providers.has(p.parent_uuid)) treeProblems.push(`provider ${p.uuid} (${p.name}): parent ${p.parent_uuid} does not exist`)
      const root = trueRoot(p)
      if (root === null && p.parent_uuid && providers.has(p.parent_uuid)) treeProblems.push(`provider ${p.uuid} (${p.name}) is in a parent loop`)
      if (!p.root_uuid) rootProblems.push(`provider ${p.uuid} (${p.name}) has no root provider id`)
      else if (!providers.has(p.root_uuid)) rootProblems.push(`provider ${p.uuid} (${p.name}): root ${p.root_uuid} does not exist`)
      else if (root !== null && root !== p.root_uuid) rootProblems.push(`provider ${p.uuid} (${p.name}): root is ${p.root_uuid}, its parents say ${root}`)
    }
    out.push(result('Missing Root Provider IDs', 'failure', rootProblems))
    out.push(result('Provider trees', 'failure', treeProblems))

    // Placement's "Incomplete Consumers": allocations whose consumer record is missing.
    const missing = await rows<{consumer_uuid: string}>(
      'select distinct a.consumer_uuid from allocations a left join consumers c on c.uuid = a.consumer_uuid where c.uuid is null',
    )
    out.push(
      result(
        'Incomplete Consumers',
        'warning',
        missing.map((r) => `allocations of consumer ${r.consumer_uuid} have no consumer record (placemat does not load them)`),
      ),
    )
    const incomplete = await rows<{uuid: string}>(
      sql`select uuid from consumers where project_id in (${INCOMPLETE_CONSUMER_ID}, '') or user_id in (${INCOMPLETE_CONSUMER_ID}, '')`,
    )
    out.push(
      result(
        'Consumers missing project/user',
        'warning',
        incomplete.map((r) => `consumer ${r.uuid} has the incomplete-consumer project/user ${INCOMPLETE_CONSUMER_ID} (written before microversion 1.8)`),
        'Rewrite their allocations with project_id and user_id (placemat allocation set) to complete them.',
      ),
    )

    // Rows pointing at nothing.
    const dangling: string[] = []
    const classes = new Set((await rows<{name: string}>('select name from resource_classes')).map((r) => r.name))
    const traits = new Set((await rows<{name: string}>('select name from traits')).map((r) => r.name))
    for (const t of ['inventories', 'provider_traits', 'provider_aggregates', 'allocations']) {
      for (const r of await rows<{provider_uuid: string; n: number}>(`select provider_uuid, count(*) as n from ${t} group by provider_uuid`)) {
        if (!providers.has(r.provider_uuid)) dangling.push(`${r.n} ${t} row(s) for provider ${r.provider_uuid}, which does not exist`)
      }
    }
    for (const r of await rows<{provider_uuid: string; trait: string}>('select provider_uuid, trait from provider_traits')) {
      if (!traits.has(r.trait)) dangling.push(`provider ${r.provider_uuid} has trait ${r.trait}, which does not exist`)
    }
    for (const t of ['inventories', 'allocations']) {
      for (const r of await rows<{resource_class: string; n: number}>(`select resource_class, count(*) as n from ${t} group by resource_class`)) {
        if (!classes.has(r.resource_class)) dangling.push(`${r.n} ${t} row(s) of resource class ${r.resource_class}, which does not exist`)
      }
    }
    out.push(result('Rows referring to nothing', 'failure', dangling))

    // Inventories and allocations Placement could never have written.
    type Inv = {provider_uuid: string; resource_class: string; total: number; reserved: number; min_unit: number; max_unit: number; step_size: number; allocation_ratio: number}
    const inventories = await rows<Inv>('select * from inventories')
    const invalid: string[] = []
    for (const i of inventories) {
      const bad: string[] = []
      if (i.total < 0) bad.push('total < 0')
      if (i.reserved < 0) bad.push('reserved < 0')
      if (i.min_unit < 1) bad.push('min_unit < 1')
      if (i.max_unit < 1) bad.push('max_unit < 1')
      if (i.step_size < 1) bad.push('step_size < 1')
      if (i.min_unit > i.max_unit) bad.push('min_unit > max_unit')
      if (!(i.allocation_ratio > 0)) bad.push('allocation_ratio <= 0')
      if (bad.length) invalid.push(`${i.resource_class} on ${i.provider_uuid}: ${bad.join(', ')}`)
    }
    for (const r of await rows<{consumer_uuid: string; provider_uuid: string; resource_class: string; used: number}>('select * from allocations where used < 1')) {
      invalid.push(`consumer ${r.consumer_uuid} holds ${r.used} ${r.resource_class} on ${r.provider_uuid}`)
    }
    out.push(result('Inventory and allocation values', 'failure', invalid))

    const invByKey = new Map(inventories.map((i) => [`${i.provider_uuid}\u0000${i.resource_class}`, i]))
    const noInventory: string[] = []
    const over: string[] = []
    for (const u of await rows<{provider_uuid: string; resource_class: string; used: number}>(
      'select provider_uuid, resource_class, sum(used) as used from allocations group by provider_uuid, resource_class',
    )) {
      if (!providers.has(u.provider_uuid)) continue
      const inv = invByKey.get(`${u.provider_uuid}\u0000${u.resource_class}`)
      const name = providers.get(u.provider_uuid)!.name
      if (!inv) {
        noInventory.push(`${u.used} ${u.resource_class} allocated on ${name} (${u.provider_uuid}), which has no ${u.resource_class} inventory`)
        continue
      }
      const cap = capacityOf(inv)
      if (u.used > cap) over.push(`${u.resource_class} on ${name} (${u.provider_uuid}): ${u.used} allocated, capacity ${cap}`)
    }
    out.push(result('Allocations without inventory', 'failure', noInventory))
    out.push(
      result(
        'Allocations over capacity',
        'warning',
        over,
        'Placement allows this after an inventory was reduced; new allocations there will fail until usage drops.',
      ),
    )
  } finally {
    await db.close()
  }
  return out
}

export function checkExitCode(results: CheckResult[]): number {
  if (results.some((r) => r.result === 'failure')) return DbExit.FAILURES
  if (results.some((r) => r.result === 'warning')) return DbExit.WARNINGS
  return 0
}
