import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {randomBytes} from 'node:crypto'
import {isDatabaseUrl} from '../store/backends.js'

/** Where placemat keeps its database, admin token, pid and log files by default. */
export function dataDir(): string {
  if (process.env.PLACEMAT_HOME) return path.resolve(process.env.PLACEMAT_HOME)
  const base = process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share')
  return path.join(base, 'placemat')
}

export const defaultDbFile = () => process.env.PLACEMAT_DB || path.join(dataDir(), 'placemat.db')
export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 8778

/**
 * Files that belong to the daemon serving `dbFile`: they live beside a SQLite file, and in the
 * data directory for a PostgreSQL URL.
 */
export function daemonFiles(dbFile: string) {
  const dir = isDatabaseUrl(dbFile) ? dataDir() : path.dirname(path.resolve(dbFile))
  return {
    dir,
    pid: path.join(dir, 'placemat.pid'),
    log: path.join(dir, 'placemat.log'),
    token: path.join(dir, 'admin-token'),
    endpoint: path.join(dir, 'placemat.endpoint'),
  }
}

/** Reads the admin token beside `dbFile`, creating it (owner-only) on first use. */
export function ensureAdminToken(dbFile: string): string {
  const {dir, token} = daemonFiles(dbFile)
  fs.mkdirSync(dir, {recursive: true})
  try {
    return fs.readFileSync(token, 'utf8').trim()
  } catch {
    const value = randomBytes(24).toString('hex')
    fs.writeFileSync(token, value + '\n', {mode: 0o600, flag: 'wx'})
    return value
  }
}

export function readAdminToken(dbFile: string): string | undefined {
  try {
    return fs.readFileSync(daemonFiles(dbFile).token, 'utf8').trim()
  } catch {
    return undefined
  }
}
