/**
 * Read-only queries on a placemat database, SQLite file, PostgreSQL or MariaDB, for `db status`,
 * `db check` and `upgrade check` (kysely writes each dialect's placeholders; the SQL itself is
 * plain enough for all three). Opened as the daemon would not open it: read-only, never migrated.
 */
import fs from 'node:fs'
import {sql, type RawBuilder} from 'kysely'
import {notFoundError} from '../../failure.js'
import {isDatabaseUrl, openBackend, type DatabaseKind} from '../../../store/backends.js'
import {foreignDatabaseUrl} from '../../../store/target.js'

export interface Inspector {
  kind: DatabaseKind
  rows<T>(query: RawBuilder<T> | string): Promise<T[]>
  hasTable(name: string): Promise<boolean>
  /** The names of the database's tables (placemat's, or another's). */
  tables(): Promise<string[]>
  /** The database's check of what it stores, and how it keeps its commits (Backend's). */
  integrity(): Promise<string[]>
  storage(): Promise<string>
  /** Connections of placemat nodes that keep no registry row (PostgreSQL's only). */
  unregisteredConnections?(): Promise<Array<{pid: number; addr: string; since: number}>>
  close(): Promise<void>
}

/** The migrations this placemat knows, in order. */
export {knownMigrations} from '../../../store/schema-contract.js'

export async function inspect(target: string): Promise<Inspector> {
  const foreign = foreignDatabaseUrl(target)
  if (foreign) throw foreign
  if (!isDatabaseUrl(target) && !fs.existsSync(target)) throw notFoundError(`no database file at ${target}`)
  const backend = await openBackend(target, {readonly: true})
  const rows = async <T>(query: RawBuilder<T> | string) =>
    (await (typeof query === 'string' ? sql.raw<T>(query) : query).execute(backend.db)).rows
  return {
    kind: backend.kind,
    rows,
    async hasTable(name) {
      return (await backend.tables()).includes(name)
    },
    tables: () => backend.tables(),
    integrity: () => backend.integrity(),
    storage: () => backend.storage(),
    ...(backend.unregisteredConnections ? {unregisteredConnections: () => backend.unregisteredConnections!()} : {}),
    close: () => backend.close(),
  }
}

/** The migrations the database has run, in order (none: an empty database, or not placemat's). */
export async function executedMigrations(db: Inspector): Promise<string[]> {
  if (!(await db.hasTable('kysely_migration'))) return []
  return (await db.rows<{name: string}>('select name from kysely_migration order by name')).map((r) => r.name)
}
