#!/usr/bin/env node
// npm run bench -- --scaleout: several placemat API nodes on one PostgreSQL database (each keeps
// the whole cloud in memory and follows the others' commits through the change journal).
// It starts its own throwaway PostgreSQL cluster (default durability settings), loads N flat
// placeload providers through one daemon's batch API, then for each daemon count K starts K
// daemons (--no-answer-cache) and measures:
//   churn         8 clients for S seconds, each request to the next node in turn: a candidates
//                 query (VCPU:1,MEMORY_MB:128,DISK_GB:5, limit=5), a claim (PUT /allocations) of
//                 the first candidate that can still be written (on 409 the next), releasing a
//                 client's oldest claim once it holds 20; claims/s, claim p50/p99, 409s, 5xx and
//                 network errors
//   overcommit    usages against inventories of every provider a claim touched, read from a node
//                 other than the last writer's for half of them (must be 0)
//   after write   K >= 2: a write on node A (inventory reserved, traits, aggregates in turn), then
//                 the first limit=5 candidates query on node B, timed (30 rounds, no churn); beside it
//                 the same query when nothing was written before it (what catching up adds)
//   start-up, RSS each daemon, spawn to its first answered candidates query; VmRSS then
//   --kill        one node SIGKILLed at S/3 of the churn and restarted at 2S/3: the survivors'
//                 5xx and errors, requests lost in flight, restart to serving, and the survivors'
//                 full reloads (placemat_state_reloads_total on /metrics)
//   --pin         each client sends all its requests to one node (client i to node i mod K), as a
//                 load balancer hashing on the source sends each scheduler to one node, instead of
//                 every request to the next node in turn
//   --sqlite      one daemon on a SQLite file; the writes of "after write" made by the CLI (--db)
//   --fixed-load R  instead of the churn, an open loop offering R claims/s (GET candidates limit=5,
//                 PUT of the first candidate that can be written, the oldest claim released once 160
//                 are held), each request to the next node in turn, for S s after --warm-up W s (15)
//                 unmeasured: each daemon's and PostgreSQL's CPU per claim at a load that leaves the
//                 cores partly idle. For K >= 2 also by claim (a claim's requests to one node), pinned
//                 to node A (the others kept current by one read a claim) and those reads alone, which
//                 split K nodes' extra CPU into applying others' changes, the writer's own, and
//                 interleaving (scripts/scaleout-fixed-load.mjs). --cpu-prof DIR runs the daemons under
//                 node --cpu-prof (profiles kept in DIR) and adds each pass's functions with the most
//                 self time per claim
//   --placement   after the placemat rows, the same for OpenStack Placement (Debian's placement-api
//                 8.0.0, python3-placement and python3-psycopg2) on the same PostgreSQL cluster: its own
//                 database (placement-manage db sync, auth_strategy noauth2), the same providers
//                 written straight into its tables (it has no batch API), K uwsgi instances on their
//                 own ports, each 2 processes x 4 threads as ../shared/perf/run-anchor.sh serves it;
//                 the same churn, check and after-write rounds through the same API (microversion
//                 latest = 1.39 on 8.0.0). CPU per claim counts each uwsgi master and its workers;
//                 no round trips (its transactions are several statements each: their number per
//                 claim is shown instead) and no /metrics counters. Placement answers a candidates
//                 query in about 100 ms on 1,000 providers and 1.4 s on 10,000, so with --placement
//                 --providers defaults to 1,000 (for placemat too: the rows compare the same cloud);
//                 then a Placement row takes about S + 20 s, a run with --daemons 1,2 about two minutes.
//                 --placement alone runs Placement on the --daemons counts, --placement 1,2 on those.
//                 Its log lines at WARNING are mostly its "Over capacity" notes of the churn's 409s
//
//   npm run bench -- --scaleout                              # 10,000 providers; 1, 2, 3 daemons; 20 s
//   npm run bench -- --scaleout --providers 2000 --daemons 1,3 --seconds 10
//   npm run bench -- --scaleout --delay-ms 1                 # a TCP proxy adds 1 ms round trip to PostgreSQL
//                                                            # (D/2 each way by setTimeout: Node's timers wait at least 1 ms,
//                                                            # so small delays come out larger; the table shows the measured one)
//   npm run bench -- --scaleout --kill --daemons 3           # SIGKILL one node at S/3, restart it at 2S/3
//   npm run bench -- --scaleout --pin --daemons 1,3          # each client to one node (source-hashing balancer)
//   npm run bench -- --scaleout --fixed-load 100 --daemons 1,3 --providers 1000   # CPU per claim at 100 claims/s offered
//   npm run bench -- --scaleout --sqlite                     # one daemon on SQLite, writes by the CLI (--db)
//   npm run bench -- --scaleout --json out.jsonl             # the JSON lines to a file (else stderr)
//   npm run bench -- --scaleout --placemat ../old --label old  # the daemons of another (built) checkout, to compare
//   npm run bench -- --scaleout --placement --daemons 1,2    # placemat, then OpenStack Placement, on 1 and 2 nodes
//
// The table goes to stdout, progress and (without --json) one JSON line per configuration to stderr.
import {spawn, execFileSync} from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import {CLOCK_TICKS, statFields} from './lib/proc.mjs'
import {fileURLToPath} from 'node:url'
import pg from 'pg'
import {DAEMON_NODE_OPTIONS} from '../dist/src/daemon/node-flags.js'
import {loadThroughBatch, loadIntoPlacementTables, AGGREGATES} from './huge-sets.mjs'
import {freePort} from './lib/ports.mjs'
import {postgresBin} from './lib/postgres.mjs'
import {measureFixedLoad, passProfiles, printFixedLoad, printProfiles} from './scaleout-fixed-load.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

// ---------------------------------------------------------------------------------------------
// Options

const USAGE = `usage: node scripts/bench-scaleout.mjs [--providers N] [--daemons 1,2,3] [--seconds S] [--delay-ms D] [--kill] [--pin] [--sqlite] [--placement [1,2]] [--fixed-load R [--warm-up S] [--cpu-prof DIR]] [--json FILE] [--placemat DIR] [--label L] [--rounds 30]`
const argv = process.argv.slice(2).filter((a) => a !== '--scaleout')
const VALUED = new Set([
  'providers',
  'daemons',
  'seconds',
  'delay-ms',
  'json',
  'placemat',
  'label',
  'rounds',
  'fixed-load',
  'cpu-prof',
  'warm-up',
])
const FLAGS = new Set(['kill', 'sqlite', 'pin', 'help'])
// A flag that may be followed by a value of this form.
const OPTIONAL = {placement: /^\d+(,\d+)*$/}
const given = {}
for (let i = 0; i < argv.length; i++) {
  const m = /^--([a-z-]+)$/.exec(argv[i])
  if (m && FLAGS.has(m[1])) given[m[1]] = true
  else if (m && OPTIONAL[m[1]]) given[m[1]] = OPTIONAL[m[1]].test(argv[i + 1] ?? '') ? argv[++i] : true
  else if (m && VALUED.has(m[1])) {
    if (i + 1 >= argv.length) fail(`--${m[1]} needs a value\n${USAGE}`)
    given[m[1]] = argv[++i]
  } else fail(`unknown argument ${argv[i]}\n${USAGE}`)
}
if (given.help) {
  console.log(USAGE)
  process.exit(0)
}

function fail(message) {
  process.stderr.write(`bench-scaleout: ${message}\n`)
  process.exit(2)
}
const positiveInt = (name, dflt) => {
  const v = given[name] ?? String(dflt)
  if (!/^\d+$/.test(v) || Number(v) < 1) fail(`--${name} takes a positive integer, not ${v}`)
  return Number(v)
}

const PLACEMENT = given.placement !== undefined
// Placement takes about 1.4 s a candidates query on 10,000 providers: a smaller cloud by default.
const PROVIDERS = positiveInt('providers', PLACEMENT ? 1000 : 10000)
const SECONDS = positiveInt('seconds', 20)
const KILL = Boolean(given.kill)
const PIN = Boolean(given.pin)
const SQLITE = Boolean(given.sqlite)
const DELAY_MS = given['delay-ms'] === undefined ? 0 : Number(given['delay-ms'])
if (!Number.isFinite(DELAY_MS) || DELAY_MS < 0) fail(`--delay-ms takes a number of milliseconds >= 0, not ${given['delay-ms']}`)
const counts = (name, list) =>
  list.split(',').map((s) => {
    if (!/^\d+$/.test(s.trim()) || Number(s) < 1) fail(`--${name} takes node counts like 1,2,3, not ${list}`)
    return Number(s)
  })
const DAEMON_COUNTS = counts('daemons', given.daemons ?? (KILL ? '3' : '1,2,3'))
const PLACEMENT_COUNTS = !PLACEMENT ? [] : given.placement === true ? DAEMON_COUNTS : counts('placement', given.placement)
if (PLACEMENT && (KILL || SQLITE)) fail('--placement runs on PostgreSQL without --kill: --kill and --sqlite do not apply to it')
if (KILL && DAEMON_COUNTS.some((k) => k < 2))
  fail('--kill needs every daemon count to be 2 or more (e.g. --daemons 3): the killed node must have survivors')
if (SQLITE && (KILL || DELAY_MS || given.daemons))
  fail('--sqlite runs one daemon on a SQLite file: --kill, --delay-ms and --daemons do not apply')
const FIXED_LOAD = given['fixed-load'] === undefined ? null : Number(given['fixed-load'])
if (FIXED_LOAD !== null && !(FIXED_LOAD > 0 && Number.isFinite(FIXED_LOAD)))
  fail(`--fixed-load takes claims per second > 0, not ${given['fixed-load']}`)
if (FIXED_LOAD !== null && (KILL || SQLITE || PIN || PLACEMENT))
  fail('--fixed-load runs placemat on PostgreSQL, round-robin then pinned: --kill, --sqlite, --pin and --placement do not apply')
const WARM_UP = given['warm-up'] === undefined ? 15 : Number(given['warm-up'])
if (!(WARM_UP >= 0)) fail(`--warm-up takes seconds >= 0, not ${given['warm-up']}`)
if (given['warm-up'] !== undefined && FIXED_LOAD === null) fail('--warm-up goes with --fixed-load')
const CPU_PROF = given['cpu-prof'] === undefined ? null : path.resolve(given['cpu-prof'])
if (CPU_PROF && FIXED_LOAD === null) fail('--cpu-prof goes with --fixed-load (its profiles are cut to the passes)')
const JSON_FILE = given.json
// Another build's daemons (a checkout of an earlier placemat, built), to compare both in one run.
const BIN = path.join(path.resolve(given.placemat ?? root), 'bin/run.js')
const LABEL = given.label ? `${given.label}, ` : ''
const CLIENTS = 8
const HOLD = 20
const ROUNDS = positiveInt('rounds', 30)
const FETCH_TIMEOUT_MS = 30000
const START_TIMEOUT_MS = 600000

const HEADERS = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
const PROBE = '/allocation_candidates?resources=VCPU:1&limit=1'
// The smallest request placeload's flat providers can take: their MEMORY_MB has min_unit 128 and
// DISK_GB min_unit 5, so MEMORY_MB:64,DISK_GB:1 would never have a candidate.
const CHURN_QUERY = '/allocation_candidates?resources=VCPU:1,MEMORY_MB:128,DISK_GB:5&limit=5'
const AW_QUERY = `resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=${AGGREGATES[0]}&required=HW_CPU_X86_AVX2`
const EXTRA_AGGREGATE = '00000000-0000-4000-8000-00000000b0b0'

const progress = (msg) => process.stderr.write(`[scaleout ${new Date().toISOString().slice(11, 19)}] ${msg}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const pct = (xs, p) => {
  if (!xs.length) return null
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]
}
const fmtMs = (v) => (v === null || v === undefined ? '—' : v >= 100 ? v.toFixed(0) : v.toFixed(1))

// ---------------------------------------------------------------------------------------------
// Everything started here, so that it is stopped on the way out, whatever the way.

const running = {children: new Set(), pgStop: null, dirs: [], servers: new Set()}
let cleanedUp = false

/** Synchronous last-resort cleanup: on exit, a signal or a crash. */
function cleanupNow() {
  if (cleanedUp) return
  cleanedUp = true
  for (const child of running.children) {
    if (child.exitCode === null && child.signalCode === null) killTree(child)
  }
  for (const server of running.servers) {
    try {
      server.close()
    } catch {}
  }
  if (running.pgStop) {
    try {
      running.pgStop('immediate')
    } catch (err) {
      process.stderr.write(`bench-scaleout: stopping PostgreSQL: ${err.message}\n`)
    }
  }
  for (const dir of running.dirs) fs.rmSync(dir, {recursive: true, force: true})
}
process.on('exit', cleanupNow)
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    progress(`${sig}: stopping the daemons and PostgreSQL`)
    cleanupNow()
    process.exit(130)
  })
}

// ---------------------------------------------------------------------------------------------
// HTTP

// The clients share this machine's cores with the nodes they measure: requests go through
// node:http on kept-alive connections, which costs the bench a fraction of what fetch does.
const AGENT = new http.Agent({keepAlive: true, maxSockets: 64})

/** One request; never throws for an HTTP status (network errors and timeouts do throw). */
function call(url, method, pathname, body) {
  const t0 = performance.now()
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const headers = payload === undefined ? HEADERS : {...HEADERS, 'content-length': Buffer.byteLength(payload)}
  return new Promise((resolve, reject) => {
    const req = http.request(url + pathname, {method, headers, agent: AGENT, timeout: FETCH_TIMEOUT_MS}, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const text = chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString()
        // Time to the last byte, as ../shared/perf measures (parsing the answer is the client's cost).
        const ms = performance.now() - t0
        let json = null
        if (text) {
          try {
            json = JSON.parse(text)
          } catch {}
        }
        resolve({status: res.statusCode, json, text, ms})
      })
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${FETCH_TIMEOUT_MS} ms`)))
    req.on('error', reject)
    req.end(payload)
  })
}

/** A request that must answer one of `ok`; throws naming the request and the answer otherwise. */
async function must(url, method, pathname, body, ok = [200]) {
  let r
  try {
    r = await call(url, method, pathname, body)
  } catch (err) {
    throw new Error(`${method} ${url}${pathname}: ${err.cause?.message ?? err.message}`)
  }
  if (!ok.includes(r.status)) throw new Error(`${method} ${url}${pathname}: ${r.status} ${r.text.slice(0, 400)}`)
  return r.json
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a throwaway cluster, durable defaults (fsync, synchronous_commit, full_page_writes on)

function postgresServerBin() {
  const bin = postgresBin()
  if (!bin) throw new Error('no PostgreSQL server binaries (initdb) under /usr/lib/postgresql: install postgresql-15, or use --sqlite')
  if (!bin.includes('/15/')) progress(`PostgreSQL 15 not found; using ${bin}`)
  return bin
}

async function startPostgres() {
  const bin = postgresServerBin()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-scaleout-pg-'))
  running.dirs.push(dir)
  // initdb refuses to run as root: run the server as the postgres user then.
  const asRoot = process.getuid?.() === 0
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir])
  const asPg = (cmd, args) => {
    try {
      return asRoot
        ? execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], {stdio: 'pipe'})
        : execFileSync(cmd, args, {stdio: 'pipe'})
    } catch (err) {
      throw new Error(
        `${path.basename(cmd)} ${args.join(' ')} failed: ${String(err.stderr ?? err.message)
          .trim()
          .slice(-800)}`,
      )
    }
  }
  const data = path.join(dir, 'data')
  const log = path.join(dir, 'log')
  asPg(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8'])
  const port = await freePort()
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c shared_buffers=256MB`
  try {
    asPg(path.join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-o', opts, '-w', 'start'])
  } catch (err) {
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-800) : ''
    throw new Error(`${err.message}\n${tail}`)
  }
  running.pgStop = (mode = 'fast') => asPg(path.join(bin, 'pg_ctl'), ['-D', data, '-m', mode, '-w', 'stop'])
  running.statsUrl = `postgres://postgres@127.0.0.1:${port}/placemat_scaleout`
  running.postmaster = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
  const admin = new pg.Client({connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`})
  await admin.connect()
  try {
    await admin.query('create database placemat_scaleout')
  } finally {
    await admin.end()
  }
  return {port, url: (p = port) => `postgres://postgres@127.0.0.1:${p}/placemat_scaleout`, log}
}

/** Median round trip of `select 1` on a connection to `port` (to see what the proxy adds). */
async function pingMs(port) {
  const c = new pg.Client({connectionString: `postgres://postgres@127.0.0.1:${port}/placemat_scaleout`})
  await c.connect()
  try {
    const times = []
    for (let i = 0; i < 40; i++) {
      const t0 = performance.now()
      await c.query('select 1')
      times.push(performance.now() - t0)
    }
    return pct(times.slice(5), 50)
  } finally {
    await c.end()
  }
}

// ---------------------------------------------------------------------------------------------
// Daemons

const status = (pid, field) => {
  try {
    return Math.round(Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]) / 1024)
  } catch {
    return null
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc; null where it is gone. */
const cpuSeconds = (pid) => {
  const f = statFields(pid)
  return f ? (Number(f[11]) + Number(f[12])) / CLOCK_TICKS : null
}

/**
 * A process and its descendants (PostgreSQL's postmaster and its backends, a uwsgi master and
 * its workers; a placemat daemon alone).
 */
function processTree(root) {
  const children = new Map()
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    const f = statFields(d)
    if (!f) continue
    const ppid = Number(f[1])
    if (!children.has(ppid)) children.set(ppid, [])
    children.get(ppid).push(Number(d))
  }
  const pids = [root]
  for (let i = 0; i < pids.length; i++) pids.push(...(children.get(pids[i]) ?? []))
  return pids
}

/** SIGKILL to a child we started and to its own children (uwsgi's workers outlive a killed master). */
function killTree(child) {
  for (const pid of processTree(child.pid)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
}

/** VmRSS in MiB of a process and its descendants. */
const rssTree = (pid) => processTree(pid).reduce((a, p) => a + (status(p, 'VmRSS') ?? 0), 0)

/**
 * Transactions the server has ended in the database at `statsUrl`: each of placemat's round trips
 * is one (its statements go in one simple query). The server publishes them within a second.
 */
async function serverTransactions(statsUrl) {
  if (!statsUrl) return null
  await sleep(1100)
  const c = new pg.Client({connectionString: statsUrl})
  await c.connect()
  try {
    const r = await c.query('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()')
    return Number(r.rows[0].n)
  } finally {
    await c.end()
  }
}

/** CPU seconds used so far by the daemons, the PostgreSQL server (when there is one) and this process. */
function cpuNow(nodes) {
  const sum = (pids) => pids.reduce((a, p) => a + (cpuSeconds(p) ?? 0), 0)
  const self = process.cpuUsage()
  return {
    daemons: sum(nodes.flatMap((n) => processTree(n.child.pid))),
    postgres: running.postmaster ? sum(processTree(running.postmaster)) : 0,
    bench: (self.user + self.system) / 1e6,
    // The delay proxy, when there is one: it shares the cores with the rest.
    ...(running.proxyPid ? {proxy: cpuSeconds(running.proxyPid) ?? 0} : {}),
  }
}

const logTail = (file, n = 15) => {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n')
  } catch {
    return '(no log)'
  }
}

/**
 * Starts `placemat daemon start --foreground` on `db`, its own PLACEMAT_HOME (several daemons on
 * one PostgreSQL URL would otherwise share one pid record) and log file.
 */
async function startDaemon({name, db, home, port, extra = ['--no-answer-cache'], nodeOptions = []}) {
  port ??= await freePort()
  const args = ['daemon', 'start', '--foreground', '--db', db, '--port', String(port), '--auth', 'noauth2', '--log-level', 'warn', ...extra]
  return startNode({
    name,
    home,
    port,
    command: process.execPath,
    args: [...DAEMON_NODE_OPTIONS, ...nodeOptions, BIN, ...args],
    env: {PLACEMAT_HOME: home},
    // At --log-level warn every line is worth reporting but the one saying where it listens.
    reported: (line) => !/placemat daemon listening on/.test(line),
    fields: {db, extra, metrics: true},
  })
}

/**
 * Spawns an API node (`command args`, its output to HOME/node.log); resolves once a candidates
 * query answers 200 and `ready` holds of what it logged since, with the time from spawn and the
 * RSS of the node's processes then.
 */
async function startNode({name, home, port, command, args, env, reported, ready = () => true, fields}) {
  fs.mkdirSync(home, {recursive: true})
  const logFile = path.join(home, 'node.log')
  const fd = fs.openSync(logFile, 'a')
  const logFrom = fs.fstatSync(fd).size
  const t0 = performance.now()
  const child = spawn(command, args, {stdio: ['ignore', fd, fd], env: {...process.env, ...env}})
  fs.closeSync(fd)
  running.children.add(child)
  child.once('exit', () => running.children.delete(child))
  const node = {name, home, port, url: `http://127.0.0.1:${port}`, child, logFile, reported, ...fields}
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before answering; its log ends:\n${logTail(logFile)}`)
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
  throw new Error(`${name} did not answer ${PROBE} within ${START_TIMEOUT_MS / 1000} s; its log ends:\n${logTail(logFile)}`)
}

/** SIGTERM (SIGKILL after 20 s), then SIGKILL to any of its children still there. */
async function stopDaemon(node) {
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
function logSummary(node, from = node.logStart ?? 0, to = Infinity) {
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
async function metricValue(node, wanted) {
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

// ---------------------------------------------------------------------------------------------
// The churn: claims and releases, every request to the next node in turn.

async function churn(nodes, seconds, {kill} = {}) {
  const live = [...nodes]
  let counter = 0
  const stats = {
    statuses: {},
    byMethod: {},
    claims: 0,
    latencies: [],
    conflicts: 0,
    errors: 0,
    errorSamples: [],
    inFlightKilled: 0,
    releases: 0,
    emptyAnswers: 0,
  }
  /** provider uuid -> index of the node that served the last write touching it */
  const touched = new Map()
  /** consumers whose claim or release had no clear answer: looked up after the churn */
  const uncertain = new Set()
  const held = []
  const killState = kill ? {victim: nodes[nodes.length - 1], killedAt: null, backAt: null} : null

  const record = (node, method, started, r, err) => {
    const code = err ? 'network' : String(r.status)
    stats.statuses[code] = (stats.statuses[code] ?? 0) + 1
    const m = (stats.byMethod[method] ??= {})
    m[code] = (m[code] ?? 0) + 1
    if (!err && r.status < 500) return
    const ended = performance.now()
    if (
      killState &&
      node === killState.victim &&
      killState.killedAt !== null &&
      started <= killState.killedAt &&
      ended >= killState.killedAt
    ) {
      stats.inFlightKilled++
      return
    }
    stats.errors++
    if (stats.errorSamples.length < 10) {
      stats.errorSamples.push(`${node.name} ${method} ${code}: ${err ? (err.cause?.message ?? err.message) : r.text.slice(0, 200)}`)
    }
  }

  const inFlight = new Map()
  // Each request to the next node in turn; with --pin, each client's to a node of its own.
  const send = async (client, method, pathname, body) => {
    const node = PIN ? live[client % live.length] : live[counter++ % live.length]
    const started = performance.now()
    inFlight.set(node, (inFlight.get(node) ?? 0) + 1)
    try {
      const r = await call(node.url, method, pathname, body)
      record(node, method, started, r, null)
      return {...r, node}
    } catch (err) {
      record(node, method, started, null, err)
      return {status: 0, error: err, node}
    } finally {
      inFlight.set(node, inFlight.get(node) - 1)
    }
  }

  const first = await must(nodes[0].url, 'GET', CHURN_QUERY)
  if (!first.allocation_requests?.length) throw new Error(`the churn's query ${CHURN_QUERY} has no candidates on ${nodes[0].name}`)
  const reloadsBefore = killState
    ? await Promise.all(nodes.filter((n) => n !== killState.victim).map((n) => metricValue(n, 'placemat_state_reloads_total')))
    : null

  const t0 = performance.now()
  const end = t0 + seconds * 1000
  const clientLoop = async (client) => {
    const project = crypto.randomUUID()
    const user = crypto.randomUUID()
    const mine = []
    while (performance.now() < end) {
      const begin = performance.now()
      let claimed = false
      while (!claimed && performance.now() < end) {
        const g = await send(client, 'GET', CHURN_QUERY)
        if (g.status !== 200) {
          await sleep(20)
          continue
        }
        const requests = g.json?.allocation_requests ?? []
        if (!requests.length) {
          stats.emptyAnswers++
          await sleep(20)
          continue
        }
        for (const ar of requests) {
          const consumer = crypto.randomUUID()
          const body = {
            allocations: ar.allocations,
            project_id: project,
            user_id: user,
            consumer_generation: null,
            consumer_type: 'INSTANCE',
          }
          const p = await send(client, 'PUT', `/allocations/${consumer}`, body)
          if (p.status === 204) {
            stats.claims++
            stats.latencies.push(performance.now() - begin)
            mine.push({consumer, allocations: ar.allocations})
            for (const rp of Object.keys(ar.allocations)) touched.set(rp, nodes.indexOf(p.node))
            claimed = true
            break
          }
          if (p.status === 409) {
            stats.conflicts++
            continue
          }
          // No clear answer (5xx, network error) or an unexpected one: it may have been written.
          uncertain.add(consumer)
          for (const rp of Object.keys(ar.allocations)) touched.set(rp, nodes.indexOf(p.node))
          break
        }
      }
      while (mine.length > HOLD) {
        const oldest = mine.shift()
        const d = await send(client, 'DELETE', `/allocations/${oldest.consumer}`)
        if (d.status === 204) {
          stats.releases++
          for (const rp of Object.keys(oldest.allocations)) touched.set(rp, nodes.indexOf(d.node))
        } else uncertain.add(oldest.consumer)
      }
    }
    held.push(...mine)
  }

  let killDone = Promise.resolve()
  const timers = []
  if (killState) {
    killDone = new Promise((resolve, reject) => {
      timers.push(
        setTimeout(
          () => {
            live.splice(live.indexOf(killState.victim), 1)
            killState.killedAt = performance.now()
            killState.inFlightAtKill = inFlight.get(killState.victim) ?? 0
            killState.victim.child.kill('SIGKILL')
            progress(
              `  SIGKILL ${killState.victim.name} (pid ${killState.victim.child.pid}) at ${((killState.killedAt - t0) / 1000).toFixed(1)} s, ` +
                `${killState.inFlightAtKill} request(s) in flight to it`,
            )
          },
          (seconds * 1000) / 3,
        ),
      )
      timers.push(
        setTimeout(
          async () => {
            try {
              const v = killState.victim
              progress(`  restarting ${v.name} at ${((performance.now() - t0) / 1000).toFixed(1)} s`)
              let again
              try {
                again = await startDaemon({name: v.name, db: v.db, home: v.home, port: v.port, extra: v.extra})
              } catch (err) {
                progress(`  ${v.name} did not come back on port ${v.port} (${err.message.split('\n')[0]}); trying another port`)
                again = await startDaemon({name: v.name, db: v.db, home: v.home, extra: v.extra})
              }
              // The row keeps the first start's figures; the restart's are the kill report's.
              const first = {startup: v.startup, rss: v.rss, logStart: v.logStart, startLog: v.startLog}
              Object.assign(v, again, first)
              killState.restartS = again.startup
              killState.restartRss = again.rss
              killState.backAt = performance.now()
              live.push(v)
              progress(
                `  ${v.name} serving again after ${again.startup.toFixed(1)} s (at ${((killState.backAt - t0) / 1000).toFixed(1)} s)`,
              )
              resolve()
            } catch (err) {
              reject(err)
            }
          },
          (seconds * 2000) / 3,
        ),
      )
    })
  }
  // A failed restart is reported after the clients finish, not as an unhandled rejection.
  const killOutcome = killDone.then(
    () => null,
    (err) => err,
  )

  await Promise.all(Array.from({length: CLIENTS}, (_, client) => clientLoop(client)))
  const elapsed = (performance.now() - t0) / 1000
  const killErr = await killOutcome
  for (const t of timers) clearTimeout(t)
  if (killErr) throw killErr

  let killReport = null
  if (killState) {
    const survivors = nodes.filter((n) => n !== killState.victim)
    const after = await Promise.all(survivors.map((n) => metricValue(n, 'placemat_state_reloads_total')))
    killReport = {
      victim: killState.victim.name,
      restart_to_serving_s: killState.restartS ?? null,
      restarted_rss_mib: killState.restartRss ?? null,
      in_flight_at_kill: killState.inFlightAtKill ?? null,
      in_flight_to_killed: stats.inFlightKilled,
      survivor_errors: stats.errors,
      reloads: survivors.map((n, i) => ({
        node: n.name,
        before: reloadsBefore[i],
        after: after[i],
        delta: reloadsBefore[i] === null || after[i] === null ? 'n/a' : after[i] - reloadsBefore[i],
      })),
    }
  }
  return {stats, elapsed, touched, uncertain, held, killReport}
}

/**
 * After the churn: looks up the consumers whose outcome was unclear, checks usage against
 * capacity (and against the claims still held) on every provider touched, then releases all.
 */
async function checkAndRelease(nodes, run) {
  const {touched, uncertain, held} = run
  const ask = (i) => nodes[i % nodes.length]
  let resolved = 0
  for (const consumer of uncertain) {
    const a = await must(ask(0).url, 'GET', `/allocations/${consumer}`)
    const allocations = a?.allocations ?? {}
    if (Object.keys(allocations).length) {
      held.push({consumer, allocations})
      resolved++
    }
  }
  const expected = new Map()
  for (const {allocations} of held) {
    for (const [rp, {resources}] of Object.entries(allocations)) {
      const e = expected.get(rp) ?? {}
      for (const [rc, n] of Object.entries(resources)) e[rc] = (e[rc] ?? 0) + n
      expected.set(rp, e)
    }
  }
  const providers = [...touched.keys()]
  let overcommit = 0
  let mismatches = 0
  let otherNode = 0
  const samples = []
  let next = 0
  const worker = async () => {
    while (next < providers.length) {
      const i = next++
      const rp = providers[i]
      const lastWriter = touched.get(rp)
      // Half of them from a node other than the one that served the last write touching it.
      let n = i % nodes.length
      if (i % 2 === 0 && nodes.length > 1 && n === lastWriter) n = (n + 1) % nodes.length
      if (n !== lastWriter) otherNode++
      const node = ask(n)
      const [u, inv] = await Promise.all([
        must(node.url, 'GET', `/resource_providers/${rp}/usages`),
        must(node.url, 'GET', `/resource_providers/${rp}/inventories`),
      ])
      const want = expected.get(rp) ?? {}
      for (const rc of new Set([...Object.keys(u.usages), ...Object.keys(want)])) {
        const used = u.usages[rc] ?? 0
        const i2 = inv.inventories[rc]
        const cap = i2 ? (i2.total - i2.reserved) * i2.allocation_ratio : 0
        if (used > cap + 1e-9) {
          overcommit++
          if (samples.length < 5) samples.push(`${rp} ${rc}: used ${used} > capacity ${cap} (${node.name})`)
        }
        if (used !== (want[rc] ?? 0)) {
          mismatches++
          if (samples.length < 5) samples.push(`${rp} ${rc}: used ${used}, the claims held add up to ${want[rc] ?? 0} (${node.name})`)
        }
      }
    }
  }
  await Promise.all(Array.from({length: 4}, worker))
  // Release everything still held, so the next configuration starts from an empty cloud.
  let releaseErrors = 0
  let k = 0
  const releaser = async () => {
    while (held.length) {
      const {consumer} = held.pop()
      const node = ask(k++)
      try {
        const r = await call(node.url, 'DELETE', `/allocations/${consumer}`)
        if (r.status !== 204 && r.status !== 404) releaseErrors++
      } catch {
        releaseErrors++
      }
    }
  }
  await Promise.all(Array.from({length: 4}, releaser))
  return {providers: providers.length, overcommit, mismatches, otherNode, resolved, releaseErrors, samples}
}

// ---------------------------------------------------------------------------------------------
// The first limited candidates query after a write (on another node, or by the CLI)

/**
 * Round `r`'s write to provider `u`, read from `readUrl` (inventory reserved 0 <-> 1 on VCPU, traits
 * with or without CUSTOM_BENCH, aggregates with or without an extra one, in turn): the new value,
 * the generation it was read at, and what an answer showing it would say.
 */
async function prepareWrite(readUrl, u, r) {
  const kind = ['inventory', 'traits', 'aggregates'][r % 3]
  if (kind === 'inventory') {
    const cur = await must(readUrl, 'GET', `/resource_providers/${u}/inventories`)
    const inventories = cur.inventories
    const reserved = inventories.VCPU.reserved ? 0 : 1
    inventories.VCPU = {...inventories.VCPU, reserved}
    const capacity = (inventories.VCPU.total - reserved) * inventories.VCPU.allocation_ratio
    return {kind, generation: cur.resource_provider_generation, inventories, reserved, capacity}
  }
  if (kind === 'traits') {
    const cur = await must(readUrl, 'GET', `/resource_providers/${u}/traits`)
    const has = cur.traits.includes('CUSTOM_BENCH')
    const traits = has ? cur.traits.filter((t) => t !== 'CUSTOM_BENCH') : [...cur.traits, 'CUSTOM_BENCH']
    return {kind, generation: cur.resource_provider_generation, traits, bench: !has}
  }
  const cur = await must(readUrl, 'GET', `/resource_providers/${u}/aggregates`)
  const has = cur.aggregates.includes(EXTRA_AGGREGATE)
  const aggregates = has ? cur.aggregates.filter((a) => a !== EXTRA_AGGREGATE) : [...cur.aggregates, EXTRA_AGGREGATE]
  return {kind, generation: cur.resource_provider_generation, aggregates}
}

/** Whether the answer shows the write (inventory capacity, traits); null when it cannot say. */
function showsWrite(answer, u, w) {
  const summary = answer?.provider_summaries?.[u]
  if (!summary) return null
  if (w.kind === 'inventory') return summary.resources?.VCPU?.capacity === w.capacity
  if (w.kind === 'traits') return Array.isArray(summary.traits) ? summary.traits.includes('CUSTOM_BENCH') === w.bench : null
  return null
}

// The limit the churn's schedulers use; the providers written to are among its answer, so that
// the timed answer itself shows whether the write was seen.
const AW_LIMIT = 5

async function timedQuery(node) {
  const r = await call(node.url, 'GET', `/allocation_candidates?${AW_QUERY}&limit=${AW_LIMIT}`)
  const ms = r.ms
  if (r.status !== 200) throw new Error(`GET candidates on ${node.name}: ${r.status} ${r.text.slice(0, 300)}`)
  return {ms, json: r.json}
}

/** 30 rounds: a write on node A through the API, the first limited query on node B. */
async function afterWriteAcrossNodes(nodes) {
  const list = await must(nodes[0].url, 'GET', `/allocation_candidates?${AW_QUERY}&limit=${AW_LIMIT}`)
  const uuids = Object.keys(list.provider_summaries)
  if (!uuids.length) throw new Error('the after-write query has no candidates')
  const times = []
  let stale = 0
  let checked = 0
  for (let r = 0; r < ROUNDS; r++) {
    const a = nodes[r % nodes.length]
    const b = nodes[(r + 1) % nodes.length]
    const u = uuids[r % uuids.length]
    const w = await prepareWrite(a.url, u, r)
    const p = `/resource_providers/${u}/${w.kind === 'inventory' ? 'inventories' : w.kind}`
    const body =
      w.kind === 'inventory'
        ? {resource_provider_generation: w.generation, inventories: w.inventories}
        : w.kind === 'traits'
          ? {resource_provider_generation: w.generation, traits: w.traits}
          : {resource_provider_generation: w.generation, aggregates: w.aggregates}
    await must(a.url, 'PUT', p, body)
    const q = await timedQuery(b)
    times.push(q.ms)
    const shown = showsWrite(q.json, u, w)
    if (shown !== null) {
      checked++
      if (!shown) {
        stale++
        progress(`  stale: ${b.name} answered without the ${w.kind} write ${a.name} had just acknowledged on ${u}`)
      }
    }
  }
  return {p50: pct(times, 50), p99: pct(times, 99), rounds: ROUNDS, checked, stale, ...(await queryAlone(nodes[1]))}
}

/** The same query, repeated with nothing written before it: the part of the above not spent catching up. */
async function queryAlone(node) {
  const times = []
  for (let r = 0; r < ROUNDS; r++) times.push((await timedQuery(node)).ms)
  return {alone_p50: pct(times, 50)}
}

/** 30 rounds: a write by `placemat ... --db FILE` (its own process), then the daemon's first limited query. */
async function afterWriteByCli(node, dbFile) {
  const list = await must(node.url, 'GET', `/allocation_candidates?${AW_QUERY}&limit=${AW_LIMIT}`)
  const uuids = Object.keys(list.provider_summaries)
  if (!uuids.length) throw new Error('the after-write query has no candidates')
  const times = []
  const cliTimes = []
  let stale = 0
  let checked = 0
  for (let r = 0; r < ROUNDS; r++) {
    const u = uuids[r % uuids.length]
    const w = await prepareWrite(node.url, u, r)
    const args =
      w.kind === 'inventory'
        ? ['inventory', 'set', u, `VCPU:reserved=${w.reserved}`, '--amend']
        : w.kind === 'traits'
          ? ['provider', 'trait', 'set', u, ...w.traits]
          : ['aggregate', 'set', u, ...w.aggregates]
    const t0 = performance.now()
    try {
      execFileSync(process.execPath, [BIN, ...args, '--db', dbFile, '--json'], {
        stdio: 'pipe',
        timeout: 300000,
        env: {...process.env, PLACEMAT_HOME: path.dirname(dbFile)},
      })
    } catch (err) {
      throw new Error(
        `placemat ${args.join(' ')} --db ${dbFile} failed (${err.status ?? err.signal}): ${String(err.stderr ?? err.message)
          .trim()
          .slice(-600)}`,
      )
    }
    cliTimes.push(performance.now() - t0)
    const q = await timedQuery(node)
    times.push(q.ms)
    const shown = showsWrite(q.json, u, w)
    if (shown !== null) {
      checked++
      if (!shown) {
        stale++
        progress(`  stale: the daemon answered without the ${w.kind} write the CLI had just made on ${u}`)
      }
    }
  }
  return {
    p50: pct(times, 50),
    p99: pct(times, 99),
    rounds: ROUNDS,
    checked,
    stale,
    cli_write_p50_ms: pct(cliTimes, 50),
    ...(await queryAlone(node)),
  }
}

// ---------------------------------------------------------------------------------------------
// Reporting

const rows = []
if (JSON_FILE) fs.writeFileSync(JSON_FILE, '')
function report(result, into = rows) {
  const line = JSON.stringify(result)
  if (JSON_FILE) fs.appendFileSync(JSON_FILE, line + '\n')
  else process.stderr.write(line + '\n')
  into.push(result)
}
const fixedRows = []
const profiles = []

function printTable() {
  if (!rows.length) return
  const withKill = rows.some((r) => r.kill)
  const header = [
    'setup',
    'providers',
    'daemons',
    'claims/s',
    'claim p50 / p99 ms',
    'overcommit',
    '5xx+errors',
    'first limited query on B after a write on A p50/p99',
    'start-up s',
    'RSS MiB',
    ...(withKill ? ['kill'] : []),
  ]
  console.log(`| ${header.join(' | ')} |`)
  console.log(`|${header.map(() => '---').join('|')}|`)
  for (const r of rows) {
    const aw = r.after_write
      ? `${fmtMs(r.after_write.p50)} / ${fmtMs(r.after_write.p99)}${r.after_write.stale ? ` (${r.after_write.stale} stale)` : ''}`
      : '—'
    const oc = `${r.overcommit}${r.usage_mismatches ? ` (${r.usage_mismatches} usage ≠ claims held)` : ''}`
    const k = r.kill ? killCell(r.kill) : ''
    console.log(
      `| ${[
        r.setup,
        r.providers,
        r.daemons,
        `${r.claims_per_s.toFixed(1)} (${r.conflicts_409} × 409)`,
        `${fmtMs(r.claim_p50_ms)} / ${fmtMs(r.claim_p99_ms)}`,
        oc,
        r.errors,
        aw,
        r.startup_s.map((s) => s.toFixed(1)).join(' / '),
        r.rss_mib.join(' / '),
        ...(withKill ? [k] : []),
      ].join(' | ')} |`,
    )
  }
}

function killCell(kill) {
  const reloads = kill.reloads.map((x) => `${x.node} ${x.delta}`).join(', ')
  return (
    `${kill.victim} killed: serving again ${kill.restart_to_serving_s?.toFixed(1) ?? '?'} s after restart; ` +
    `${kill.in_flight_to_killed} of the ${kill.in_flight_at_kill} in flight to it failed; survivors' 5xx+errors ${kill.survivor_errors}; full reloads on survivors: ${reloads}`
  )
}

// ---------------------------------------------------------------------------------------------
// The scenarios

async function measure({setup, backend, nodes, loadS, proxyRtt, directRtt, cliDb, statsUrl = running.statsUrl, server = 'placemat'}) {
  const k = nodes.length
  progress(
    `${setup}, ${k} daemon(s): start-up ${nodes.map((n) => n.startup.toFixed(1)).join(' / ')} s, RSS ${nodes.map((n) => n.rss).join(' / ')} MiB`,
  )
  progress(
    `${setup}, ${k} daemon(s): churn, ${CLIENTS} clients for ${SECONDS} s${KILL ? ' (one node killed at S/3, restarted at 2S/3)' : ''}...`,
  )
  // A histogram shows no count before its first write (0 then); a daemon without the retry counter gives null.
  const sum = async (m, absent) =>
    (await Promise.all(nodes.map((n) => metricValue(n, m)))).reduce(
      (a, b) => (a === null || (b ?? absent) === null ? null : a + (b ?? absent)),
      0,
    )
  const counters = () =>
    Promise.all([
      sum('placemat_store_write_duration_seconds_count', 0),
      sum('placemat_writes_retried_total', null),
      sum('placemat_journal_catchups_total{from="images"}', null),
      sum('placemat_journal_catchups_total{from="rows"}', null),
    ])
  const [writesBefore, retriedBefore, imagesBefore, rowsBefore] = await counters()
  const xactsBefore = await serverTransactions(statsUrl)
  const cpuBefore = cpuNow(nodes)
  const run = await churn(nodes, SECONDS, {kill: KILL})
  const cpuAfter = cpuNow(nodes)
  const xactsAfter = await serverTransactions(statsUrl)
  const s = run.stats
  // Where a claim's time goes on this machine: CPU milliseconds per claim, by process kind.
  const cpuPerClaim = Object.fromEntries(
    Object.keys(cpuAfter).map((k) => [k, s.claims ? ((cpuAfter[k] - cpuBefore[k]) * 1000) / s.claims : null]),
  )
  const [writesAfter, retriedAfter, imagesAfter, rowsAfter] = KILL ? [null, null, null, null] : await counters()
  // How the nodes caught up with each other: from the writes' images, or by reading rows.
  const catchUps = imagesAfter === null || imagesBefore === null ? null : {images: imagesAfter - imagesBefore, rows: rowsAfter - rowsBefore}
  // Writes another node overtook (tried in one round trip, run again): what contention costs.
  const overtaken =
    writesAfter === null || retriedAfter === null || writesBefore === null || retriedBefore === null
      ? null
      : {writes: writesAfter - writesBefore, retried: retriedAfter - retriedBefore}
  progress(
    `  ${s.claims} claims in ${run.elapsed.toFixed(1)} s (${(s.claims / run.elapsed).toFixed(1)}/s), p50 ${fmtMs(pct(s.latencies, 50))} ms, p99 ${fmtMs(pct(s.latencies, 99))} ms; ` +
      `${s.conflicts} answered 409; statuses ${JSON.stringify(s.statuses)}; 5xx+errors ${s.errors}${KILL ? `, in flight to the killed node ${s.inFlightKilled}` : ''}`,
  )
  // Database transactions per claim (the bench's own few reads are in it): placemat's round trips;
  // each of Placement's is several statements, a round trip each.
  const transactions = xactsBefore === null || !s.claims ? null : (xactsAfter - xactsBefore) / s.claims
  const roundTrips = server === 'placemat' ? transactions : null
  const perClaim =
    transactions === null
      ? ''
      : roundTrips === null
        ? `; database transactions per claim ${transactions.toFixed(1)}`
        : `; database round trips per claim ${roundTrips.toFixed(1)}`
  progress(
    `  CPU per claim: ${Object.entries(cpuPerClaim)
      .map(([k, v]) => `${k} ${fmtMs(v)} ms`)
      .join(', ')} (${os.cpus().length} cores)${perClaim}`,
  )
  if (overtaken) progress(`  write transactions ${overtaken.writes}, overtaken by another node and run again ${overtaken.retried}`)
  if (catchUps && k > 1) progress(`  catch-ups from images ${catchUps.images}, by reading rows ${catchUps.rows}`)
  for (const e of s.errorSamples) progress(`  error: ${e}`)
  const check = await checkAndRelease(nodes, run)
  progress(
    `  overcommit check: ${check.providers} providers (${check.otherNode} read from a node other than the last writer): ${check.overcommit} overcommitted, ` +
      `${check.mismatches} usages differing from the claims held${check.resolved ? `; ${check.resolved} unclear claims turned out written` : ''}`,
  )
  for (const x of check.samples) progress(`  ${x}`)
  if (check.releaseErrors) progress(`  ${check.releaseErrors} releases at the end failed`)
  let afterWrite = null
  if (cliDb) {
    progress(`  first limited query after a CLI write (${ROUNDS} rounds)...`)
    afterWrite = await afterWriteByCli(nodes[0], cliDb)
  } else if (k >= 2) {
    progress(`  first limited query on B after a write on A (${ROUNDS} rounds)...`)
    afterWrite = await afterWriteAcrossNodes(nodes)
  }
  if (afterWrite) {
    progress(
      `  after write: p50 ${fmtMs(afterWrite.p50)} ms, p99 ${fmtMs(afterWrite.p99)} ms (the query alone: p50 ${fmtMs(afterWrite.alone_p50)} ms); ${afterWrite.checked} answers checked, ${afterWrite.stale} stale` +
        (afterWrite.cli_write_p50_ms ? `; CLI write p50 ${fmtMs(afterWrite.cli_write_p50_ms)} ms` : ''),
    )
  }
  const logs = nodes.map((n) => ({node: n.name, ...logSummary(n), while_starting: n.startLog?.lines ?? 0}))
  for (const l of logs) {
    if (l.lines) progress(`  ${l.node} logged ${l.lines} line(s) at warn or worse after start-up, e.g. ${l.first[0]}`)
  }
  const starting = nodes.filter((n) => n.startLog?.lines)
  if (starting.length) {
    progress(
      `  while starting, ${starting.map((n) => `${n.name} logged ${n.startLog.lines}`).join(', ')} line(s) at warn or worse, e.g. ${starting[0].startLog.first[0]}`,
    )
  }
  if (run.killReport) {
    progress(
      `  kill: ${run.killReport.victim} back in ${run.killReport.restart_to_serving_s?.toFixed(1)} s; survivors' 5xx+errors ${run.killReport.survivor_errors}; ` +
        `reloads ${JSON.stringify(run.killReport.reloads)}`,
    )
  }
  const result = {
    setup,
    server,
    backend,
    providers: PROVIDERS,
    daemons: k,
    delay_ms: DELAY_MS,
    proxy_rtt_ms: proxyRtt ?? null,
    direct_rtt_ms: directRtt ?? null,
    seconds: SECONDS,
    clients: CLIENTS,
    pinned: PIN,
    load_s: loadS,
    claims: s.claims,
    write_transactions: overtaken?.writes ?? null,
    writes_overtaken: overtaken?.retried ?? null,
    catch_ups: catchUps,
    claims_per_s: s.claims / run.elapsed,
    claim_p50_ms: pct(s.latencies, 50),
    claim_p99_ms: pct(s.latencies, 99),
    cpu_ms_per_claim: cpuPerClaim,
    round_trips_per_claim: roundTrips,
    transactions_per_claim: transactions,
    conflicts_409: s.conflicts,
    statuses: s.statuses,
    statuses_by_method: s.byMethod,
    errors: s.errors,
    error_samples: s.errorSamples,
    empty_answers: s.emptyAnswers,
    overcommit: check.overcommit,
    usage_mismatches: check.mismatches,
    providers_checked: check.providers,
    checked_on_other_node: check.otherNode,
    unclear_claims_written: check.resolved,
    release_errors: check.releaseErrors,
    after_write: afterWrite,
    startup_s: nodes.map((n) => n.startup),
    rss_mib: nodes.map((n) => n.rss),
    kill: run.killReport,
    daemon_log_lines: logs,
  }
  report(result)
}

/** The delay proxy (scripts/tcp-proxy.mjs) as a process of its own, in front of `targetPort`. */
async function startDelayProxy(targetPort) {
  const child = spawn(process.execPath, [path.join(root, 'scripts', 'tcp-proxy.mjs'), '--target', String(targetPort)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  running.proxyPid = child.pid
  const lines = readline.createInterface({input: child.stdout})
  const next = () =>
    new Promise((resolve, reject) => {
      lines.once('line', resolve)
      child.once('exit', (code) => reject(new Error(`the delay proxy exited (${code})`)))
    })
  const first = await next()
  const port = Number(/^listening (\d+)$/.exec(first)?.[1])
  if (!port) throw new Error(`the delay proxy said: ${first}`)
  const proxy = {
    port,
    delayMs: 0,
    async setDelay(ms) {
      child.stdin.write(`delay ${ms}\n`)
      proxy.delayMs = Number(/^delay ([\d.]+)$/.exec(await next())?.[1])
    },
    async close() {
      child.stdin.end()
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)))
    },
  }
  return proxy
}

// What the fixed-load passes (scripts/scaleout-fixed-load.mjs) use of this script.
const fixedLoadHelpers = {
  call,
  must,
  cpuSeconds,
  processTree,
  metricValue,
  serverTransactions: () => serverTransactions(running.statsUrl),
  postmaster: () => running.postmaster,
  progress,
  pct,
  fmtMs,
  query: CHURN_QUERY,
  report: (r) => report(r, fixedRows),
}

async function runPostgres(work) {
  progress('starting a PostgreSQL cluster...')
  const db = await startPostgres()
  progress(`PostgreSQL on 127.0.0.1:${db.port}`)
  const loaderHome = path.join(work, 'loader')
  progress(`loading ${PROVIDERS} flat providers through one daemon's batch API...`)
  const loader = await startDaemon({name: 'loader', db: db.url(), home: loaderHome})
  await must(loader.url, 'PUT', '/traits/CUSTOM_BENCH', undefined, [201, 204])
  const t0 = performance.now()
  const made = await loadThroughBatch(loader.url, 'flat', PROVIDERS)
  const loadS = (performance.now() - t0) / 1000
  progress(`loaded ${made} providers in ${loadS.toFixed(1)} s`)
  await stopDaemon(loader)

  let proxy = null
  let proxyRtt = null
  let directRtt = null
  if (DELAY_MS > 0) {
    proxy = await startDelayProxy(db.port)
    directRtt = await pingMs(db.port)
    // The proxy's own hops cost a little: its per-direction delay is set so that a round trip
    // through it gains what was asked, as measured.
    let each = DELAY_MS / 2
    for (let i = 0; i < 4; i++) {
      await proxy.setDelay(each)
      proxyRtt = await pingMs(proxy.port)
      each = Math.max(0, each - (proxyRtt - directRtt - DELAY_MS) / 2)
    }
    progress(
      `delay proxy on 127.0.0.1:${proxy.port} (${proxy.delayMs.toFixed(3)} ms each way): select 1 takes ${proxyRtt.toFixed(2)} ms through it, ${directRtt.toFixed(2)} ms direct (asked for +${DELAY_MS} ms)`,
    )
  }
  const dbUrl = db.url(proxy ? proxy.port : db.port)
  // What the proxy really adds is measured and shown.
  const measuredDelay = proxy ? ` (measured +${(proxyRtt - directRtt).toFixed(2)} ms)` : ''
  const where = `postgres${DELAY_MS ? `, proxy +${DELAY_MS} ms${measuredDelay}` : ''}`
  const setup = `${LABEL}${where}${KILL ? ', one node killed' : ''}${PIN ? ', clients pinned' : ''}`
  try {
    if (CPU_PROF) fs.mkdirSync(CPU_PROF, {recursive: true})
    const nodeOptions = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : []
    for (const k of DAEMON_COUNTS) {
      const nodes = []
      let passes = null
      try {
        for (let i = 0; i < k; i++) {
          progress(`starting daemon ${i + 1} of ${k}...`)
          nodes.push(await startDaemon({name: `node${i + 1}`, db: dbUrl, home: path.join(work, `k${k}-node${i + 1}`), nodeOptions}))
        }
        if (FIXED_LOAD !== null)
          passes = await measureFixedLoad(nodes, {rate: FIXED_LOAD, seconds: SECONDS, warmUp: WARM_UP}, fixedLoadHelpers)
        else await measure({setup, backend: 'postgres', nodes, loadS, proxyRtt, directRtt})
      } finally {
        await Promise.all(nodes.map(stopDaemon))
      }
      // The profiles are written as the daemons exit.
      if (passes && CPU_PROF) profiles.push(...passProfiles(CPU_PROF, passes, root))
    }
    if (PLACEMENT) await runPlacement({db, pgPort: proxy ? proxy.port : db.port, where, work, proxyRtt, directRtt})
  } finally {
    if (proxy) {
      await proxy.close()
      running.proxyPid = null
    }
    progress('stopping PostgreSQL...')
    try {
      running.pgStop('fast')
    } catch (err) {
      progress(`pg_ctl stop: ${err.message}`)
    }
    running.pgStop = null
  }
}

// ---------------------------------------------------------------------------------------------
// OpenStack Placement (--placement): Debian's placement-api under uwsgi, on the same cluster

const PLACEMENT_DB = 'placement_scaleout'
// Each node as ../shared/perf/run-anchor.sh serves Placement on PostgreSQL.
const UWSGI_PROCESSES = 2
const UWSGI_THREADS = 4

/** Placement's version as installed (python3-placement, without the Debian revision). */
function placementVersion() {
  try {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format, not a template
    return execFileSync('dpkg-query', ['-W', '-f=${Version}', 'python3-placement'], {encoding: 'utf8'}).replace(/-[^-]*$/, '')
  } catch {
    return 'unknown version'
  }
}

/**
 * Placement's own database on the bench's cluster with its schema (placement-manage db sync), and
 * the config directory of its nodes (OS_PLACEMENT_CONFIG_DIR): noauth2, the database through
 * `pgPort` (the delay proxy's when there is one, as the daemons').
 */
async function preparePlacement(db, pgPort, dir) {
  for (const file of ['/usr/bin/placement-api', '/usr/bin/placement-manage', '/usr/bin/uwsgi']) {
    if (!fs.existsSync(file))
      throw new Error(
        `--placement: no ${file} (apt-get install -y placement-api python3-placement uwsgi-core uwsgi-plugin-python3 python3-psycopg2)`,
      )
  }
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import psycopg2'], {stdio: 'pipe'})
  } catch {
    throw new Error('--placement: Placement reaches PostgreSQL through psycopg2: apt-get install -y python3-psycopg2')
  }
  const admin = new pg.Client({connectionString: `postgres://postgres@127.0.0.1:${db.port}/postgres`})
  await admin.connect()
  try {
    await admin.query(`create database ${PLACEMENT_DB}`)
  } finally {
    await admin.end()
  }
  fs.mkdirSync(dir, {recursive: true})
  const conf = path.join(dir, 'placement.conf')
  fs.writeFileSync(
    conf,
    [
      '[DEFAULT]',
      'debug = False',
      '[api]',
      'auth_strategy = noauth2',
      '[placement_database]',
      `connection = postgresql+psycopg2://postgres@127.0.0.1:${pgPort}/${PLACEMENT_DB}`,
      '[oslo_policy]',
      'enforce_scope = False',
      'enforce_new_defaults = False',
      '',
    ].join('\n'),
  )
  try {
    execFileSync('/usr/bin/placement-manage', ['--config-file', conf, 'db', 'sync'], {stdio: 'pipe'})
  } catch (err) {
    throw new Error(
      `placement-manage db sync failed: ${String(err.stderr ?? err.message)
        .trim()
        .slice(-800)}`,
    )
  }
}

/** One Placement node: a uwsgi instance (master, UWSGI_PROCESSES workers of UWSGI_THREADS threads) on a port of its own. */
async function startPlacement({name, configDir, home}) {
  const port = await freePort()
  // As run-anchor.sh: --lazy-apps, each worker loads the app and opens its connections itself.
  const args = ['--plugins', 'python3,http', '--http-socket', `127.0.0.1:${port}`, '--wsgi-file', '/usr/bin/placement-api']
  args.push(
    '--processes',
    String(UWSGI_PROCESSES),
    '--threads',
    String(UWSGI_THREADS),
    '--master',
    '--die-on-term',
    '--lazy-apps',
    '--thunder-lock',
  )
  args.push('--buffer-size', '65535', '--add-header', 'Connection: close')
  return startNode({
    name,
    home,
    port,
    command: '/usr/bin/uwsgi',
    args,
    env: {OS_PLACEMENT_CONFIG_DIR: configDir},
    // Its log has a line per request (uwsgi's and Placement's INFO): only warnings, errors and
    // tracebacks are reported, not uwsgi's notice that it runs as root.
    reported: (line) => /\b(WARNING|ERROR|CRITICAL)\b|Traceback/.test(line) && !/running uWSGI as root/.test(line),
    // One worker answers before the other has loaded the app: started when all have.
    ready: (log) => (log.match(/WSGI app 0 \(mountpoint=''\) ready/g) ?? []).length >= UWSGI_PROCESSES,
    fields: {},
  })
}

/** The --placement rows: Placement's database, the same providers in its tables, K nodes for each count. */
async function runPlacement({db, pgPort, where, work, proxyRtt, directRtt}) {
  const dir = path.join(work, 'placement')
  const version = placementVersion()
  progress(`Placement ${version}: database ${PLACEMENT_DB}, placement-manage db sync...`)
  await preparePlacement(db, pgPort, dir)
  const statsUrl = `postgres://postgres@127.0.0.1:${db.port}/${PLACEMENT_DB}`
  // A first start fills in the standard resource classes and traits the rows refer to.
  const loader = await startPlacement({name: 'placement loader', configDir: dir, home: path.join(dir, 'loader')})
  let loadS
  try {
    await must(loader.url, 'PUT', '/traits/CUSTOM_BENCH', undefined, [201, 204])
    progress(`writing ${PROVIDERS} flat providers into Placement's tables...`)
    const client = new pg.Client({connectionString: statsUrl})
    await client.connect()
    try {
      const t0 = performance.now()
      const made = await loadIntoPlacementTables(client, 'flat', PROVIDERS)
      loadS = (performance.now() - t0) / 1000
      progress(`wrote ${made} providers in ${loadS.toFixed(1)} s`)
    } finally {
      await client.end()
    }
  } finally {
    await stopDaemon(loader)
  }
  const setup = `Placement ${version}, uwsgi ${UWSGI_PROCESSES} processes × ${UWSGI_THREADS} threads a node, ${where}`
  for (const k of PLACEMENT_COUNTS) {
    const nodes = []
    try {
      for (let i = 0; i < k; i++) {
        progress(`starting Placement node ${i + 1} of ${k}...`)
        nodes.push(await startPlacement({name: `placement${i + 1}`, configDir: dir, home: path.join(dir, `k${k}-node${i + 1}`)}))
      }
      await measure({setup, backend: 'postgres', nodes, loadS, proxyRtt, directRtt, statsUrl, server: 'placement'})
    } finally {
      await Promise.all(nodes.map(stopDaemon))
    }
  }
}

async function runSqlite(work) {
  const dbFile = path.join(work, 'placemat.db')
  progress(`loading ${PROVIDERS} flat providers into ${dbFile} through a daemon's batch API...`)
  const loader = await startDaemon({name: 'loader', db: dbFile, home: path.join(work, 'loader')})
  await must(loader.url, 'PUT', '/traits/CUSTOM_BENCH', undefined, [201, 204])
  const t0 = performance.now()
  const made = await loadThroughBatch(loader.url, 'flat', PROVIDERS)
  const loadS = (performance.now() - t0) / 1000
  progress(`loaded ${made} providers in ${loadS.toFixed(1)} s`)
  await stopDaemon(loader)
  progress('starting the daemon...')
  const node = await startDaemon({name: 'node1', db: dbFile, home: path.join(work, 'node1')})
  try {
    await measure({setup: `${LABEL}sqlite + CLI writes`, backend: 'sqlite', nodes: [node], loadS, cliDb: dbFile})
  } finally {
    await stopDaemon(node)
  }
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-scaleout-'))
running.dirs.push(work)
let exitCode = 0
try {
  if (SQLITE) await runSqlite(work)
  else await runPostgres(work)
} catch (err) {
  process.stderr.write(`bench-scaleout: ${err.stack ?? err.message}\n`)
  exitCode = 1
} finally {
  for (const child of running.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
  await sleep(200)
}
printTable()
printFixedLoad(fixedRows, fmtMs)
printProfiles(profiles)
cleanupNow()
process.exit(exitCode)
