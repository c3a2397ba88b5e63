import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {databaseKind, isDatabaseUrl} from '../store/target.js'

/** node:crypto, loaded at its first use: most commands never hash, and loading it is some 10 ms of a start. */
const crypto = () => process.getBuiltinModule('node:crypto')

/** Where placemat keeps its database, admin token, pid and log files by default. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PLACEMAT_HOME) return path.resolve(env.PLACEMAT_HOME)
  const base = env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share')
  return path.join(base, 'placemat')
}

export const defaultDbFile = () => process.env.PLACEMAT_DB || path.join(dataDir(), 'placemat.db')
export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 8778

/**
 * Files that belong to the daemon serving `dbFile`, named after the database so that two
 * databases in one directory have two daemons: beside a SQLite file (`big.db` -> `big.pid`,
 * `big.log`), and in the data directory for a PostgreSQL URL (`postgres-HASH.pid`). The admin
 * token is the directory's: every daemon there accepts it.
 */
export function daemonFiles(dbFile: string) {
  const url = isDatabaseUrl(dbFile)
  const dir = url ? dataDir() : path.dirname(path.resolve(dbFile))
  const stem = url
    ? `${databaseKind(dbFile)}-${crypto().createHash('sha256').update(dbFile).digest('hex').slice(0, 12)}`
    : path.basename(dbFile).replace(/\.db$/, '')
  return {
    dir,
    pid: path.join(dir, `${stem}.pid`),
    log: path.join(dir, `${stem}.log`),
    token: path.join(dir, 'admin-token'),
    endpoint: path.join(dir, `${stem}.endpoint`),
    /** The State's image a clean stop leaves for the next start (a SQLite file's only; store/state-image-file.ts). */
    state: path.join(dir, `${stem}.state`),
  }
}

/** The admin token file can not be trusted: the daemon refuses to start on it. */
export class AdminTokenError extends Error {
  override name = 'AdminTokenError'
}

/** Shorter than this, a token is not a secret (the generated ones have 48 characters). */
const MIN_TOKEN_LENGTH = 16

/**
 * Reads the admin token beside `dbFile`, creating it on first use. It is written whole or not
 * at all (a temporary file renamed into place), so a crash never leaves an empty token that
 * an empty header would match; a file others can read, or one too short, is refused.
 */
export function ensureAdminToken(dbFile: string): string {
  const {dir, token} = daemonFiles(dbFile)
  fs.mkdirSync(dir, {recursive: true, mode: 0o700})
  if (!fs.existsSync(token)) createTokenFile(token)
  const stat = fs.statSync(token)
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
    const mode = (stat.mode & 0o777).toString(8)
    throw new AdminTokenError(`the admin token file ${token} can be read by others (mode ${mode}): chmod 600 ${token}`)
  }
  const value = fs.readFileSync(token, 'utf8').trim()
  if (!value) throw new AdminTokenError(`the admin token file ${token} is empty: remove it and start again to make a new one`)
  if (value.length < MIN_TOKEN_LENGTH || /\s/.test(value)) {
    throw new AdminTokenError(`the admin token in ${token} must be at least ${MIN_TOKEN_LENGTH} characters without spaces`)
  }
  return value
}

function createTokenFile(token: string): void {
  const temp = `${token}.${process.pid}.${crypto().randomBytes(4).toString('hex')}.tmp`
  const fd = fs.openSync(temp, 'wx', 0o600)
  try {
    fs.writeSync(fd, crypto().randomBytes(24).toString('hex') + '\n')
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  try {
    // link, not rename: two daemons starting at once keep the first token, never swap it.
    fs.linkSync(temp, token)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  } finally {
    fs.rmSync(temp, {force: true})
  }
}

export function readAdminToken(dbFile: string): string | undefined {
  try {
    return fs.readFileSync(daemonFiles(dbFile).token, 'utf8').trim()
  } catch {
    return undefined
  }
}

/**
 * Why a SQLite file that does not exist must have existed: its WAL or shared-memory file, its
 * daemon's pid record, log, endpoint or State image beside it, or the directory's admin token with no other
 * database beside it. A daemon
 * never starts an empty database there silently (every write the old one held would be lost
 * from sight); `placemat db init` makes a new one on purpose. Null when nothing says so.
 */
export function evidenceOfMissingDatabase(dbFile: string): string | null {
  if (isDatabaseUrl(dbFile) || dbFile === ':memory:') return null
  try {
    if (fs.statSync(dbFile).size > 0) return null
  } catch {
    // no such file: look for what a database leaves beside it
  }
  const files = daemonFiles(dbFile)
  if (!fs.existsSync(files.dir)) return null
  // SQLite's own WAL and shared-memory files outlive a deleted database.
  for (const f of [`${dbFile}-wal`, `${dbFile}-shm`, files.pid, files.log, files.endpoint, files.state]) if (fs.existsSync(f)) return f
  if (fs.existsSync(files.token)) {
    const others = fs.readdirSync(files.dir).filter((n) => n.endsWith('.db') && path.join(files.dir, n) !== path.resolve(dbFile))
    if (others.length === 0) return files.token
  }
  return null
}
