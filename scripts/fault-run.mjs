#!/usr/bin/env node
// npm run faults: every database fault placemat should live through, each under a steady claim
// load, and what the daemons did. The tables go to stdout, progress to stderr.
//
//   npm run faults                                  # faults 1-8, then the failover run
//   npm run faults -- --only 1,3,8                  # some faults (add "failover" to the list for it)
//   npm run faults -- --failover                    # the failover run alone
//   npm run faults -- --providers 1000 --freeze-seconds 10 --json faults.json
//
// Set-up. PostgreSQL faults (1-6): a throwaway PostgreSQL cluster of its own (initdb, durable
// defaults: fsync, synchronous_commit and full_page_writes on) on a free port, 2 daemons on one
// database, each through a TcpProxy of its own (scripts/tcp-proxy.mjs), with
// --db-connect-timeout 2 --db-statement-timeout 5 --db-lock-timeout 5; N flat providers
// (--providers, default and most 1,500) loaded through the first one's batch API. SQLite faults
// (7, 8): 1 daemon on a SQLite file, the same providers; fault 7's file on a tmpfs of --tmpfs-mb
// MiB (default 96: the daemon's WAL alone grows to 64 MiB under this load, see TMPFS_MB). Failover: a primary and a streaming
// standby (pg_basebackup -R; synchronous_standby_names='*', synchronous_commit=on on the primary),
// 2 daemons through one shared TcpProxy.
//
// The load: 4 clients, each request to the next daemon in turn: GET /allocation_candidates
// (VCPU:1,MEMORY_MB:64, limit=5; MEMORY_MB:128 if that finds nothing), PUT /allocations/{new uuid}
// with the first candidate (the next one on 409), DELETE of the client's oldest claim once it holds
// more than 10. Every request has a 60 s client timeout. After an answer that is not 2xx/409 (or a
// network error) a client waits 100 ms before its next request (a real client would honour
// Retry-After; this keeps the recovery measurement fine-grained).
//
// Each fault: ensure everything is back to normal (PostgreSQL up and writable, proxies passing,
// every daemon running and healthy; a daemon that exited is restarted, its exit counted where it
// happened), 5 s of load, the fault, at least 5 s of load after it (longer, up to 60 s, until every
// daemon has acknowledged a claim), then the checks with no load running.
//
// The columns:
//   statuses during    load requests in flight at any time between the fault's start and end
//                      (pg_terminate_backend, an instant: its first 2 s), by HTTP status; network
//                      errors as net(CODE), client timeouts (60 s) as timeout; ">15s:N" counts
//                      answers slower than 15 s (connect 2 + lock 5 + statement 5 + 3 s margin)
//   longest wait       the slowest of those requests, ms
//   recovery           from the fault's end to the first claim answered 2xx on every daemon, s
//   daemon exits       daemon processes that ended by themselves (not the ones this script stops,
//                      nor the --db-wait daemon of fault 4, which must exit)
//   writes lost        of the acknowledged writes (claims answered 204, deletes answered 204): a
//                      claim acknowledged and not deleted-with-204 that is absent, or a delete
//                      acknowledged whose consumer is present. PostgreSQL: read from the database
//                      itself (SQL); SQLite: from the daemon. Fault 8 also counts every write
//                      acknowledged that was sent after the file was deleted.
//   overcommit         (provider, resource class) pairs with usage > (total - reserved) *
//                      allocation_ratio: GET inventories and usages of every provider on every
//                      daemon, and (PostgreSQL) the same sums in SQL
// The notes under the tables name every goal missed, answers a daemon gave that disagree with the
// database (stale), what health said during each fault, and the daemons' error log lines.
import {spawn, execFileSync} from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import pg from 'pg'
import {TcpProxy} from './tcp-proxy.mjs'
import {loadThroughBatch} from './huge-sets.mjs'
import {freePort} from './lib/ports.mjs'
import {postgresBin} from './lib/postgres.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(ROOT, 'bin/run.js')

// ---------------------------------------------------------------------------------------------
// Options

const USAGE =
  'usage: node scripts/fault-run.mjs [--only 1,3,8[,failover]] [--failover] [--providers N] [--freeze-seconds S] [--tmpfs-mb M] [--json FILE]'
const VALUED = new Set(['only', 'providers', 'freeze-seconds', 'tmpfs-mb', 'json'])
const FLAGS = new Set(['failover', 'help'])
const given = {}
{
  const argv = process.argv.slice(2)
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i])
    if (m && FLAGS.has(m[1]) && m[2] === undefined) given[m[1]] = true
    else if (m && VALUED.has(m[1])) {
      if (m[2] !== undefined) given[m[1]] = m[2]
      else if (i + 1 < argv.length) given[m[1]] = argv[++i]
      else usageError(`--${m[1]} needs a value`)
    } else usageError(`unknown argument ${argv[i]}`)
  }
}
if (given.help) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(0)
}
function usageError(message) {
  process.stderr.write(`fault-run: ${message}\n${USAGE}\n`)
  process.exit(2)
}
const intOption = (name, dflt, min, max) => {
  const v = given[name] ?? String(dflt)
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) usageError(`--${name} takes an integer from ${min} to ${max}, not ${v}`)
  return Number(v)
}
const PROVIDERS = intOption('providers', 1500, 1, 1500)
const FREEZE_S = intOption('freeze-seconds', 20, 1, 600)
// Fault 7's tmpfs. Not 16 MiB: under this load the daemon's own WAL grows to its 64 MiB limit
// (wal_autocheckpoint 16384 pages, journal_size_limit 64 MiB) within seconds, so a 16 MiB tmpfs
// is full before the fault starts and deleting the filler frees nothing. --tmpfs-mb 16 shows that.
const TMPFS_MB = intOption('tmpfs-mb', 96, 1, 4096)
const JSON_FILE = given.json
let FAULTS = new Set([1, 2, 3, 4, 5, 6, 7, 8])
let FAILOVER = true
if (given.only !== undefined) {
  FAULTS = new Set()
  FAILOVER = Boolean(given.failover)
  for (const part of given.only
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (part === 'failover') FAILOVER = true
    else if (/^[1-8]$/.test(part)) FAULTS.add(Number(part))
    else usageError(`--only takes fault numbers 1 to 8 and "failover", not ${part}`)
  }
} else if (given.failover) FAULTS = new Set()
if (!FAULTS.size && !FAILOVER) usageError('nothing to run')

const HEADERS = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
const QUERY = '/allocation_candidates?resources=VCPU:1,MEMORY_MB:64&limit=5'
const QUERY_FALLBACK = '/allocation_candidates?resources=VCPU:1,MEMORY_MB:128&limit=5'
const DB_FLAGS = ['--db-connect-timeout', '2', '--db-statement-timeout', '5', '--db-lock-timeout', '5']
const BOUND_MS = (2 + 5 + 5 + 3) * 1000
const CLIENT_TIMEOUT_MS = 60000
const CLIENTS = 4
const HOLD = 10
const PRE_MS = 5000
const POST_MS = 5000
const RECOVERY_CAP_MS = 60000
const BACKOFF_MS = 100
const INSTANT_WINDOW_MS = 2000

const t0Run = performance.now()
const now = () => performance.now()
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const stamp = () => ((now() - t0Run) / 1000).toFixed(1).padStart(6)
const progress = (msg) => process.stderr.write(`[faults ${stamp()}s] ${msg}\n`)

// ---------------------------------------------------------------------------------------------
// Everything started here, so that it is stopped on the way out, whatever the way.

const live = {children: new Set(), clusters: new Set(), mounts: [], dirs: [], proxies: new Set(), frozen: new Set()}
const asRoot = process.getuid?.() === 0
let cleanedUp = false

function cleanupSync() {
  if (cleanedUp) return
  cleanedUp = true
  for (const pid of live.frozen) {
    try {
      process.kill(pid, 'SIGCONT')
    } catch {}
  }
  for (const child of live.children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL')
      } catch {}
    }
  }
  for (const proxy of live.proxies) {
    try {
      proxy.cutAll()
      proxy.server.close()
    } catch {}
  }
  for (const c of live.clusters) {
    if (!fs.existsSync(path.join(c.data, 'postmaster.pid'))) continue
    try {
      const args = [path.join(c.bin, 'pg_ctl'), '-D', c.data, '-m', 'immediate', '-w', '-t', '30', 'stop']
      execFileSync(asRoot ? 'runuser' : args[0], asRoot ? ['-u', 'postgres', '--', ...args] : args.slice(1), {stdio: 'pipe'})
    } catch (err) {
      process.stderr.write(
        `fault-run: stopping PostgreSQL in ${c.data}: ${String(err.stderr ?? err.message)
          .trim()
          .slice(0, 300)}\n`,
      )
    }
  }
  for (const m of live.mounts.splice(0).reverse()) {
    try {
      execFileSync('umount', [m], {stdio: 'pipe'})
    } catch {
      try {
        execFileSync('umount', ['-l', m], {stdio: 'pipe'})
      } catch (err) {
        process.stderr.write(`fault-run: umount ${m}: ${String(err.stderr ?? err.message).trim()}\n`)
      }
    }
  }
  for (const dir of live.dirs) fs.rmSync(dir, {recursive: true, force: true})
}
process.on('exit', cleanupSync)
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    progress(`${sig}: stopping every daemon, PostgreSQL cluster and mount`)
    cleanupSync()
    process.exit(130)
  })
}

const WORK = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-fault-run-'))
live.dirs.push(WORK)
// The clusters' directories are inside: the postgres user must get through.
fs.chmodSync(WORK, 0o755)

// ---------------------------------------------------------------------------------------------
// Processes

/** Runs a command to its end without blocking the event loop (the load keeps going). */
function run(cmd, args, {asPostgres = false, timeoutMs = 120000, env} = {}) {
  const [file, argv] = asPostgres && asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]
  return new Promise((resolve) => {
    const child = spawn(file, argv, {stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env, cwd: ROOT})
    live.children.add(child)
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', (err) => {
      clearTimeout(timer)
      live.children.delete(child)
      resolve({code: -1, out: String(err.message)})
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      live.children.delete(child)
      resolve({code: code ?? (signal ? `signal ${signal}` : -1), out})
    })
  })
}

async function must(cmd, args, opts) {
  const r = await run(cmd, args, opts)
  if (r.code !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${r.code}): ${r.out.trim().slice(-800)}`)
  return r.out
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

function chownPostgres(dir) {
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir])
}

const logTailOf = (file, n = 10) => {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n')
  } catch {
    return '(no log)'
  }
}

const pgCtl = (c, args, timeoutMs) => must(path.join(c.bin, 'pg_ctl'), ['-D', c.data, ...args], {asPostgres: true, timeoutMs})

async function pgStart(c) {
  try {
    await pgCtl(c, ['-l', c.log, '-o', c.opts, '-w', '-t', '120', 'start'], 150000)
  } catch (err) {
    throw new Error(`${err.message}\n${logTailOf(c.log)}`)
  }
}
const pgStop = (c, mode) => pgCtl(c, ['-m', mode, '-w', '-t', '120', 'stop'], 150000)

/** A new cluster (initdb), started on a free port; `init: false` for a directory filled otherwise. */
async function makeCluster(name, {init = true} = {}) {
  const bin = postgresBin()
  if (!bin) throw new Error('no PostgreSQL server binaries (initdb) under /usr/lib/postgresql')
  const dir = path.join(WORK, name)
  fs.mkdirSync(dir)
  chownPostgres(dir)
  const port = await freePort()
  const c = {name, bin, dir, data: path.join(dir, 'data'), log: path.join(dir, 'log'), port}
  // Durable defaults: nothing about fsync, synchronous_commit or full_page_writes is changed.
  c.opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100`
  live.clusters.add(c)
  if (init) await must(path.join(bin, 'initdb'), ['-D', c.data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8'], {asPostgres: true})
  return c
}

const pgUrl = (port, db) => `postgres://postgres@127.0.0.1:${port}/${db}`

/** One query on a connection of its own, straight to the server (not through a proxy). */
async function sql(port, db, text, params = [], {timeoutMs = 30000} = {}) {
  const client = new pg.Client({connectionString: pgUrl(port, db), connectionTimeoutMillis: 5000, query_timeout: timeoutMs})
  client.on('error', () => {})
  await client.connect()
  try {
    return await client.query(text, params)
  } finally {
    await client.end().catch(() => {})
  }
}

async function pgAnswers(port, db = 'postgres') {
  try {
    await sql(port, db, 'select 1', [], {timeoutMs: 5000})
    return true
  } catch {
    return false
  }
}

async function postmasterPids(c) {
  const pm = Number(fs.readFileSync(path.join(c.data, 'postmaster.pid'), 'utf8').split('\n')[0])
  const r = await run('ps', ['-o', 'pid=', '--ppid', String(pm)])
  return [
    pm,
    ...r.out
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0),
  ]
}

// ---------------------------------------------------------------------------------------------
// Daemons

let currentPhase = null
const setupExits = []

/**
 * `placemat daemon start --foreground` on `db`, its own PLACEMAT_HOME and log file (outside the
 * database's directory). Resolves once it listens (or has exited); with `serving`, once its health
 * answers 200.
 */
async function startDaemon(env, name, db, extra = [], {serving = true, expectExit = false, port} = {}) {
  const d = env.daemons.find((x) => x.name === name) ?? {
    name,
    db,
    extra,
    expectExit,
    home: path.join(WORK, 'homes', `${env.name}-${name}`),
    logFile: path.join(WORK, 'logs', `${env.name}-${name}.log`),
  }
  if (!env.daemons.includes(d)) env.daemons.push(d)
  fs.mkdirSync(d.home, {recursive: true})
  fs.mkdirSync(path.dirname(d.logFile), {recursive: true})
  d.port = port ?? d.port ?? (await freePort())
  d.url = `http://127.0.0.1:${d.port}`
  d.stopping = false
  const fd = fs.openSync(d.logFile, 'a')
  d.logStart = fs.fstatSync(fd).size
  const args = [
    '--max-semi-space-size=64',
    BIN,
    'daemon',
    'start',
    '--foreground',
    '--db',
    d.db,
    '--port',
    String(d.port),
    '--auth',
    'noauth2',
    '--log-level',
    'warn',
    ...DB_FLAGS,
    ...d.extra,
  ]
  const child = spawn(process.execPath, args, {cwd: ROOT, env: {...process.env, PLACEMAT_HOME: d.home}, stdio: ['ignore', fd, fd]})
  fs.closeSync(fd)
  d.child = child
  d.startedAt = now()
  live.children.add(child)
  d.exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      live.children.delete(child)
      d.exitInfo = {code, signal, at: now()}
      if (!d.stopping && !d.expectExit) {
        const e = {daemon: d.name, code, signal, at: now(), phase: currentPhase?.id ?? 'set-up', log: logTailOf(d.logFile, 12)}
        progress(`daemon ${d.name} EXITED by itself (code ${code}, signal ${signal})`)
        ;(currentPhase ? currentPhase.exits : setupExits).push(e)
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

const alive = (d) => d.child && d.child.exitCode === null && d.child.signalCode === null

async function stopDaemon(d) {
  if (!alive(d)) return d.exitInfo
  d.stopping = true
  d.child.kill('SIGTERM')
  const timer = setTimeout(() => alive(d) && d.child.kill('SIGKILL'), 20000)
  const r = await d.exited
  clearTimeout(timer)
  return r
}

/** Waits until every daemon's health says ok with no journal lag; throws naming who is not. */
async function waitHealthy(daemons, ms = 90000) {
  const deadline = now() + ms
  const last = {}
  while (now() < deadline) {
    let all = true
    for (const d of daemons) {
      if (!alive(d))
        throw new Error(`daemon ${d.name} exited (${d.exitInfo?.code ?? d.exitInfo?.signal}); its log ends:\n${logTailOf(d.logFile)}`)
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
function logLines(d, from = 0) {
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

// ---------------------------------------------------------------------------------------------
// HTTP

/** One request; never throws. status 0 with `kind` for a network error or the client timeout. */
async function http(d, method, pathname, body, timeoutMs = CLIENT_TIMEOUT_MS) {
  const start = now()
  try {
    const res = await fetch(d.url + pathname, {
      method,
      headers: HEADERS,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const text = await res.text()
    let json = null
    try {
      json = text ? JSON.parse(text) : null
    } catch {}
    return {status: res.status, text, json, start, end: now(), headers: res.headers}
  } catch (err) {
    const kind = err?.name === 'TimeoutError' ? 'timeout' : `net(${err?.cause?.code ?? err?.code ?? err?.name ?? 'error'})`
    return {status: 0, kind, text: String(err?.cause?.message ?? err?.message), json: null, start, end: now()}
  }
}

const health = (d) => http(d, 'GET', '/placemat/v1/health', undefined, 10000)
const errorTitle = (r) => r.json?.errors?.[0]?.title ?? null

/** Sums of the metrics this run watches, by name and labels. */
async function metrics(d) {
  const r = await http(d, 'GET', '/metrics', undefined, 10000)
  if (r.status !== 200) return null
  const out = {}
  for (const line of r.text.split('\n')) {
    const m =
      /^(placemat_database_up|placemat_database_errors_total|placemat_database_reconnects_total|placemat_state_reloads_total|placemat_journal_lag)(\{[^}]*\})?\s+(\S+)/.exec(
        line,
      )
    if (m) out[m[1] + (m[2] ?? '')] = Number(m[3])
  }
  return out
}

async function mapLimit(items, n, fn) {
  const out = new Array(items.length)
  let i = 0
  await Promise.all(
    Array.from({length: Math.min(n, items.length)}, async () => {
      while (i < items.length) {
        const k = i++
        out[k] = await fn(items[k], k)
      }
    }),
  )
  return out
}

// ---------------------------------------------------------------------------------------------
// The load and its ledger

function makeEnv(name, kind) {
  return {
    name,
    kind,
    daemons: [],
    rotation: [],
    rr: 0,
    query: QUERY,
    ledger: new Map(),
    clients: Array.from({length: CLIENTS}, (_, k) => ({id: k, project: crypto.randomUUID(), user: crypto.randomUUID(), mine: []})),
    proxies: [],
    notes: [],
  }
}

function entryOf(env, consumer, client) {
  let e = env.ledger.get(consumer)
  if (!e) {
    e = {
      consumer,
      client: client.id,
      acked: false,
      ackAt: null,
      ackPhase: null,
      ackDaemon: null,
      providers: [],
      putFails: [],
      deleteAcked: false,
      deleteAt: null,
      deletePhase: null,
      deleteFails: [],
      delete404: 0,
      gaveUp: false,
      lastPhase: null,
    }
    env.ledger.set(consumer, e)
  }
  return e
}

const nextDaemon = (env) => env.rotation[env.rr++ % env.rotation.length]

async function clientLoop(env, c, phase, control) {
  const send = async (method, pathname, body) => {
    const d = nextDaemon(env)
    const r = await http(d, method, pathname, body)
    phase.samples.push({
      t0: r.start,
      t1: r.end,
      ms: r.end - r.start,
      d: d.name,
      m: method,
      s: r.status || r.kind,
      title: r.status >= 500 ? errorTitle(r) : undefined,
      text: r.status >= 500 && r.status !== 503 ? r.text.slice(0, 300) : undefined,
    })
    return {...r, d}
  }
  while (!control.stop) {
    const q = await send('GET', env.query)
    if (q.status !== 200) {
      await sleep(BACKOFF_MS)
      continue
    }
    const candidates = q.json?.allocation_requests ?? []
    if (!candidates.length) {
      phase.emptyAnswers++
      await sleep(BACKOFF_MS)
      continue
    }
    const consumer = crypto.randomUUID()
    let failed = false
    for (const ar of candidates) {
      const w = await send('PUT', `/allocations/${consumer}`, {
        allocations: ar.allocations,
        project_id: c.project,
        user_id: c.user,
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      })
      if (w.status === 409) continue
      const e = entryOf(env, consumer, c)
      e.lastPhase = phase.id
      if (w.status === 204) {
        Object.assign(e, {
          acked: true,
          ackAt: w.end,
          ackStart: w.start,
          ackPhase: phase.id,
          ackDaemon: w.d.name,
          providers: Object.keys(ar.allocations),
        })
        c.mine.push(consumer)
      } else {
        e.putFails.push({s: w.status || w.kind, title: errorTitle(w), phase: phase.id, daemon: w.d.name})
        failed = true
      }
      break
    }
    if (failed) {
      await sleep(BACKOFF_MS)
      continue
    }
    if (c.mine.length > HOLD) {
      const victim = c.mine[0]
      const e = env.ledger.get(victim)
      const x = await send('DELETE', `/allocations/${victim}`)
      e.lastPhase = phase.id
      if (x.status === 204) {
        Object.assign(e, {deleteAcked: true, deleteAt: x.end, deleteStart: x.start, deletePhase: phase.id})
        c.mine.shift()
      } else if (x.status === 404) {
        // Absent: gone by an earlier delete whose answer was not 204, or (none such) a write lost
        // or a daemon not yet showing another's commit; asked again on the next daemon, 3 times.
        e.delete404++
        phase.delete404.push({consumer: victim, daemon: x.d.name, earlierFailures: e.deleteFails.length, ackDaemon: e.ackDaemon})
        if (e.deleteFails.length || e.delete404 >= 3) {
          e.gaveUp = true
          c.mine.shift()
        }
      } else {
        e.deleteFails.push({s: x.status || x.kind, title: errorTitle(x), phase: phase.id, daemon: x.d.name})
        await sleep(BACKOFF_MS)
      }
    }
  }
}

function startLoad(env, phase) {
  const control = {stop: false}
  const tasks = env.clients.map((c) => clientLoop(env, c, phase, control))
  return {
    async stop() {
      control.stop = true
      await Promise.all(tasks)
    },
  }
}

/** Samples overlapping [from, to]. */
const overlapping = (samples, from, to) => samples.filter((s) => s.t0 <= to && s.t1 >= from)

function countStatuses(samples) {
  const counts = {}
  for (const s of samples) counts[s.s] = (counts[s.s] ?? 0) + 1
  return counts
}

function fmtCounts(counts) {
  const keys = Object.keys(counts).sort((a, b) => {
    const na = /^\d+$/.test(a)
    const nb = /^\d+$/.test(b)
    if (na && nb) return Number(a) - Number(b)
    if (na !== nb) return na ? -1 : 1
    return a < b ? -1 : 1
  })
  return keys.map((k) => `${k}:${counts[k]}`).join(' ') || '—'
}

/** Per daemon, the first claim answered 2xx at or after `from`. */
function firstClaims(phase, daemons, from) {
  const out = {}
  for (const d of daemons) {
    const hit = phase.samples
      .filter((s) => s.d === d.name && s.m === 'PUT' && typeof s.s === 'number' && s.s >= 200 && s.s < 300 && s.t1 >= from)
      .sort((a, b) => a.t1 - b.t1)[0]
    out[d.name] = hit ? (hit.t1 - from) / 1000 : null
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Checks

/** Whether each consumer has allocations, on a daemon: Map consumer -> true/false, or an error string. */
async function presenceOnDaemon(d, consumers) {
  const out = new Map()
  await mapLimit(consumers, 6, async (u) => {
    const r = await http(d, 'GET', `/allocations/${u}`, undefined, 30000)
    out.set(u, r.status === 200 ? Object.keys(r.json?.allocations ?? {}).length > 0 : `${r.status || r.kind}`)
  })
  return out
}

async function presenceInSql(env, consumers) {
  const r = await sql(env.sqlPort(), env.dbName, 'select distinct consumer_uuid from allocations where consumer_uuid = any($1::text[])', [
    consumers,
  ])
  const found = new Set(r.rows.map((x) => x.consumer_uuid))
  return new Map(consumers.map((u) => [u, found.has(u)]))
}

/**
 * The ledger against the truth (SQL on PostgreSQL, else the daemon): writes lost, unacknowledged
 * writes that happened anyway, and daemons whose answers disagree with the database.
 */
async function verifyLedger(env, phase, {all = false, truthDaemon = null} = {}) {
  const entries = [...env.ledger.values()].filter((e) => all || e.lastPhase === phase.id || (e.acked && !e.deleteAcked))
  const consumers = entries.map((e) => e.consumer)
  const out = {
    checked: consumers.length,
    acked: 0,
    deletesAcked: 0,
    lost: 0,
    lostSamples: [],
    committedDespite503: 0,
    committedAfterNetworkError: 0,
    goneAfterFailedDelete: 0,
    goneAfter503Delete: 0,
    stale: {},
    staleSamples: [],
    unreadable: {},
    truth: null,
  }
  if (!consumers.length) return out
  const daemons = env.rotation.filter(alive)
  const onDaemon = new Map()
  for (const d of daemons) onDaemon.set(d.name, await presenceOnDaemon(d, consumers))
  let truth
  if (env.kind === 'postgres') {
    truth = await presenceInSql(env, consumers)
    out.truth = 'sql'
  } else {
    const d = truthDaemon ?? daemons[0]
    truth = onDaemon.get(d.name) ?? (await presenceOnDaemon(d, consumers))
    out.truth = `daemon ${d.name}`
  }
  for (const e of entries) {
    const present = truth.get(e.consumer)
    if (typeof present !== 'boolean') {
      out.unreadable[present] = (out.unreadable[present] ?? 0) + 1
      continue
    }
    if (e.acked) out.acked++
    if (e.deleteAcked) out.deletesAcked++
    let lost = null
    if (e.acked && e.deleteAcked && present) lost = 'delete acknowledged, consumer still present'
    else if (e.acked && !e.deleteAcked && !present) {
      if (e.deleteFails.length) {
        out.goneAfterFailedDelete++
        if (e.deleteFails.every((f) => f.s === 503)) out.goneAfter503Delete++
      } else lost = 'claim acknowledged, absent'
    } else if (!e.acked && present) {
      if (e.putFails.some((f) => f.s === 503)) out.committedDespite503++
      else out.committedAfterNetworkError++
    }
    if (lost) {
      out.lost++
      if (out.lostSamples.length < 10)
        out.lostSamples.push({
          consumer: e.consumer,
          why: lost,
          ackPhase: e.ackPhase,
          ackDaemon: e.ackDaemon,
          deletePhase: e.deletePhase,
          delete404: e.delete404,
        })
    }
    for (const [name, m] of onDaemon) {
      const v = m.get(e.consumer)
      if (typeof v !== 'boolean') out.unreadable[`${name} ${v}`] = (out.unreadable[`${name} ${v}`] ?? 0) + 1
      else if (v !== present) {
        out.stale[name] = (out.stale[name] ?? 0) + 1
        if (out.staleSamples.length < 10) out.staleSamples.push({daemon: name, consumer: e.consumer, daemonSays: v, truthSays: present})
      }
    }
  }
  return out
}

/** Usage beyond capacity, per daemon (its API, every provider) and in SQL. */
async function checkOvercommit(env, {providers = null} = {}) {
  const out = {daemons: {}, sql: null, samples: [], unreadable: 0}
  for (const d of env.rotation.filter(alive)) {
    let uuids = providers
    if (!uuids) {
      const list = await http(d, 'GET', '/resource_providers', undefined, 60000)
      if (list.status !== 200) {
        out.daemons[d.name] = `unreadable (${list.status || list.kind})`
        continue
      }
      uuids = list.json.resource_providers.map((p) => p.uuid)
    }
    let bad = 0
    await mapLimit(uuids, 6, async (u) => {
      const [inv, use] = await Promise.all([
        http(d, 'GET', `/resource_providers/${u}/inventories`, undefined, 30000),
        http(d, 'GET', `/resource_providers/${u}/usages`, undefined, 30000),
      ])
      if (inv.status !== 200 || use.status !== 200) {
        out.unreadable++
        return
      }
      for (const [rc, i] of Object.entries(inv.json.inventories)) {
        const used = use.json.usages[rc] ?? 0
        if (used > (i.total - i.reserved) * i.allocation_ratio) {
          bad++
          if (out.samples.length < 10)
            out.samples.push({daemon: d.name, provider: u, rc, used, total: i.total, reserved: i.reserved, ratio: i.allocation_ratio})
        }
      }
    })
    out.daemons[d.name] = bad
  }
  if (env.kind === 'postgres') {
    const r = await sql(
      env.sqlPort(),
      env.dbName,
      `select i.provider_uuid, i.resource_class, i.total, i.reserved, i.allocation_ratio, coalesce(sum(a.used), 0)::bigint as used
         from inventories i left join allocations a on a.provider_uuid = i.provider_uuid and a.resource_class = i.resource_class
        group by 1, 2, 3, 4, 5
       having coalesce(sum(a.used), 0) > (i.total - i.reserved) * i.allocation_ratio`,
    )
    out.sql = r.rowCount
    for (const row of r.rows.slice(0, 10)) out.samples.push({sql: true, ...row})
  }
  out.count = Math.max(0, ...Object.values(out.daemons).filter((v) => typeof v === 'number'), out.sql ?? 0)
  return out
}

/** Usages of the providers the ledger touched: each daemon's answer against the SQL sums. */
async function staleUsages(env, providers) {
  if (env.kind !== 'postgres' || !providers.length) return {checked: providers.length, mismatches: {}, samples: []}
  const r = await sql(
    env.sqlPort(),
    env.dbName,
    'select provider_uuid, resource_class, sum(used)::bigint as used from allocations where provider_uuid = any($1::text[]) group by 1, 2',
    [providers],
  )
  const truth = new Map()
  for (const row of r.rows) truth.set(`${row.provider_uuid} ${row.resource_class}`, Number(row.used))
  const out = {checked: providers.length, mismatches: {}, samples: []}
  for (const d of env.rotation.filter(alive)) {
    let n = 0
    await mapLimit(providers, 6, async (u) => {
      const use = await http(d, 'GET', `/resource_providers/${u}/usages`, undefined, 30000)
      if (use.status !== 200) return
      const classes = new Set([
        ...Object.keys(use.json.usages),
        ...[...truth.keys()].filter((k) => k.startsWith(u + ' ')).map((k) => k.split(' ')[1]),
      ])
      for (const rc of classes) {
        const api = use.json.usages[rc] ?? 0
        const db = truth.get(`${u} ${rc}`) ?? 0
        if (api !== db) {
          n++
          if (out.samples.length < 10) out.samples.push({daemon: d.name, provider: u, rc, daemonSays: api, databaseSays: db})
        }
      }
    })
    out.mismatches[d.name] = n
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// A fault under load

/**
 * Runs one fault: back to normal, 5 s of load, `fault(ctx)` (which calls ctx.start() and
 * ctx.end()), load until 5 s after its end and every daemon in the rotation acknowledged a claim
 * (60 s at most), then the checks. Returns the row's result.
 */
async function runFault(env, id, name, fault, {recovery = true, after, instant = false} = {}) {
  progress(`fault ${id}: ${name}`)
  const phase = {id, name, env: env.name, samples: [], exits: [], emptyAnswers: 0, delete404: [], health: [], notes: [], extra: {}}
  const result = {id, name, env: env.name}
  try {
    await ensureNormal(env)
  } catch (err) {
    result.error = `not back to normal before the fault: ${err.message}`
    progress(result.error)
    return {...result, phase}
  }
  currentPhase = phase
  const logMarks = new Map(env.daemons.map((d) => [d, fs.existsSync(d.logFile) ? fs.statSync(d.logFile).size : 0]))
  const metricsBefore = Object.fromEntries(await Promise.all(env.rotation.map(async (d) => [d.name, await metrics(d)])))
  const load = startLoad(env, phase)
  // Health, once a second on every daemon, while the fault lasts.
  let sampling = false
  const healthLoop = (async () => {
    while (!phase.doneSampling) {
      if (sampling) {
        await Promise.all(
          env.daemons
            .filter((d) => alive(d) && d.listening)
            .map(async (d) => {
              const h = await health(d)
              phase.health.push({
                t: h.start,
                d: d.name,
                s: h.status || h.kind,
                what: h.status === 200 ? h.json?.status : (errorTitle(h) ?? h.text?.slice(0, 80)),
                ms: h.end - h.start,
              })
            }),
        )
        await sleep(1000)
      } else await sleep(100)
    }
  })()
  const ctx = {
    phase,
    start() {
      phase.faultStart = now()
      sampling = true
      progress(`  fault ${id} starts`)
    },
    end() {
      phase.faultEnd = now()
      sampling = false
      progress(`  fault ${id} ends (${((phase.faultEnd - phase.faultStart) / 1000).toFixed(1)} s)`)
    },
  }
  await sleep(PRE_MS)
  try {
    await fault(ctx)
  } catch (err) {
    phase.error = err.message
    progress(`  fault ${id}: ${err.message}`)
  }
  phase.faultStart ??= now()
  phase.faultEnd ??= now()
  sampling = false
  const recoveryFrom = phase.recoveryFrom ?? phase.faultEnd
  const minEnd = phase.faultEnd + POST_MS
  while (
    now() < minEnd ||
    (recovery &&
      now() < phase.faultEnd + RECOVERY_CAP_MS &&
      Object.values(firstClaims(phase, env.rotation, recoveryFrom)).some((v) => v === null))
  )
    await sleep(100)
  await load.stop()
  phase.doneSampling = true
  await healthLoop
  progress(`  load stopped; ${phase.samples.length} requests`)

  // The window of "statuses during".
  const windowEnd = phase.windowEnd ?? (instant ? phase.faultStart + INSTANT_WINDOW_MS : phase.faultEnd)
  const during = overlapping(phase.samples, phase.faultStart, windowEnd)
  result.window = {from: 0, to: (windowEnd - phase.faultStart) / 1000}
  result.statusesDuring = countStatuses(during)
  result.over15s = during.filter((s) => s.ms > BOUND_MS).length
  result.longestMs = during.length ? Math.max(...during.map((s) => s.ms)) : null
  result.requests = phase.samples.length
  result.statusesAll = countStatuses(phase.samples)
  result.titles503 = {}
  for (const s of during) if (s.s === 503) result.titles503[`${s.m} ${s.title}`] = (result.titles503[`${s.m} ${s.title}`] ?? 0) + 1
  result.other5xx = phase.samples
    .filter((s) => typeof s.s === 'number' && s.s >= 500 && s.s !== 503)
    .map((s) => ({at: ((s.t0 - phase.faultStart) / 1000).toFixed(2), d: s.d, m: s.m, s: s.s, text: s.text}))
  result.networkErrors = phase.samples
    .filter((s) => typeof s.s === 'string')
    .map((s) => ({at: ((s.t0 - phase.faultStart) / 1000).toFixed(2), d: s.d, m: s.m, s: s.s, ms: Math.round(s.ms)}))
  result.emptyAnswers = phase.emptyAnswers
  result.delete404 = phase.delete404
  result.faultSeconds = (phase.faultEnd - phase.faultStart) / 1000
  if (recovery) {
    result.recoveryPerDaemon = firstClaims(phase, env.rotation, recoveryFrom)
    const vals = Object.values(result.recoveryPerDaemon)
    result.recovery = vals.some((v) => v === null) ? null : Math.max(...vals)
  }
  result.healthDuring = {}
  for (const h of phase.health) {
    const k = `${h.d} ${h.s} ${h.what}`
    result.healthDuring[k] = (result.healthDuring[k] ?? 0) + 1
  }
  result.healthSlowestMs = phase.health.length ? Math.round(Math.max(...phase.health.map((h) => h.ms))) : null
  result.timeline = timeline(phase)

  try {
    if (after) await after(ctx, result)
  } catch (err) {
    phase.notes.push(`after the fault: ${err.message}`)
  }
  currentPhase = null
  try {
    result.checks = await checks(env, phase, result)
  } catch (err) {
    result.checksError = err.message
    progress(`  checks failed: ${err.message}`)
  }
  result.metrics = {}
  for (const d of env.rotation.filter(alive)) {
    const m = await metrics(d)
    const b = metricsBefore[d.name] ?? {}
    if (m)
      result.metrics[d.name] = Object.fromEntries(
        Object.entries(m)
          .filter(([k, _v]) => !k.endsWith('_up') && !k.includes('lag'))
          .map(([k, v]) => [k, v - (b[k] ?? 0)])
          .filter(([, v]) => v),
      )
  }
  result.logs = {}
  for (const d of env.daemons) {
    const lines = logLines(d, logMarks.get(d) ?? 0)
    if (lines.length) result.logs[d.name] = lines
  }
  result.exits = phase.exits
  result.error = phase.error
  result.notes = phase.notes
  result.extra = phase.extra
  result.samples = phase.samples.map((s) => [Math.round(s.t0 - phase.faultStart), Math.round(s.ms), s.d, s.m, s.s])
  progress(
    `  fault ${id}: during ${fmtCounts(result.statusesDuring)}; recovery ${result.recovery ?? '—'} s; exits ${phase.exits.length}; lost ${result.checks?.ledger?.lost ?? '?'}; overcommit ${result.checks?.overcommit?.count ?? '?'}`,
  )
  return result
}

/** Statuses per second around the fault (relative to its start), for the JSON. */
function timeline(phase) {
  const buckets = {}
  for (const s of phase.samples) {
    const k = Math.floor((s.t1 - phase.faultStart) / 1000)
    ;(buckets[k] ??= {})[s.s] = (buckets[k][s.s] ?? 0) + 1
  }
  return buckets
}

async function checks(env, phase, _result) {
  // Settle: the daemons follow each other's last commits (an idle one reads the journal each second).
  await sleep(2000)
  try {
    await waitHealthy(env.rotation.filter(alive), 30000)
  } catch (err) {
    phase.notes.push(`before the checks: ${err.message}`)
  }
  const out = {}
  if (env.kind === 'postgres' && env.rotation.some(alive)) {
    const r = await sql(env.sqlPort(), env.dbName, "select value from placemat_meta where key = 'change_counter'")
    out.journal = {database: Number(r.rows[0]?.value)}
    for (const d of env.rotation.filter(alive)) out.journal[d.name] = (await health(d)).json?.journal?.position ?? null
    const behind = env.rotation.filter(alive).filter((d) => out.journal[d.name] !== out.journal.database)
    if (behind.length)
      phase.notes.push(
        `STALE journal: the database's change counter is ${out.journal.database}, ${behind.map((d) => `${d.name} is at ${out.journal[d.name]}`).join(', ')} (2 s after the load stopped)`,
      )
  }
  out.ledger = phase.ledgerCheck ?? (await verifyLedger(env, phase))
  const touched = [
    ...new Set([...env.ledger.values()].filter((e) => e.lastPhase === phase.id || (e.acked && !e.deleteAcked)).flatMap((e) => e.providers)),
  ]
  out.overcommit = phase.overcommitCheck ?? (await checkOvercommit(env))
  out.usages = await staleUsages(env, touched)
  return out
}

/** Back to normal: PostgreSQL up and writable, proxies passing, every daemon running and healthy. */
async function ensureNormal(env) {
  for (const pid of live.frozen) {
    try {
      process.kill(pid, 'SIGCONT')
    } catch {}
  }
  live.frozen.clear()
  if (env.kind === 'postgres' && env.cluster) {
    if (!(await pgAnswers(env.cluster.port))) {
      progress('  PostgreSQL is not answering: starting it')
      if (fs.existsSync(path.join(env.cluster.data, 'postmaster.pid'))) await pgStop(env.cluster, 'immediate').catch(() => {})
      await pgStart(env.cluster)
    }
    const ro = await sql(env.cluster.port, 'postgres', "select current_setting('default_transaction_read_only') as ro")
    if (ro.rows[0].ro === 'on') await setReadOnly(env.cluster, false)
  }
  for (const p of env.proxies) p.setMode('pass')
  for (const d of env.rotation) {
    if (!alive(d)) {
      progress(`  restarting daemon ${d.name} (it exited: ${d.exitInfo?.code ?? d.exitInfo?.signal})`)
      await startDaemon(env, d.name, d.db, d.extra, {serving: false})
    }
  }
  await waitHealthy(env.rotation, 120000)
}

async function setReadOnly(c, on) {
  const client = new pg.Client({connectionString: pgUrl(c.port, 'postgres'), connectionTimeoutMillis: 5000, query_timeout: 30000})
  client.on('error', () => {})
  await client.connect()
  try {
    // This session writes the setting whatever the server's default says.
    await client.query('set default_transaction_read_only = off')
    await client.query(on ? 'alter system set default_transaction_read_only = on' : 'alter system reset default_transaction_read_only')
    await client.query('select pg_reload_conf()')
  } finally {
    await client.end().catch(() => {})
  }
}

// ---------------------------------------------------------------------------------------------
// Environments

/** Loads the providers through `d`, then picks the load's query. */
async function loadProviders(env, d) {
  const t = now()
  const n = await loadThroughBatch(d.url, 'flat', PROVIDERS)
  progress(`  ${n} flat providers loaded through ${d.name} in ${((now() - t) / 1000).toFixed(1)} s`)
  const r = await http(d, 'GET', QUERY)
  if (r.status !== 200) throw new Error(`GET ${QUERY}: ${r.status || r.kind} ${r.text.slice(0, 300)}`)
  if (!r.json.allocation_requests.length) {
    env.query = QUERY_FALLBACK
    const note =
      'the claim query VCPU:1,MEMORY_MB:64 has no candidates on the flat providers (their MEMORY_MB has min_unit 128): the load asks VCPU:1,MEMORY_MB:128'
    if (!globalNotes.includes(note)) globalNotes.push(note)
    const f = await http(d, 'GET', QUERY_FALLBACK)
    if (!f.json?.allocation_requests?.length) throw new Error(`no candidates for ${QUERY_FALLBACK} either`)
  }
}

async function proxied(env, targetPort) {
  const proxy = new TcpProxy({port: targetPort})
  live.proxies.add(proxy)
  await proxy.listen()
  env.proxies.push(proxy)
  return proxy
}

async function postgresEnv() {
  const env = makeEnv('pg', 'postgres')
  progress('PostgreSQL: initdb and start (durable defaults)')
  env.cluster = await makeCluster('pg')
  await pgStart(env.cluster)
  env.dbName = 'placemat_faults'
  env.sqlPort = () => env.cluster.port
  await sql(env.cluster.port, 'postgres', `create database ${env.dbName}`)
  for (const name of ['pg-a', 'pg-b']) {
    const proxy = await proxied(env, env.cluster.port)
    const d = await startDaemon(env, name, pgUrl(proxy.port, env.dbName))
    env.rotation.push(d)
    if (name === 'pg-a') await loadProviders(env, d)
  }
  await waitHealthy(env.rotation)
  return env
}

async function teardown(env) {
  for (const d of env.daemons) await stopDaemon(d)
  for (const p of env.proxies) {
    await p.close().catch(() => {})
    live.proxies.delete(p)
  }
  for (const c of [env.cluster, env.standby].filter(Boolean)) {
    if (fs.existsSync(path.join(c.data, 'postmaster.pid'))) await pgStop(c, 'fast').catch(() => pgStop(c, 'immediate').catch(() => {}))
  }
}

// ---------------------------------------------------------------------------------------------
// The faults

const globalNotes = []
const results = {
  faults: [],
  failover: null,
  notes: globalNotes,
  options: {providers: PROVIDERS, freezeSeconds: FREEZE_S, tmpfsMiB: TMPFS_MB, faults: [...FAULTS], failover: FAILOVER},
}

const FAULT_NAMES = {
  1: 'pg_ctl restart -m fast',
  2: 'PostgreSQL stopped 15 s',
  3: 'pg_terminate_backend (all)',
  4: 'daemon started while PostgreSQL down',
  5: `PostgreSQL frozen ${FREEZE_S} s (SIGSTOP)`,
  6: 'PostgreSQL read-only 10 s',
  7: `SQLite disk full 10 s (${TMPFS_MB} MiB tmpfs)`,
  8: 'SQLite file deleted',
}

async function postgresFaults() {
  const env = await postgresEnv()
  const c = env.cluster
  try {
    if (FAULTS.has(1)) {
      results.faults.push(
        await runFault(env, 1, FAULT_NAMES[1], async (ctx) => {
          ctx.start()
          await pgCtl(c, ['-l', c.log, '-o', c.opts, '-m', 'fast', '-w', '-t', '120', 'restart'], 150000)
          ctx.end()
        }),
      )
    }
    if (FAULTS.has(2)) {
      results.faults.push(
        await runFault(env, 2, FAULT_NAMES[2], async (ctx) => {
          ctx.start()
          await pgStop(c, 'fast')
          await sleep(15000)
          await pgStart(c)
          ctx.end()
        }),
      )
    }
    if (FAULTS.has(3)) {
      results.faults.push(
        await runFault(
          env,
          3,
          FAULT_NAMES[3],
          async (ctx) => {
            ctx.start()
            const r = await sql(
              c.port,
              'postgres',
              'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
              [env.dbName],
            )
            ctx.end()
            ctx.phase.extra.terminated = r.rowCount
            ctx.phase.notes.push(`${r.rowCount} backends terminated`)
          },
          {instant: true},
        ),
      )
    }
    if (FAULTS.has(4)) results.faults.push(await faultStartWhileDown(env))
    if (FAULTS.has(5)) {
      results.faults.push(
        await runFault(env, 5, FAULT_NAMES[5], async (ctx) => {
          const pids = await postmasterPids(c)
          ctx.start()
          for (const pid of pids) {
            live.frozen.add(pid)
            try {
              process.kill(pid, 'SIGSTOP')
            } catch {}
          }
          ctx.phase.extra.frozen = pids.length
          await sleep(FREEZE_S * 1000)
          for (const pid of pids) {
            try {
              process.kill(pid, 'SIGCONT')
            } catch {}
            live.frozen.delete(pid)
          }
          ctx.end()
        }),
      )
    }
    if (FAULTS.has(6)) {
      results.faults.push(
        await runFault(env, 6, FAULT_NAMES[6], async (ctx) => {
          ctx.start()
          await setReadOnly(c, true)
          await sleep(10000)
          await setReadOnly(c, false)
          ctx.end()
        }),
      )
    }
    // The whole PostgreSQL run's ledger, in SQL.
    if (env.ledger.size) {
      const all = await verifyLedger(env, {id: 'all'}, {all: true})
      results.postgresLedger = all
      progress(`PostgreSQL run: ${all.acked} claims acknowledged, ${all.deletesAcked} deletes acknowledged, ${all.lost} lost`)
    }
  } finally {
    await teardown(env)
  }
}

async function faultStartWhileDown(env) {
  const c = env.cluster
  let extraDaemon = null
  const res = await runFault(
    env,
    4,
    FAULT_NAMES[4],
    async (ctx) => {
      const ex = ctx.phase.extra
      ctx.start()
      await pgStop(c, 'fast')
      const downAt = now()
      // A third daemon, starting while the database is down: it must listen and say "starting".
      const proxyC = await proxied(env, c.port)
      extraDaemon = await startDaemon(env, 'pg-c', pgUrl(proxyC.port, env.dbName), [], {serving: false})
      const h = await health(extraDaemon)
      ex.newDaemonHealth = {status: h.status || h.kind, title: errorTitle(h), detail: h.json?.errors?.[0]?.detail ?? h.json?.status}
      ex.newDaemonSaysStarting = h.status === 503 && /starting/i.test(`${errorTitle(h)} ${h.json?.errors?.[0]?.detail}`)
      if (alive(extraDaemon)) env.rotation.push(extraDaemon)
      // One with --db-wait 3: it must give up, exit non-zero and name the database.
      const proxyD = await proxied(env, c.port)
      const waitUrl = pgUrl(proxyD.port, env.dbName)
      const t = now()
      const dw = await startDaemon(env, 'pg-d', waitUrl, ['--db-wait', '3'], {serving: false, expectExit: true})
      const exit = await Promise.race([dw.exited, sleep(60000).then(() => null)])
      const out = logTailOf(dw.logFile, 20)
      ex.dbWait = {
        exit: exit ? (exit.code ?? `signal ${exit.signal}`) : 'still running after 60 s',
        seconds: exit ? (dw.exitInfo.at - t) / 1000 : null,
        namesDatabase: out.includes(env.dbName) || out.includes(`127.0.0.1:${proxyD.port}`),
        message: out
          .split('\n')
          .filter((l) => !l.startsWith('{') && /did not answer|database/i.test(l))
          .slice(-1)
          .join('')
          .slice(0, 500),
      }
      if (!exit) await stopDaemon(dw)
      // Down for at least 8 s in all.
      await sleep(Math.max(0, downAt + 8000 - now()))
      await pgStart(c)
      ctx.end()
      // Until the new daemon's health says 200, polled apart from the load.
      const t1 = now()
      while (now() - t1 < RECOVERY_CAP_MS && alive(extraDaemon)) {
        const hh = await health(extraDaemon)
        if (hh.status === 200) {
          ex.newDaemonHealthySeconds = (now() - t1) / 1000
          break
        }
        await sleep(100)
      }
    },
    {
      async after(ctx, result) {
        ctx.phase.extra.newDaemonFirstClaimSeconds = result.recoveryPerDaemon?.['pg-c'] ?? null
      },
    },
  )
  // The third daemon leaves the rotation after the checks.
  if (extraDaemon) {
    await stopDaemon(extraDaemon)
    env.rotation = env.rotation.filter((d) => d !== extraDaemon)
  }
  env.daemons = env.daemons.filter((d) => d.name !== 'pg-c' && d.name !== 'pg-d')
  return res
}

async function sqliteEnv(name, dir) {
  const env = makeEnv(name, 'sqlite')
  env.dir = dir
  env.file = path.join(dir, 'placemat.db')
  const d = await startDaemon(env, 'sqlite', env.file)
  env.rotation.push(d)
  await loadProviders(env, d)
  await waitHealthy(env.rotation)
  return env
}

async function faultDiskFull() {
  const mnt = path.join(WORK, 'tmpfs')
  fs.mkdirSync(mnt)
  if (!asRoot) return {id: 7, name: FAULT_NAMES[7], skipped: 'not root: mount -t tmpfs is not permitted'}
  const m = await run('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MB}m`, 'tmpfs', mnt])
  if (m.code !== 0) return {id: 7, name: FAULT_NAMES[7], skipped: `mount -t tmpfs refused: ${m.out.trim()}`}
  live.mounts.push(mnt)
  let env
  try {
    env = await sqliteEnv('sqlite-full', mnt)
    const filler = path.join(mnt, 'filler')
    return await runFault(env, 7, FAULT_NAMES[7], async (ctx) => {
      const before = fs.statfsSync(mnt)
      const size = (f) => (fs.existsSync(f) ? Math.round(fs.statSync(f).size / 1024) : null)
      ctx.phase.extra.tmpfsMiB = TMPFS_MB
      ctx.phase.extra.freeBeforeKiB = (before.bavail * before.bsize) / 1024
      ctx.phase.extra.databaseKiB = size(env.file)
      ctx.phase.extra.walKiB = size(`${env.file}-wal`)
      if (ctx.phase.extra.freeBeforeKiB < 1024)
        ctx.phase.notes.push(
          `the ${TMPFS_MB} MiB tmpfs was already full before the filler (database ${ctx.phase.extra.databaseKiB} KiB, WAL ${ctx.phase.extra.walKiB} KiB): the daemon's own WAL filled it, and deleting the filler frees nothing`,
        )
      ctx.start()
      const fd = fs.openSync(filler, 'w')
      let written = 0
      for (const size of [1 << 20, 4096]) {
        const buf = Buffer.alloc(size, 1)
        try {
          for (;;) written += fs.writeSync(fd, buf)
        } catch (err) {
          if (err.code !== 'ENOSPC') throw err
        }
      }
      fs.closeSync(fd)
      const st = fs.statfsSync(mnt)
      ctx.phase.extra.fillerKiB = written / 1024
      ctx.phase.extra.freeDuringKiB = (st.bavail * st.bsize) / 1024
      await sleep(10000)
      fs.rmSync(filler)
      ctx.end()
    })
  } finally {
    if (env) await teardown(env)
    const i = live.mounts.indexOf(mnt)
    if (i >= 0) {
      live.mounts.splice(i, 1)
      const u = await run('umount', [mnt])
      if (u.code !== 0) await run('umount', ['-l', mnt])
    }
  }
}

async function faultFileDeleted() {
  const dir = path.join(WORK, 'sqlite-deleted')
  fs.mkdirSync(dir)
  const env = await sqliteEnv('sqlite-del', dir)
  const d = env.rotation[0]
  try {
    return await runFault(
      env,
      8,
      FAULT_NAMES[8],
      async (ctx) => {
        ctx.phase.extra.besideTheFile = {beforeDelete: fs.readdirSync(env.dir)}
        ctx.start()
        fs.rmSync(env.file)
        ctx.phase.deletedAt = now()
        await sleep(10000)
        ctx.end()
      },
      {
        recovery: false,
        async after(ctx, _result) {
          const phase = ctx.phase
          const ex = phase.extra
          // Writes acknowledged that were sent after the delete: gone with the file.
          const acked = phase.samples.filter((s) => (s.m === 'PUT' || s.m === 'DELETE') && s.s === 204)
          ex.ackedAfterDelete = acked.filter((s) => s.t0 >= phase.deletedAt).length
          ex.ackedInFlightAtDelete = acked.filter((s) => s.t0 < phase.deletedAt && s.t1 >= phase.deletedAt).length
          const writesAfter = phase.samples.filter((s) => (s.m === 'PUT' || s.m === 'DELETE') && s.t0 >= phase.deletedAt)
          ex.writesAfterDelete = countStatuses(writesAfter)
          const h = await health(d)
          ex.healthAfter = {status: h.status || h.kind, title: errorTitle(h)}
          // The ledger against the running daemon (the file is gone: it alone holds the data).
          phase.ledgerCheck = await verifyLedger(env, phase, {truthDaemon: d})
          phase.ledgerCheck.lost += ex.ackedAfterDelete
          phase.overcommitCheck = await checkOvercommit(env)
          // Stopped, it must refuse to start on the missing file, pointing at `placemat db init`.
          const stop = await stopDaemon(d)
          ex.stopExit = stop?.code ?? stop?.signal
          ex.besideTheFile.afterStop = fs.readdirSync(env.dir)
          const again = await startDaemon(env, 'sqlite-again', env.file, [], {serving: false, expectExit: true})
          const exit = await Promise.race([again.exited, sleep(20000).then(() => null)])
          const out = logTailOf(again.logFile, 10)
          ex.restart = {
            exit: exit ? (exit.code ?? `signal ${exit.signal}`) : 'still running after 20 s',
            refused: Boolean(exit && exit.code !== 0),
            mentionsDbInit: /placemat db init --db/.test(out),
            message: out.split('\n').slice(-3).join(' | ').slice(0, 600),
            fileCreated: fs.existsSync(env.file),
          }
          if (!exit) {
            const hh = await health(again)
            ex.restart.health = hh.status || hh.kind
            const list = await http(again, 'GET', '/resource_providers')
            ex.restart.providersServed = list.json?.resource_providers?.length ?? `${list.status || list.kind}`
            const usage = await http(again, 'GET', `/usages?project_id=${env.clients[0].project}`)
            ex.restart.usagesOfAClientProject = usage.json?.usages ?? `${usage.status || usage.kind}`
            await stopDaemon(again)
            ex.restart.besideTheFileAfter = fs.readdirSync(env.dir)
          }
          if (!fs.existsSync(env.file)) {
            const init = await run(process.execPath, [BIN, 'db', 'init', '--db', env.file], {env: {...process.env, PLACEMAT_HOME: d.home}})
            ex.dbInit = {exit: init.code, out: init.out.trim().slice(0, 300)}
            if (init.code === 0) {
              const fresh = await startDaemon(env, 'sqlite-fresh', env.file, [], {serving: false, expectExit: true})
              let serving = false
              for (let i = 0; i < 100 && alive(fresh) && !serving; i++) {
                serving = (await health(fresh)).status === 200
                if (!serving) await sleep(200)
              }
              const list = serving ? await http(fresh, 'GET', '/resource_providers') : null
              ex.dbInit.thenServes = serving
              ex.dbInit.providers = list?.json?.resource_providers?.length ?? null
              await stopDaemon(fresh)
            }
          }
          // The checks read the stopped daemon's answers already taken; nothing else runs.
          env.rotation = []
        },
      },
    )
  } finally {
    await teardown(env)
  }
}

// ---------------------------------------------------------------------------------------------
// Failover: a primary, a synchronous streaming standby, the standby promoted.

async function failoverRun() {
  const env = makeEnv('failover', 'postgres')
  env.dbName = 'placemat_failover'
  progress('failover: primary (initdb) and a synchronous streaming standby (pg_basebackup -R)')
  const primary = await makeCluster('primary')
  await pgStart(primary)
  await sql(primary.port, 'postgres', `create database ${env.dbName}`)
  const standby = await makeCluster('standby', {init: false})
  await must(
    path.join(primary.bin, 'pg_basebackup'),
    ['-D', standby.data, '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-R', '-X', 'stream', '-c', 'fast'],
    {asPostgres: true},
  )
  await pgStart(standby)
  env.cluster = primary
  env.standby = standby
  let serverPort = primary.port
  env.sqlPort = () => serverPort
  const waitRepl = async (pred, what) => {
    for (let i = 0; i < 300; i++) {
      const r = await sql(primary.port, 'postgres', 'select application_name, state, sync_state from pg_stat_replication')
      if (r.rows.some(pred)) return r.rows
      await sleep(100)
    }
    throw new Error(`the standby is not ${what}`)
  }
  await waitRepl((r) => r.state === 'streaming', 'streaming')
  // Only now synchronous: commits wait for the standby (the standby's own settings, copied
  // before this, leave it a primary without a synchronous standby once promoted).
  await sql(primary.port, 'postgres', "alter system set synchronous_standby_names = '*'")
  await sql(primary.port, 'postgres', "alter system set synchronous_commit = 'on'")
  await sql(primary.port, 'postgres', 'select pg_reload_conf()')
  const rows = await waitRepl((r) => r.sync_state === 'sync', 'synchronous')
  progress(`  replication: ${JSON.stringify(rows)}`)
  const proxy = await proxied(env, primary.port)
  const url = pgUrl(proxy.port, env.dbName)
  for (const name of ['fo-a', 'fo-b']) {
    const d = await startDaemon(env, name, url)
    env.rotation.push(d)
    if (name === 'fo-a') await loadProviders(env, d)
  }
  await waitHealthy(env.rotation)
  try {
    const r = await runFault(
      env,
      'failover',
      'primary stopped (immediate), standby promoted, proxy repointed',
      async (ctx) => {
        ctx.start()
        ctx.phase.recoveryFrom = ctx.phase.faultStart
        await pgStop(primary, 'immediate')
        ctx.phase.extra.stoppedSeconds = (now() - ctx.phase.faultStart) / 1000
        await pgCtl(standby, ['promote', '-w', '-t', '60'], 90000)
        ctx.phase.extra.promotedSeconds = (now() - ctx.phase.faultStart) / 1000
        serverPort = standby.port
        env.cluster = standby
        proxy.repoint({port: standby.port})
        ctx.end()
      },
      {
        async after(ctx, result) {
          // "Statuses during" for the failover: from the stop until both daemons serve claims.
          const phase = ctx.phase
          const until = result.recovery === null ? now() : phase.faultStart + result.recovery * 1000
          const during = overlapping(phase.samples, phase.faultStart, until)
          result.statusesDuring = countStatuses(during)
          result.over15s = during.filter((s) => s.ms > BOUND_MS).length
          result.longestMs = during.length ? Math.max(...during.map((s) => s.ms)) : null
          result.window = {from: 0, to: (until - phase.faultStart) / 1000}
          const counter = await sql(standby.port, env.dbName, "select value from placemat_meta where key = 'change_counter'")
          phase.extra.promotedChangeCounter = Number(counter.rows[0]?.value)
          phase.extra.daemonJournal = {}
          for (const d of env.rotation.filter(alive)) phase.extra.daemonJournal[d.name] = (await health(d)).json?.journal ?? null
        },
      },
    )
    results.failover = r
  } finally {
    await teardown(env)
  }
}

// ---------------------------------------------------------------------------------------------
// The report

const fmtMs = (v) => (v === null || v === undefined ? '—' : String(Math.round(v)))
const fmtS = (v) => (v === null || v === undefined ? 'never' : v.toFixed(1))

function statusesCell(r) {
  let s = fmtCounts(r.statusesDuring ?? {})
  if (r.over15s) s += ` **>15s:${r.over15s}**`
  return s
}

function faultRow(r) {
  if (r.skipped) return `| ${r.id} ${r.name} | skipped: ${r.skipped} | | | | | |`
  if (!r.statusesDuring) return `| ${r.id} ${r.name} | not run: ${r.error} | | | | | |`
  let recovery = r.recovery === undefined ? 'n/a' : fmtS(r.recovery)
  if (r.id === 4) recovery += ` (new daemon: first claim ${fmtS(r.extra?.newDaemonFirstClaimSeconds)})`
  if (r.id === 8)
    recovery = `n/a (restart ${r.extra?.restart?.refused ? 'refused' : 'NOT refused'}${r.extra?.restart?.mentionsDbInit ? ', names db init' : ''})`
  const lost = r.checks?.ledger ? String(r.checks.ledger.lost) : `? (${r.checksError ?? 'no check'})`
  const oc = r.checks?.overcommit ? String(r.checks.overcommit.count) : '?'
  return `| ${r.id} ${r.name} | ${statusesCell(r)} | ${fmtMs(r.longestMs)} | ${recovery} | ${r.exits?.length ?? 0} | ${lost} | ${oc} |`
}

/** Every goal a result misses, and what else is worth saying, as lines. */
function notesFor(r, {failover = false} = {}) {
  const n = []
  if (r.skipped) return n
  const label = failover ? 'failover' : `fault ${r.id}`
  if (r.error) n.push(`${label}: the run itself failed: ${r.error}`)
  for (const e of r.exits ?? [])
    n.push(
      `${label}: daemon ${e.daemon} EXITED (code ${e.code}, signal ${e.signal}); its output ends:\n    ${e.log.split('\n').join('\n    ')}`,
    )
  const other = r.other5xx ?? []
  if (other.length) {
    const by = {}
    for (const o of other) by[`${o.m} ${o.s} ${o.text ?? ''}`.slice(0, 260)] = (by[`${o.m} ${o.s} ${o.text ?? ''}`.slice(0, 260)] ?? 0) + 1
    n.push(
      `${label}: ${other.length} 5xx answers other than 503 (first at ${other[0].at} s from the fault's start): ${Object.entries(by)
        .map(([k, v]) => `${v}x ${k}`)
        .join('; ')}`,
    )
  }
  const net = r.networkErrors ?? []
  if (net.length)
    n.push(
      `${label}: ${net.length} requests without an HTTP answer: ${fmtCounts(countStatuses(net.map((x) => ({s: `${x.d} ${x.m} ${x.s}`}))))}`,
    )
  if (r.over15s)
    n.push(`${label}: ${r.over15s} requests during the fault took longer than ${BOUND_MS / 1000} s (longest ${fmtMs(r.longestMs)} ms)`)
  if (r.recovery === null)
    n.push(
      `${label}: some daemon acknowledged no claim within ${RECOVERY_CAP_MS / 1000} s of the fault's end: ${JSON.stringify(r.recoveryPerDaemon)}`,
    )
  else if (typeof r.recovery === 'number' && r.recovery > 2)
    n.push(`${label}: recovery took ${r.recovery.toFixed(1)} s (goal 2 s): ${JSON.stringify(r.recoveryPerDaemon)}`)
  const l = r.checks?.ledger
  if (l) {
    if (l.lost) n.push(`${label}: ${l.lost} acknowledged writes LOST (truth: ${l.truth}): ${JSON.stringify(l.lostSamples.slice(0, 3))}`)
    if (l.committedDespite503)
      n.push(`${label}: ${l.committedDespite503} claims answered 503 ("nothing was changed") are in the database anyway`)
    if (l.committedAfterNetworkError)
      n.push(`${label}: ${l.committedAfterNetworkError} claims without an HTTP answer were committed (not a loss)`)
    if (l.goneAfterFailedDelete)
      n.push(
        `${label}: ${l.goneAfterFailedDelete} claims whose delete got no 204 are gone (${l.goneAfter503Delete} of them after 503 answers only)`,
      )
    const stale = Object.entries(l.stale)
    if (stale.length)
      n.push(
        `${label}: STALE: daemons disagree with ${l.truth} on consumers' allocations: ${JSON.stringify(l.stale)}; e.g. ${JSON.stringify(l.staleSamples.slice(0, 3))}`,
      )
    if (Object.keys(l.unreadable).length) n.push(`${label}: allocations unreadable in the check: ${JSON.stringify(l.unreadable)}`)
  }
  const u = r.checks?.usages
  if (u && Object.values(u.mismatches).some((v) => v))
    n.push(
      `${label}: STALE usages (daemon against SQL) on touched providers: ${JSON.stringify(u.mismatches)}; e.g. ${JSON.stringify(u.samples.slice(0, 3))}`,
    )
  const oc = r.checks?.overcommit
  if (oc?.count) n.push(`${label}: OVERCOMMIT: ${JSON.stringify(oc.daemons)} sql ${oc.sql}; e.g. ${JSON.stringify(oc.samples.slice(0, 3))}`)
  if (oc?.unreadable) n.push(`${label}: ${oc.unreadable} providers unreadable in the overcommit check`)
  if (r.checksError) n.push(`${label}: checks failed: ${r.checksError}`)
  const d404 = (r.delete404 ?? []).filter((x) => !x.earlierFailures)
  if (d404.length)
    n.push(
      `${label}: ${d404.length} DELETEs of acknowledged claims answered 404 with no earlier failed delete: ${JSON.stringify(d404.slice(0, 3))}`,
    )
  if (r.emptyAnswers) n.push(`${label}: ${r.emptyAnswers} candidate answers were empty`)
  if (r.titles503 && Object.keys(r.titles503).length) n.push(`${label}: 503s during by request and title: ${fmtCounts(r.titles503)}`)
  if (r.healthDuring && Object.keys(r.healthDuring).length)
    n.push(
      `${label}: health during the fault (probes by daemon, status, what): ${fmtCounts(r.healthDuring)}; slowest ${r.healthSlowestMs} ms`,
    )
  const x = r.extra ?? {}
  if (r.id === 4 && x.newDaemonHealth) {
    n.push(
      `${label}: the daemon started while PostgreSQL was down answered health ${x.newDaemonHealth.status} "${x.newDaemonHealth.title}" (says starting: ${x.newDaemonSaysStarting ? 'yes' : 'NO'}); health 200 ${fmtS(x.newDaemonHealthySeconds)} s and its first claim ${fmtS(x.newDaemonFirstClaimSeconds)} s after PostgreSQL started`,
    )
    if (x.dbWait)
      n.push(
        `${label}: the daemon with --db-wait 3: exit ${x.dbWait.exit}${x.dbWait.seconds ? ` ${x.dbWait.seconds.toFixed(1)} s after spawn` : ''}, names the database: ${x.dbWait.namesDatabase ? 'yes' : 'NO'}; it said: ${x.dbWait.message}`,
      )
    if (x.dbWait && (x.dbWait.exit === 0 || typeof x.dbWait.exit !== 'number' || !x.dbWait.namesDatabase))
      n.push(`${label}: the --db-wait daemon did NOT exit non-zero naming the database`)
  } else if (r.id === 8 && x.restart) {
    n.push(
      `${label}: writes sent after the delete: ${fmtCounts(x.writesAfterDelete ?? {})}; acknowledged after the delete: ${x.ackedAfterDelete} (sent before it, answered after: ${x.ackedInFlightAtDelete}); health after: ${x.healthAfter?.status} "${x.healthAfter?.title}"; SIGTERM: exit ${x.stopExit}`,
    )
    n.push(
      `${label}: beside the file before the delete: ${x.besideTheFile?.beforeDelete?.join(', ')}; after the stop: ${x.besideTheFile?.afterStop?.join(', ') || 'nothing'}`,
    )
    if (x.restart.refused)
      n.push(
        `${label}: started again on the missing file: refused (exit ${x.restart.exit}), ${x.restart.mentionsDbInit ? 'naming `placemat db init --db FILE`' : 'NOT naming `placemat db init`'}: ${x.restart.message}`,
      )
    else
      n.push(
        `${label}: started again on the missing file it was NOT refused (${x.restart.exit}): it created ${x.restart.fileCreated ? 'a new database file' : 'no file'}, answered health ${x.restart.health}, served ${x.restart.providersServed} providers (there were ${PROVIDERS}) and usages ${JSON.stringify(x.restart.usagesOfAClientProject)} for a load client's project; beside the file afterwards: ${x.restart.besideTheFileAfter?.join(', ')}; it said: ${x.restart.message}`,
      )
    if (x.dbInit)
      n.push(
        `${label}: placemat db init --db FILE: exit ${x.dbInit.exit}${x.dbInit.exit === 0 ? `, then the daemon ${x.dbInit.thenServes ? 'serves' : 'does NOT serve'} (${x.dbInit.providers} providers)` : `: ${x.dbInit.out}`}`,
      )
  } else if (Object.keys(x).length) n.push(`${label}: ${JSON.stringify(x)}`)
  for (const note of r.notes ?? []) n.push(`${label}: ${note}`)
  if (r.metrics && Object.keys(r.metrics).length) n.push(`${label}: metrics over the fault: ${JSON.stringify(r.metrics)}`)
  for (const [name, lines] of Object.entries(r.logs ?? {})) {
    const requests = lines.filter((x) => x.request)
    const errors = lines.filter((x) => !x.request && (x.level === null || x.level >= 50))
    const warns = lines.filter((x) => !x.request && x.level !== null && x.level < 50)
    if (requests.length)
      n.push(`${label}: daemon ${name} access log (warn and worse): ${requests.map((x) => `${x.count}x ${x.request}`).join('; ')}`)
    if (errors.length)
      n.push(
        `${label}: daemon ${name} logged at error level or outside the JSON log:\n    ${errors
          .slice(0, 8)
          .map((x) => `${x.count}x ${x.sample}`)
          .join('\n    ')}`,
      )
    if (warns.length)
      n.push(
        `${label}: daemon ${name} warnings:\n    ${warns
          .slice(0, 6)
          .map((x) => `${x.count}x ${x.sample.slice(0, 400)}`)
          .join('\n    ')}`,
      )
  }
  return n
}

function report() {
  const out = []
  if (results.faults.length) {
    out.push(`## Database faults under claim load (${PROVIDERS} providers, 4 clients)`, '')
    out.push('| fault | statuses during | longest wait (ms) | recovery (s) | daemon exits | acknowledged writes lost | overcommit |')
    out.push('|---|---|---|---|---|---|---|')
    for (const r of results.faults.sort((a, b) => a.id - b.id)) out.push(faultRow(r))
    out.push('')
  }
  const f = results.failover
  if (f) {
    out.push('## Failover: primary stopped hard, synchronous standby promoted', '')
    out.push(
      '| statuses from the stop until both daemons serve | longest wait (ms) | seconds until both daemons serve claims | daemon exits | acknowledged writes lost (on the promoted server) | overcommit | stale answers |',
    )
    out.push('|---|---|---|---|---|---|---|')
    if (f.statusesDuring) {
      const stale = f.checks
        ? Object.values(f.checks.ledger.stale).reduce((a, b) => a + b, 0) +
          Object.values(f.checks.usages.mismatches).reduce((a, b) => a + b, 0)
        : '?'
      out.push(
        `| ${statusesCell(f)} | ${fmtMs(f.longestMs)} | ${fmtS(f.recovery)} | ${f.exits.length} | ${f.checks?.ledger?.lost ?? '?'} | ${f.checks?.overcommit?.count ?? '?'} | ${stale} |`,
      )
    } else out.push(`| not run: ${f.error} | | | | | | |`)
    out.push('')
  }
  const notes = [...globalNotes]
  if (setupExits.length) notes.push(`daemons exited during set-up: ${JSON.stringify(setupExits)}`)
  if (results.postgresLedger) {
    const l = results.postgresLedger
    notes.push(
      `PostgreSQL faults, the whole ledger in SQL at the end: ${l.acked} claims and ${l.deletesAcked} deletes acknowledged, ${l.lost} lost${l.lost ? ` ${JSON.stringify(l.lostSamples.slice(0, 3))}` : ''}`,
    )
  }
  for (const r of results.faults) notes.push(...notesFor(r))
  if (f) notes.push(...notesFor(f, {failover: true}))
  if (results.fatal) notes.push(`the run stopped early: ${results.fatal}`)
  if (notes.length) {
    out.push('### Notes', '')
    for (const n of notes) out.push(`- ${n}`)
    out.push('')
  }
  return out.join('\n')
}

// ---------------------------------------------------------------------------------------------

async function main() {
  progress(
    `work directory ${WORK}; ${PROVIDERS} providers; faults ${[...FAULTS].join(',') || 'none'}${FAILOVER ? ' and the failover run' : ''}`,
  )
  const pgFaults = [...FAULTS].filter((n) => n <= 6)
  if (pgFaults.length || FAILOVER) {
    if (!postgresBin()) throw new Error('no PostgreSQL server binaries (initdb) under /usr/lib/postgresql')
  }
  if (pgFaults.length) await postgresFaults()
  if (FAULTS.has(7)) results.faults.push(await faultDiskFull())
  if (FAULTS.has(8)) results.faults.push(await faultFileDeleted())
  if (FAILOVER) await failoverRun()
}

let code = 0
try {
  await main()
} catch (err) {
  results.fatal = err.stack ?? String(err)
  progress(`FAILED: ${results.fatal}`)
  code = 1
}
process.stdout.write(report() + '\n')
if (JSON_FILE) {
  fs.writeFileSync(JSON_FILE, JSON.stringify(results, null, 1) + '\n')
  progress(`raw results in ${JSON_FILE}`)
}
cleanupSync()
process.exit(code)
