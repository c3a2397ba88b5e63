// The daemons of the fault run: `placemat daemon start --foreground` with short database timeouts,
// stopped, waited on until healthy, and their log lines since a mark, grouped.
import fs from 'node:fs'
import path from 'node:path'
import {binOf, daemonStartArgs, logTail, ROOT, spawnToLog} from '../lib/daemon.mjs'
import {freePort} from '../lib/ports.mjs'
import {health} from './http.mjs'
import {live, now, progress, sleep, state} from './live.mjs'

const BIN = binOf()
const DB_FLAGS = ['--db-connect-timeout', '2', '--db-statement-timeout', '5', '--db-lock-timeout', '5']

/**
 * `placemat daemon start --foreground` on `db`, its own PLACEMAT_HOME and log file (outside the
 * database's directory). Resolves once it listens (or has exited); with `serving`, once its health
 * answers 200.
 */
export async function startDaemon(env, name, db, extra = [], {serving = true, expectExit = false, port} = {}) {
  const d = env.daemons.find((x) => x.name === name) ?? {
    name,
    db,
    extra,
    expectExit,
    home: path.join(live.work, 'homes', `${env.name}-${name}`),
    logFile: path.join(live.work, 'logs', `${env.name}-${name}.log`),
  }
  if (!env.daemons.includes(d)) env.daemons.push(d)
  fs.mkdirSync(d.home, {recursive: true})
  fs.mkdirSync(path.dirname(d.logFile), {recursive: true})
  d.port = port ?? d.port ?? (await freePort())
  d.url = `http://127.0.0.1:${d.port}`
  d.stopping = false
  const args = ['--max-semi-space-size=64', BIN, ...daemonStartArgs(d.db, d.port, ['--log-level', 'warn', ...DB_FLAGS, ...d.extra])]
  const {child, logFrom} = spawnToLog(process.execPath, args, {logFile: d.logFile, env: {PLACEMAT_HOME: d.home}, cwd: ROOT})
  d.logStart = logFrom
  d.child = child
  d.startedAt = now()
  live.children.add(child)
  d.exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      live.children.delete(child)
      d.exitInfo = {code, signal, at: now()}
      if (!d.stopping && !d.expectExit) {
        const e = {daemon: d.name, code, signal, at: now(), phase: state.phase?.id ?? 'set-up', log: logTail(d.logFile, 12)}
        progress(`daemon ${d.name} EXITED by itself (code ${code}, signal ${signal})`)
        ;(state.phase ? state.phase.exits : state.setupExits).push(e)
      }
      resolve({code, signal})
    })
  })
  d.listening = false
  const deadline = now() + 60000
  while (now() < deadline) {
    if (!alive(d)) return d
    try {
      const r = await fetch(d.url + '/', {signal: AbortSignal.timeout(2000)})
      await r.arrayBuffer()
      d.listening = true
      break
    } catch {
      await sleep(50)
    }
  }
  if (serving) await waitHealthy([d], 180000)
  return d
}

export const alive = (d) => d.child && d.child.exitCode === null && d.child.signalCode === null

export async function stopDaemon(d) {
  if (!alive(d)) return d.exitInfo
  d.stopping = true
  d.child.kill('SIGTERM')
  const timer = setTimeout(() => alive(d) && d.child.kill('SIGKILL'), 20000)
  const r = await d.exited
  clearTimeout(timer)
  return r
}

/** Waits until every daemon's health says ok with no journal lag; throws naming who is not. */
export async function waitHealthy(daemons, ms = 90000) {
  const deadline = now() + ms
  const last = {}
  while (now() < deadline) {
    let all = true
    for (const d of daemons) {
      if (!alive(d))
        throw new Error(`daemon ${d.name} exited (${d.exitInfo?.code ?? d.exitInfo?.signal}); its log ends:\n${logTail(d.logFile, 10)}`)
      const h = await health(d)
      last[d.name] = h.text
      if (!(h.status === 200 && h.json?.status === 'ok' && (h.json?.journal?.lag ?? 0) === 0)) all = false
    }
    if (all) return
    await sleep(200)
  }
  throw new Error(`not healthy within ${ms / 1000} s: ${JSON.stringify(last).slice(0, 600)}`)
}

/** New log lines of a daemon since `from` (a byte offset), grouped: count and a sample each. */
export function logLines(d, from = 0) {
  let text = ''
  try {
    const buf = fs.readFileSync(d.logFile)
    text = buf.subarray(from).toString('utf8')
  } catch {}
  const groups = new Map()
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    let key = line.slice(0, 120)
    let level = null
    let request = null
    try {
      const j = JSON.parse(line)
      level = j.level
      // The access log (a line a request, warn and worse at --log-level warn): by status and route.
      if (j.msg === 'request' && j.status) request = `${j.status} ${j.method} ${(j.path ?? '').replace(/[0-9a-f-]{36}/g, '{uuid}')}`
      key =
        request ??
        `${j.level} ${j.msg ?? ''} ${j.event ?? ''} ${j.kind ?? ''} ${String(j.cause ?? j.err?.message ?? '')
          .replace(/\d+/g, 'N')
          .slice(0, 80)}`
    } catch {}
    const g = groups.get(key) ?? {count: 0, level, request, sample: line.slice(0, 600)}
    g.count++
    groups.set(key, g)
  }
  return [...groups.values()]
}
