// A placemat daemon as the scripts start it: the checkout's CLI, `daemon start --foreground`, its
// output appended to a log file of its own.
import {spawn} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

/** This checkout. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** The CLI of a (built) checkout, this one unless told. */
export const binOf = (checkout = ROOT) => path.join(checkout, 'bin/run.js')

/**
 * The daemon's warm-up line in its log (`pid`: that process's) once its rehearsal ended, which it
 * starts once it has had 100 ms with nothing to serve; null when none comes within `waitMs`
 * (--no-warm-up, or an older build). Benchmarks measure after it, not beside it.
 */
export async function warmedUp(logFile, {pid, waitMs = 60_000} = {}) {
  const end = Date.now() + waitMs
  while (Date.now() < end) {
    const line = fs
      .readFileSync(logFile, 'utf8')
      .split('\n')
      .reverse()
      .find((l) => l.includes('"event":"warm_up"') && (pid === undefined || l.includes(`"pid":${pid},`)))
    if (line) return JSON.parse(line)
    await new Promise((r) => setTimeout(r, 100))
  }
  return null
}

/** An admin's request at the latest microversion (the daemons run with --auth noauth2). */
export const ADMIN_HEADERS = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'}

/** The CLI's arguments for a daemon in the foreground on `db` at `port`, no authentication, then `extra`. */
export const daemonStartArgs = (db, port, extra = []) => [
  'daemon',
  'start',
  '--foreground',
  '--db',
  db,
  '--port',
  String(port),
  '--auth',
  'noauth2',
  ...extra,
]

/** Spawns `command args`, its output appended to `logFile`: the child, and the log's size before it. */
export function spawnToLog(command, args, {logFile, env = {}, cwd} = {}) {
  const fd = fs.openSync(logFile, 'a')
  const logFrom = fs.fstatSync(fd).size
  const child = spawn(command, args, {cwd, env: {...process.env, ...env}, stdio: ['ignore', fd, fd]})
  fs.closeSync(fd)
  return {child, logFrom}
}

/** The last `n` lines of a log file. */
export const logTail = (file, n = 15) => {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n')
  } catch {
    return '(no log)'
  }
}
