import {DAEMON_NODE_OPTIONS} from './node-flags.js'
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {daemonFiles} from './paths.js'
import {describeTarget, isDatabaseUrl, resolveTarget} from '../store/target.js'
import {lastErrorOf} from './log-line.js'

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/run.js')

export interface DaemonRecord {
  pid: number
  url: string
  db: string
  /** The daemon's --shutdown-timeout, ms: how long `daemon stop` waits for its drain. */
  stopTimeoutMs?: number
}

/** What `daemon stop` waits for a daemon that did not say (one from before --shutdown-timeout). */
const DEFAULT_STOP_WAIT_MS = 30_000

/** The record of the daemon serving `dbFile`; a record that names another database is not its. */
export function readRecord(dbFile: string): DaemonRecord | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(daemonFiles(dbFile).pid, 'utf8')) as DaemonRecord
    return record.db === resolveTarget(dbFile) ? record : undefined
  } catch {
    return undefined
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Records the daemon serving `dbFile` (so `daemon status/stop` and the CLI can find it): owner-only,
 * and naming a PostgreSQL database without its password (resolveTarget).
 */
export function writeRecord(dbFile: string, record: DaemonRecord): void {
  const files = daemonFiles(dbFile)
  fs.mkdirSync(files.dir, {recursive: true, mode: 0o700})
  fs.writeFileSync(files.pid, JSON.stringify({...record, db: resolveTarget(record.db)}) + '\n', {mode: 0o600})
  fs.chmodSync(files.pid, 0o600)
}

/**
 * The arguments and environment of a detached daemon: a database URL that holds a password goes
 * in its environment (PLACEMAT_DB), not on its command line, which every local user can read.
 */
export function detachedCommand(args: string[], dbFile: string): {args: string[]; env: Record<string, string>} {
  if (!isDatabaseUrl(dbFile) || describeTarget(dbFile) === dbFile) return {args, env: {}}
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--db') i++
    else if (!args[i].startsWith('--db=')) out.push(args[i])
  }
  return {args: out, env: {PLACEMAT_DB: dbFile}}
}

export function removeRecord(dbFile: string, pid: number): void {
  if (readRecord(dbFile)?.pid === pid) fs.rmSync(daemonFiles(dbFile).pid, {force: true})
}

/**
 * The status of GET `url`, or undefined when nothing answered within a second. Over https the
 * daemon's own certificate is not verified: this asks a local daemon whether it listens (its
 * certificate is often self-signed, or names the balancer's host), and sends nothing secret.
 */
async function probe(url: string): Promise<number | undefined> {
  // Loaded here: every command reads the daemon's record through this module, few probe (TLS alone is some 20 ms to load).
  const {get} = url.startsWith('https:') ? await import('node:https') : await import('node:http')
  return new Promise((resolve) => {
    const req = get(url, {timeout: 1000, rejectUnauthorized: false, agent: false}, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
      res.on('error', () => resolve(undefined))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(undefined))
  })
}

/**
 * Polls GET / until it answers 200 (ready) or the time runs out: 'starting' when the daemon
 * listens but still waits for its database (503), false when it never answered.
 */
export async function waitReady(url: string, timeoutMs: number): Promise<'ready' | 'starting' | false> {
  const until = Date.now() + timeoutMs
  let listening = false
  while (Date.now() < until) {
    const status = await probe(url + '/')
    if (status !== undefined && status >= 200 && status < 300) return 'ready'
    if (status !== undefined) listening = true
    await new Promise((r) => setTimeout(r, 100))
  }
  return listening ? 'starting' : false
}

/**
 * What a daemon's health answer says of it: whether it answered at all, and the newest schema
 * migration it knows (its release's; absent from a daemon older than the field).
 */
export async function daemonHealth(url: string, timeoutMs = 2000): Promise<{answering: boolean; healthy: boolean; schema?: string}> {
  try {
    const res = await fetch(`${url}/placemat/v1/health`, {signal: AbortSignal.timeout(timeoutMs)})
    const body = (await res.json().catch(() => null)) as {schema?: unknown} | null
    return {answering: true, healthy: res.ok, schema: typeof body?.schema === 'string' ? body.schema : undefined}
  } catch {
    return {answering: false, healthy: false}
  }
}

/** Set for a daemon `daemon start` detached: the parent made its log and token, and checked its database first. */
export const DETACHED_FROM = 'PLACEMAT_DETACHED_FROM'

/** A daemon `daemon start` detached: its pid, its exit (code, or null for a signal), and where its lines begin in its log. */
export interface DetachedChild {
  pid: number
  exited: Promise<number | null>
  hasExited(): boolean
  logFrom: number
}

/** Starts `placemat daemon start --foreground` detached, its output in the log file. */
export function startDetached(args: string[], dbFile: string): DetachedChild {
  const files = daemonFiles(dbFile)
  fs.mkdirSync(files.dir, {recursive: true, mode: 0o700})
  const log = fs.openSync(files.log, 'a', 0o600)
  const logFrom = fs.fstatSync(log).size
  const command = detachedCommand(args, dbFile)
  // node:child_process here, at its one use: every command loads this file (the daemon probe).
  const {spawn} = process.getBuiltinModule('node:child_process')
  const child = spawn(process.execPath, [...DAEMON_NODE_OPTIONS, BIN, 'daemon', 'start', '--foreground', ...command.args], {
    detached: true,
    stdio: ['ignore', log, log],
    // The database was looked for before the log and the token were made (see evidenceOfMissingDatabase).
    env: {...process.env, ...command.env, [DETACHED_FROM]: String(process.pid)},
  })
  fs.closeSync(log)
  let done = false
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      done = true
      resolve(code)
    })
    child.once('error', () => {
      done = true
      resolve(1)
    })
  })
  child.unref()
  return {pid: child.pid!, exited, hasExited: () => done, logFrom}
}

/** What became of a detached daemon: serving, listening but waiting for its database, silent, or exited (with its last error line). */
export type StartOutcome =
  | {state: 'ready' | 'starting'; record: DaemonRecord}
  | {state: 'silent'; record: DaemonRecord}
  | {state: 'exited'; code: number; said?: string}

/**
 * Waits for the daemon `child` to serve at `url`. It is its own answer that counts, not whatever
 * answers there (another daemon on the port): the child records itself once it listens, and only
 * then is `url` asked. A child that exits first is reported with its exit code and the last error
 * line it logged. A child silent within the time is recorded (for `daemon status/stop`) as it runs.
 */
export async function awaitStart(child: DetachedChild, dbFile: string, url: string, timeoutMs: number): Promise<StartOutcome> {
  const until = Date.now() + timeoutMs
  let listening = false
  const exited = async (): Promise<StartOutcome> => {
    const code = (await child.exited) ?? 1
    return {state: 'exited', code: code === 0 ? 1 : code, said: lastErrorOf(readFrom(daemonFiles(dbFile).log, child.logFrom))}
  }
  while (Date.now() < until) {
    if (child.hasExited()) return exited()
    const own = readRecord(dbFile)
    if (own?.pid === child.pid) {
      const status = await probe(url + '/')
      if (status !== undefined && status >= 200 && status < 300) return {state: 'ready', record: own}
      if (status !== undefined) listening = true
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  if (child.hasExited()) return exited()
  const own = readRecord(dbFile)
  if (listening && own?.pid === child.pid) return {state: 'starting', record: own}
  const record = own?.pid === child.pid ? own : {pid: child.pid, url, db: resolveTarget(dbFile)}
  writeRecord(dbFile, record)
  return {state: 'silent', record}
}

/** The text of `file` from byte `offset` on. */
function readFrom(file: string, offset: number): string {
  try {
    const fd = fs.openSync(file, 'r')
    try {
      const size = fs.fstatSync(fd).size
      const buf = Buffer.alloc(Math.max(0, size - offset))
      fs.readSync(fd, buf, 0, buf.length, offset)
      return buf.toString('utf8')
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return ''
  }
}

/** SIGTERM, then waits as long as the daemon's drain may take (and a little more for the exit itself). */
export async function stopDaemon(
  record: DaemonRecord,
  dbFile: string,
  timeoutMs = (record.stopTimeoutMs ?? DEFAULT_STOP_WAIT_MS) + 5000,
): Promise<boolean> {
  if (isAlive(record.pid)) process.kill(record.pid, 'SIGTERM')
  const until = Date.now() + timeoutMs
  while (isAlive(record.pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100))
  const stopped = !isAlive(record.pid)
  if (stopped) fs.rmSync(daemonFiles(dbFile).pid, {force: true})
  return stopped
}
