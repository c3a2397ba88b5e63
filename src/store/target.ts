/**
 * Where the data lives, as the user names it: a SQLite file or a PostgreSQL URL. Kept apart
 * from the backends so that commands talking HTTP never load kysely, pg or SQLite.
 */
import path from 'node:path'

/** `postgres://` or `postgresql://`: a PostgreSQL database; anything else is a SQLite file. */
export const isDatabaseUrl = (target: string) => /^postgres(ql)?:\/\//i.test(target)

/** A target as recorded (pid records): a SQLite file's absolute path, or the URL without its password. */
export const resolveTarget = (target: string) => (isDatabaseUrl(target) ? describeTarget(target) : path.resolve(target))

/** Where the data lives, for messages: the file, or the URL without its password. */
export function describeTarget(target: string): string {
  if (!isDatabaseUrl(target)) return target
  try {
    const u = new URL(target)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'a PostgreSQL database'
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
  return new ForeignDatabaseError(`${where} is not a placemat database (it has tables ${shown}${tables.length > 5 ? ', ...' : ''}): nothing was changed in it`)
}

/** A URL of another kind of database (MySQL, SQLAlchemy's forms): not a place placemat keeps data. */
export function foreignDatabaseUrl(target: string): ForeignDatabaseError | null {
  if (isDatabaseUrl(target) || !/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return null
  return new ForeignDatabaseError(
    `${maskPassword(target)}: placemat keeps its data in a SQLite file or a PostgreSQL database (postgres://...); ` +
      'to read OpenStack Placement\'s own database, use `placemat import --from-placement DATABASE_URL --db TARGET`',
  )
}

/** A database URL for messages: its password replaced. */
export function maskPassword(url: string): string {
  return url.replace(/(:\/\/[^:/@]*:)[^@]*@/, '$1***@')
}
