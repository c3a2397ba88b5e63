// The API nodes: placemat daemons (and, from placement.mjs, uwsgi's), each with a home and a log
// of its own, started until a candidates query answers, stopped with their children; their log
// lines worth reporting; their counters on /metrics.
import fs from 'node:fs'
import path from 'node:path'
import {DAEMON_NODE_OPTIONS} from '../../dist/src/daemon/node-flags.js'
import {ADMIN_HEADERS as HEADERS, daemonStartArgs, logTail, spawnToLog} from '../lib/daemon.mjs'
import {freePort} from '../lib/ports.mjs'
import {killTree, processTree, rssTree} from '../lib/proc.mjs'
import {call, FETCH_TIMEOUT_MS} from './http.mjs'
import {running, sleep} from './running.mjs'

const PROBE = '/allocation_candidates?resources=VCPU:1&limit=1'
const START_TIMEOUT_MS = 600000

/**
 * Starts `placemat daemon start --foreground` (the CLI at `bin`) on `db`, its own PLACEMAT_HOME
 * (several daemons on one PostgreSQL URL would otherwise share one pid record) and log file.
 */
export async function startDaemon({name, db, home, port, bin, extra = ['--no-answer-cache'], nodeOptions = []}) {
  port ??= await freePort()
  const args = daemonStartArgs(db, port, ['--log-level', 'warn', ...extra])
  return startNode({
    name,
    home,
    port,
    command: process.execPath,
    args: [...DAEMON_NODE_OPTIONS, ...nodeOptions, bin, ...args],
    env: {PLACEMAT_HOME: home},
    // At --log-level warn every line is worth reporting but the one saying where it listens.
    reported: (line) => !/placemat daemon listening on/.test(line),
    fields: {db, extra, bin, metrics: true},
  })
}

/**
 * Spawns an API node (`command args`, its output to HOME/node.log); resolves once a candidates
 * query answers 200 and `ready` holds of what it logged since, with the time from spawn and the
 * RSS of the node's processes then.
 */
export async function startNode({name, home, port, command, args, env, reported, ready = () => true, fields}) {
  fs.mkdirSync(home, {recursive: true})
  const logFile = path.join(home, 'node.log')
  const t0 = performance.now()
  const {child, logFrom} = spawnToLog(command, args, {logFile, env})
  running.children.add(child)
  child.once('exit', () => running.children.delete(child))
  const node = {name, home, port, url: `http://127.0.0.1:${port}`, child, logFile, reported, ...fields}
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before answering; its log ends:\n${logTail(logFile, 15)}`)
    }
    try {
      const res = await fetch(node.url + PROBE, {headers: HEADERS, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS)})
      await res.arrayBuffer()
      if (res.ok && ready(fs.readFileSync(logFile).subarray(logFrom).toString('utf8'))) {
        node.startup = (performance.now() - t0) / 1000
        node.rss = rssTree(child.pid)
        // What it logs from here on is the report's; what it logged while starting is noted apart.
        node.logStart = fs.statSync(logFile).size
        node.startLog = logSummary(node, logFrom, node.logStart)
        return node
      }
    } catch {}
    await sleep(50)
  }
  killTree(child)
  throw new Error(`${name} did not answer ${PROBE} within ${START_TIMEOUT_MS / 1000} s; its log ends:\n${logTail(logFile, 15)}`)
}

/** SIGTERM (SIGKILL after 20 s), then SIGKILL to any of its children still there. */
export async function stopDaemon(node) {
  const child = node.child
  if (child.exitCode !== null || child.signalCode !== null) return
  const tree = processTree(child.pid)
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  const timer = setTimeout(() => killTree(child), 20000)
  await exited
  clearTimeout(timer)
  for (const pid of tree.slice(1)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
}

/** Lines the node logged that are worth reporting (warn and worse), for the report. */
export function logSummary(node, from = node.logStart ?? 0, to = Infinity) {
  let text = ''
  try {
    text = fs.readFileSync(node.logFile).subarray(from, to).toString('utf8')
  } catch {}
  const lines = text.split('\n').filter((l) => l.trim() && node.reported(l))
  return {lines: lines.length, first: lines.slice(0, 3).map(brief)}
}

/** A log line, shortened: the JSON access log's status, request and error, or the text. */
function brief(line) {
  try {
    const j = JSON.parse(line)
    const err = typeof j.error === 'string' ? j.error : (j.error?.message ?? j.err?.message ?? j.msg ?? '')
    return `${j.status ?? `level ${j.level}`} ${j.method ?? ''} ${j.path ?? ''}${j.query ? `?${j.query}` : ''}: ${String(err).slice(0, 240)}`
  } catch {
    return line.slice(0, 300)
  }
}

/** Sum of a counter on GET /metrics, or null when the daemon does not export it. */
export async function metricValue(node, wanted) {
  if (!node.metrics) return null
  // 'name' sums every series of the metric; 'name{label="v"}' those with that label.
  const [metric, label] = wanted.includes('{')
    ? [wanted.slice(0, wanted.indexOf('{')), wanted.slice(wanted.indexOf('{') + 1, -1)]
    : [wanted, null]
  try {
    const r = await call(node.url, 'GET', '/metrics')
    if (r.status !== 200) return null
    let found = false
    let sum = 0
    for (const line of r.text.split('\n')) {
      if (line.startsWith('#')) continue
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line)
      if (m && m[1] === metric && (label === null || (m[2] ?? '').includes(label))) {
        found = true
        sum += Number(m[3])
      }
    }
    return found ? sum : null
  } catch {
    return null
  }
}
