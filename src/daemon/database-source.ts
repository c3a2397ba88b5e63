/**
 * Which database a daemon serves, and who said so. In order: `--db`; `PLACEMAT_DB`; a file
 * holding the URL (`--db-url-file FILE`, else `PLACEMAT_DB_FILE`: a container's or Kubernetes'
 * secret, so the password is in neither the command line nor the environment); placement.conf's
 * `[placement_database] connection` (SQLAlchemy's form); the data directory's placemat.db.
 * A source below the one taken that names another database is said, never silently dropped; a
 * password is never in what is said (describeTarget, maskPassword).
 */
import fs from 'node:fs'
import path from 'node:path'
import {dataDir} from './paths.js'
import {DatabaseUrlError, describeTarget, ForeignDatabaseError, maskPassword, targetOfDatabaseUrl} from '../store/target.js'

/** A source that names no usable database (a file that cannot be read, an empty one, a URL placemat cannot take). */
export class DatabaseSourceError extends Error {}

export interface DatabaseSources {
  /** --db, when given on the command line (not its default). */
  flag?: string
  /** --db-url-file. */
  urlFile?: string
  /** placement.conf and its [placement_database] connection. */
  config?: {file: string; connection?: string}
}

export interface DatabaseChoice {
  /** A SQLite file, a PostgreSQL URL or a MariaDB one, as --db takes it. */
  target: string
  /** Where it came from, for messages: "--db", "PLACEMAT_DB", "/run/secrets/db (--db-url-file)", ... */
  from: string
  /** Sources below it that named another database, one sentence each (no password). */
  unused: string[]
}

interface Candidate {
  from: string
  /** What it names, for messages: without a password (a secret's file: nothing). */
  shown?: string
  /** The target, or why this source names none. */
  read(): string
}

/** The URL in a secret's file: its content, the trailing newline trimmed. */
function readUrlFile(file: string, from: string): string {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw new DatabaseSourceError(`${from}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
  }
  const url = text.replace(/\r?\n$/, '').trim()
  if (!url) throw new DatabaseSourceError(`${from}: the file is empty (it should hold the database URL)`)
  if (url.includes('\n')) throw new DatabaseSourceError(`${from}: expected one line, the database URL`)
  return url
}

/** A source's value as a target, its errors naming the source. */
function translated(from: string, text: string, paths: boolean): string {
  try {
    return targetOfDatabaseUrl(text, {paths})
  } catch (err) {
    if (err instanceof ForeignDatabaseError) throw new ForeignDatabaseError(`${from}: ${err.message}`)
    if (err instanceof DatabaseUrlError) throw new DatabaseSourceError(`${from}: ${err.message}`)
    throw err
  }
}

function candidates(sources: DatabaseSources, env: NodeJS.ProcessEnv): Candidate[] {
  const out: Candidate[] = []
  if (sources.flag !== undefined) out.push({from: '--db', shown: describeTarget(sources.flag), read: () => sources.flag!})
  if (env.PLACEMAT_DB) out.push({from: 'PLACEMAT_DB', shown: describeTarget(env.PLACEMAT_DB), read: () => env.PLACEMAT_DB!})
  const urlFile =
    sources.urlFile !== undefined
      ? {file: sources.urlFile, how: '--db-url-file'}
      : env.PLACEMAT_DB_FILE
        ? {file: env.PLACEMAT_DB_FILE, how: 'PLACEMAT_DB_FILE'}
        : undefined
  if (urlFile) {
    const from = `${urlFile.file} (${urlFile.how})`
    out.push({from, read: () => translated(from, readUrlFile(urlFile.file, from), true)})
  }
  const config = sources.config
  if (config?.connection !== undefined) {
    const from = `${config.file} [placement_database] connection`
    out.push({from, shown: maskPassword(config.connection), read: () => translated(from, config.connection!, false)})
  }
  return out
}

/** The database a daemon serves: the first source that names one (see the top of this file). */
export function chooseDatabase(sources: DatabaseSources, env: NodeJS.ProcessEnv = process.env): DatabaseChoice {
  const all = candidates(sources, env)
  const chosen = all[0]
  const target = chosen ? chosen.read() : path.join(dataDir(env), 'placemat.db')
  const from = chosen ? chosen.from : 'the data directory'
  const unused: string[] = []
  for (const c of all.slice(1)) {
    let same = false
    try {
      same = c.read() === target
    } catch {
      // a source below the one taken need not be readable
    }
    if (!same) unused.push(`${c.from}${c.shown ? ` (${c.shown})` : ''} not used: ${from} names the database`)
  }
  return {target, from, unused}
}

/**
 * The database of a daemon command's flags (`daemon start`, `status`, `stop`): `--db` counts only
 * when given (its default is the environment's or the data directory's, which come after).
 */
export function databaseOfFlags(
  flags: {db: string; 'db-url-file'?: string},
  dbGiven: boolean,
  config?: {file: string; connection?: string},
  env: NodeJS.ProcessEnv = process.env,
): DatabaseChoice {
  return chooseDatabase({flag: dbGiven ? flags.db : undefined, urlFile: flags['db-url-file'], config}, env)
}
