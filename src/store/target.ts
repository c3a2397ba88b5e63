/**
 * Where the data lives, as the user names it: a SQLite file, a PostgreSQL URL or a MariaDB (or
 * MySQL) URL. Kept apart from the backends so that commands talking HTTP never load kysely, pg,
 * mysql2 or SQLite.
 */
import path from 'node:path'

/** The kinds of database placemat keeps its data in. */
export type DatabaseKind = 'sqlite' | 'postgres' | 'mysql'

/** `postgres://`/`postgresql://`: PostgreSQL; `mysql://`/`mariadb://`: MariaDB (or MySQL); anything else a SQLite file. */
export function databaseKind(target: string): DatabaseKind {
  if (/^postgres(ql)?:\/\//i.test(target)) return 'postgres'
  if (/^(mysql|mariadb):\/\//i.test(target)) return 'mysql'
  return 'sqlite'
}

/** A database server's URL (PostgreSQL or MariaDB), not a SQLite file. */
export const isDatabaseUrl = (target: string) => databaseKind(target) !== 'sqlite'

/** A target as recorded (pid records): a SQLite file's absolute path, or the URL without its password. */
export const resolveTarget = (target: string) => (isDatabaseUrl(target) ? describeTarget(target) : path.resolve(target))

/** Where the data lives, for messages: the file, or the URL without its password. */
/** What each kind of database is called, and what backs one up, in the words said to people. */
export const DATABASE_NOUN: Record<DatabaseKind, string> = {
  sqlite: 'a SQLite file',
  postgres: 'a PostgreSQL database',
  mysql: 'a MariaDB database',
}
export const BACKUP_TOOL: Record<DatabaseKind, string> = {sqlite: 'sqlite3 .backup', postgres: 'pg_dump', mysql: 'mariadb-dump'}

export function describeTarget(target: string): string {
  if (!isDatabaseUrl(target)) return target
  try {
    const u = new URL(target)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return DATABASE_NOUN[databaseKind(target)]
  }
}

/**
 * A database that is not placemat's (OpenStack Placement's own, or anything else with tables):
 * placemat neither migrates nor changes it, and says what it found.
 */
export class ForeignDatabaseError extends Error {}

/** Why the database holding `tables` is not one placemat may open (null: placemat's, or empty). */
export function foreignDatabase(target: string, tables: string[]): ForeignDatabaseError | null {
  if (!tables.length || tables.includes('kysely_migration')) return null
  const where = describeTarget(target)
  if (tables.includes('alembic_version') && tables.includes('resource_providers')) {
    return new ForeignDatabaseError(
      `${where} is an OpenStack Placement database, not placemat's: nothing was changed in it; read it into a placemat database with \`placemat import --from-placement DATABASE_URL --db TARGET\``,
    )
  }
  const shown = [...tables].sort().slice(0, 5).join(', ')
  return new ForeignDatabaseError(
    `${where} is not a placemat database (it has tables ${shown}${tables.length > 5 ? ', ...' : ''}): nothing was changed in it`,
  )
}

/** A URL of another kind of database (SQLAlchemy's forms with a driver, others): not a place placemat keeps data. */
export function foreignDatabaseUrl(target: string): ForeignDatabaseError | null {
  if (isDatabaseUrl(target) || !/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return null
  return new ForeignDatabaseError(
    `${maskPassword(target)}: placemat keeps its data in a SQLite file, a PostgreSQL database (postgres://...) or a MariaDB one (mysql://...); ` +
      "to read OpenStack Placement's own database, use `placemat import --from-placement DATABASE_URL --db TARGET`",
  )
}

/** A database URL (or a placement.conf connection) placemat cannot take; the message names it without its password. */
export class DatabaseUrlError extends Error {}

/**
 * A database named as SQLAlchemy names it (placement.conf's `[placement_database] connection`)
 * as placemat's target: `postgresql://`, `postgres://` and `mysql://` as they are, a driver
 * (`postgresql+psycopg2://`, `mysql+pymysql://`) left out; `sqlite:////abs.db` the file /abs.db,
 * `sqlite:///rel.db` rel.db from the working folder. An in-memory SQLite database is refused. With `paths`, a SQLite file named without a URL is taken too (placemat's own
 * form, as `--db` takes it).
 */
export function targetOfDatabaseUrl(text: string, options: {paths?: boolean} = {}): string {
  const url = text.trim()
  const scheme = /^([a-z][a-z0-9.-]*)(\+[a-z0-9_.-]+)?:/i.exec(url)
  if (!scheme || (!url.startsWith(`${scheme[0]}//`) && scheme[1].toLowerCase() !== 'sqlite')) {
    if (options.paths && url) return url
    throw new DatabaseUrlError(
      url
        ? `'${maskPassword(url)}' is not a database URL (postgresql://USER:PASSWORD@HOST/DATABASE, mysql://USER:PASSWORD@HOST/DATABASE, sqlite:////PATH)`
        : 'no database URL (it is empty)',
    )
  }
  const dialect = scheme[1].toLowerCase()
  const rest = url.slice(scheme[0].length)
  if (dialect === 'postgresql' || dialect === 'postgres') return scheme[2] ? `postgresql:${rest}` : url
  if (dialect === 'sqlite') {
    // sqlite:///rel.db is relative to the working folder, sqlite:////abs.db absolute; sqlite:// is in memory.
    const file = decodeURIComponent(rest.replace(/^\/\//, '').replace(/^\//, '').split('?')[0])
    if (!rest.startsWith('///') || !file || file === ':memory:') {
      throw new DatabaseUrlError(
        `${url}: name a SQLite file as sqlite:////ABSOLUTE/PATH or sqlite:///RELATIVE/PATH (an in-memory database keeps nothing)`,
      )
    }
    return path.resolve(file)
  }
  if (dialect === 'mysql' || dialect === 'mariadb') return scheme[2] ? `mysql:${rest}` : url
  throw new DatabaseUrlError(`${maskPassword(url)}: placemat keeps its data in a SQLite file, PostgreSQL or MariaDB, not ${dialect}`)
}

/** A database URL for messages: its password replaced. */
export function maskPassword(url: string): string {
  return url.replace(/(:\/\/[^:/@]*:)[^@]*@/, '$1***@')
}
