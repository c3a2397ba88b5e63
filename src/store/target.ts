/**
 * Where the data lives, as the user names it: a SQLite file or a PostgreSQL URL. Kept apart
 * from the backends so that commands talking HTTP never load kysely, pg or SQLite.
 */
import path from 'node:path'

/** `postgres://` or `postgresql://`: a PostgreSQL database; anything else is a SQLite file. */
export const isDatabaseUrl = (target: string) => /^postgres(ql)?:\/\//i.test(target)

/** A target as recorded (pid records): a SQLite file's absolute path, or the URL as given. */
export const resolveTarget = (target: string) => (isDatabaseUrl(target) ? target : path.resolve(target))

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
