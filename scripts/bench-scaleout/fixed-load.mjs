// bench-scaleout --fixed-load R: CPU per claim at a fixed offered load (an open loop), where the
// closed-loop churn saturates the cores and its CPU per claim mixes in processes taking turns.
//
// For each daemon count K, after a warm-up of the same load (not measured):
//   warm-up      --warm-up W s (15 by default) of the round-robin load, not measured: fresh daemons
//                spend their first thousand claims or so compiling
//   round-robin  a claim every 1/R s (GET candidates limit=5, PUT /allocations of the first
//                candidate that can be written, then the oldest claim released once 160 are
//                held, as 8 churn clients of 20 each hold), each request to the next node in
//                turn as a balancer sends them; a claim that would make more than 50 in flight
//                is counted "not kept up" and not sent
//   round-robin by claim  K >= 2: the same, but all the requests of a claim (its release among them)
//                to one node, the next claim to the next node: what sending each request elsewhere adds
//   pinned       K >= 2: every request of every claim to node A; each other node (a follower)
//                gets one GET /resource_classes/VCPU per claim, so it catches up as often as a
//                node of the round-robin pass does (a node asked nothing applies nothing)
//   reads alone  K >= 2: those reads on the followers at R/s with nothing written: what a read
//                costs without anything to apply, taken off the followers' figure
//   node A alone K >= 2, first and again after pinned: every request to node A, the others asked
//                nothing (so applying nothing): one node's figure on the same daemons, database
//                and minute as the K-node passes, which the machine's drift between the K=1 run
//                and the K-node run (up to a third of one node's figure) does not reach
// Each pass reads the CPU of each daemon and of PostgreSQL (utime+stime, /proc) and the nodes'
// counters before and after. The decomposition of K nodes against one: followers' CPU per claim
// (less their reads' own cost) = applying the others' changes; node A's against the one-node
// figure = what being one of several costs the writer; round-robin minus both = interleaving.
// With --cpu-prof DIR the daemons run under node --cpu-prof, and each pass's samples (cut to its
// window) give the functions with the most self time per claim.
import crypto from 'node:crypto'
import fs from 'node:fs'
import {CLOCK_TICKS, cpuSeconds, processTree, statFields} from '../lib/proc.mjs'
import {fmtFixed as x, fmtMs, pct} from '../lib/stats.mjs'
import {CHURN_QUERY} from './churn.mjs'
import {call, must} from './http.mjs'
import {metricValue} from './nodes.mjs'
import {serverTransactions} from './postgres.mjs'
import {report, results} from './report.mjs'
import {progress, running} from './running.mjs'

const MAX_IN_FLIGHT = 50
const HELD = 160
export const KEEP_UP_READ = '/resource_classes/VCPU'
const COUNTERS = {
  writes: 'placemat_store_write_duration_seconds_count',
  retried: 'placemat_writes_retried_total',
  images: 'placemat_journal_catchups_total{from="images"}',
  rows: 'placemat_journal_catchups_total{from="rows"}',
  applied: 'placemat_journal_changes_applied_total',
}
const nowUs = () => Number(process.hrtime.bigint() / 1000n)

/** `{kind: count}` as `25 × 503 Database Contended, 1 × ECONNRESET`, or `0`. */
export const kinds = (byKind) =>
  Object.entries(byKind ?? {})
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n} × ${k}`)
    .join(', ') || '0'

/**
 * Offers `rate` claims a second for `seconds` s: round-robin per request over `nodes`, or all to
 * nodes[0] with `pinned` (one keep-up read per claim to each other node then), or round-robin per
 * claim with `byClaim` (a claim's requests, its release among them, to one node). With `readsOnly`,
 * only the keep-up reads, at `rate` a second.
 */
async function pace(nodes, {rate, seconds, pinned = false, readsOnly = false, byClaim = false}) {
  const stats = {
    due: 0,
    started: 0,
    notKeptUp: 0,
    claims: 0,
    failed: 0,
    conflicts: 0,
    errors: 0,
    errorKinds: {},
    errorSamples: [],
    latencies: [],
    releases: 0,
    reads: 0,
    readsSkipped: 0,
  }
  const held = []
  const unclear = []
  let counter = 0
  let inFlight = 0
  let readsInFlight = 0
  const pending = new Set()
  const track = (p) => {
    pending.add(p)
    p.finally(() => pending.delete(p))
  }
  const noteError = (node, method, r, err) => {
    stats.errors++
    // By kind: the status and Placement's error title (503 Database Contended), or the network error.
    let title = ''
    try {
      title = JSON.parse(r?.text ?? '').errors?.[0]?.title ?? ''
    } catch {}
    const kind = err ? `${err.code ?? err.message}` : `${r.status}${title ? ` ${title}` : ''}`
    stats.errorKinds[kind] = (stats.errorKinds[kind] ?? 0) + 1
    if (stats.errorSamples.length < 5)
      stats.errorSamples.push(`${node.name} ${method} ${err ? err.message : `${r.status} ${r.text.slice(0, 160)}`}`)
  }
  const send = async (method, pathname, body, to) => {
    const node = to ?? (pinned ? nodes[0] : nodes[counter++ % nodes.length])
    try {
      const r = await call(node.url, method, pathname, body)
      if (r.status >= 500) noteError(node, method, r, null)
      return r
    } catch (err) {
      noteError(node, method, null, err)
      return {status: 0}
    }
  }
  const project = crypto.randomUUID()
  const user = crypto.randomUUID()
  const claim = async () => {
    const begin = performance.now()
    const to = byClaim ? nodes[counter++ % nodes.length] : undefined
    const g = await send('GET', CHURN_QUERY, undefined, to)
    const requests = g.status === 200 ? (g.json?.allocation_requests ?? []) : []
    let claimed = false
    for (const ar of requests) {
      const consumer = crypto.randomUUID()
      const body = {allocations: ar.allocations, project_id: project, user_id: user, consumer_generation: null, consumer_type: 'INSTANCE'}
      const p = await send('PUT', `/allocations/${consumer}`, body, to)
      if (p.status === 204) {
        stats.claims++
        stats.latencies.push(performance.now() - begin)
        held.push(consumer)
        claimed = true
        break
      }
      if (p.status === 409) {
        stats.conflicts++
        continue
      }
      unclear.push(consumer)
      break
    }
    if (!claimed) stats.failed++
    while (held.length > HELD) {
      const r = await send('DELETE', `/allocations/${held.shift()}`, undefined, to)
      if (r.status === 204) stats.releases++
    }
  }
  const keepUp = async (node) => {
    try {
      const r = await call(node.url, 'GET', KEEP_UP_READ)
      if (r.status !== 200) noteError(node, 'GET', r, null)
    } catch (err) {
      noteError(node, 'GET', null, err)
    }
  }
  const total = Math.round(seconds * rate)
  const t0 = performance.now()
  await new Promise((resolve) => {
    const tick = () => {
      // Every claim due by now is started (several at once after a late timer): the rate holds on average.
      const due = Math.min(total, Math.floor(((performance.now() - t0) * rate) / 1000) + 1)
      while (stats.due < due) {
        stats.due++
        if (!readsOnly) {
          if (inFlight >= MAX_IN_FLIGHT) stats.notKeptUp++
          else {
            stats.started++
            inFlight++
            track(claim().finally(() => inFlight--))
          }
        }
        if (pinned || readsOnly) {
          for (const f of nodes.slice(1)) {
            if (readsInFlight >= MAX_IN_FLIGHT) stats.readsSkipped++
            else {
              stats.reads++
              readsInFlight++
              track(keepUp(f).finally(() => readsInFlight--))
            }
          }
        }
      }
      if (stats.due >= total) resolve()
      else setTimeout(tick, Math.max(0, t0 + (stats.due * 1000) / rate - performance.now()))
    }
    tick()
  })
  while (pending.size) await Promise.all([...pending])
  stats.elapsed = (performance.now() - t0) / 1000
  return {stats, held: [...held, ...unclear]}
}

/** Releases what a pass still holds (outside the measured window), so each pass starts from the same cloud. */
async function release(node, consumers) {
  let next = 0
  const worker = async () => {
    while (next < consumers.length) {
      try {
        await call(node.url, 'DELETE', `/allocations/${consumers[next++]}`)
      } catch {}
    }
  }
  await Promise.all(Array.from({length: 4}, worker))
}

async function counters(nodes) {
  return Promise.all(
    nodes.map(async (n) => {
      const out = {}
      for (const [k, m] of Object.entries(COUNTERS)) out[k] = (await metricValue(n, m)) ?? 0
      return out
    }),
  )
}

/**
 * CPU seconds of the children `pid` has waited for (cutime + cstime): PostgreSQL's backends that
 * ended (the bench's own short connections among them) leave the tree but not the postmaster's sum.
 */
function reapedCpuSeconds(pid) {
  const f = statFields(pid)
  return f ? (Number(f[13]) + Number(f[14])) / CLOCK_TICKS : 0
}

/** A daemon's user and system CPU seconds and its read and write system calls (/proc/PID/stat and io). */
function procOf(pid) {
  try {
    const f = statFields(pid)
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8')
    const field = (name) => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(io)?.[1] ?? NaN)
    return {user: Number(f[11]) / CLOCK_TICKS, sys: Number(f[12]) / CLOCK_TICKS, syscr: field('syscr'), syscw: field('syscw')}
  } catch {
    return {user: NaN, sys: NaN, syscr: NaN, syscw: NaN}
  }
}

function cpu(nodes) {
  const sum = (pids) => pids.reduce((a, p) => a + (cpuSeconds(p) ?? 0), 0)
  const self = process.cpuUsage()
  const pm = running.postmaster
  return {
    proc: nodes.map((n) => procOf(n.child.pid)),
    nodes: nodes.map((n) => sum(processTree(n.child.pid))),
    database: pm ? sum(processTree(pm)) + reapedCpuSeconds(pm) : running.mariadbPids ? sum(running.mariadbPids()) : 0,
    bench: (self.user + self.system) / 1e6,
  }
}

/** One measured pass: counters, database transactions and CPU before and after `pace`. */
async function pass(nodes, name, opts, of = nodes.length) {
  const k = nodes.length
  const c0 = await counters(nodes)
  const x0 = await serverTransactions(running.statsUrl)
  const cpu0 = cpu(nodes)
  const w0 = nowUs()
  const {stats: s, held} = await pace(nodes, opts)
  const w1 = nowUs()
  const cpu1 = cpu(nodes)
  const x1 = await serverTransactions(running.statsUrl)
  const c1 = await counters(nodes)
  await release(nodes[0], held)
  // Per claim; for the reads alone, per read.
  const per = opts.readsOnly ? s.reads : s.claims
  const ms = (a, b) => (per ? ((b - a) * 1000) / per : null)
  const counts = Object.fromEntries(Object.keys(COUNTERS).map((key) => [key, c1.map((c, i) => c[key] - c0[i][key])]))
  const sum = (xs) => xs.reduce((a, b) => a + b, 0)
  // Nodes that apply others' changes: all in round-robin, the followers when pinned.
  const appliers = opts.pinned ? k - 1 : k
  const perClaim = (n) => (s.claims ? n / s.claims : null)
  const r = {
    nodes: k,
    /** The daemons running (node A alone: the others idle). */
    of,
    pass: name,
    offered_per_s: opts.rate,
    seconds: opts.seconds,
    due: s.due,
    started: s.started,
    not_kept_up: s.notKeptUp,
    claims: s.claims,
    achieved_per_s: s.claims / s.elapsed,
    failed: s.failed,
    conflicts_409: s.conflicts,
    errors: s.errors,
    errors_by_kind: s.errorKinds,
    error_samples: s.errorSamples,
    keep_up_reads: s.reads,
    claim_p50_ms: pct(s.latencies, 50),
    claim_p99_ms: pct(s.latencies, 99),
    daemon_cpu_ms: ms(sum(cpu0.nodes), sum(cpu1.nodes)),
    node_cpu_ms: cpu1.nodes.map((v, i) => ms(cpu0.nodes[i], v)),
    database_cpu_ms: ms(cpu0.database, cpu1.database),
    // The daemons' CPU in the kernel, and their system calls that read and write (sockets, mostly).
    daemon_sys_ms: ms(sum(cpu0.proc.map((p) => p.sys)), sum(cpu1.proc.map((p) => p.sys))),
    node_user_ms: cpu1.proc.map((p, i) => ms(cpu0.proc[i].user, p.user)),
    node_sys_ms: cpu1.proc.map((p, i) => ms(cpu0.proc[i].sys, p.sys)),
    read_syscalls: per ? sum(cpu1.proc.map((p, i) => p.syscr - cpu0.proc[i].syscr)) / per : null,
    write_syscalls: per ? sum(cpu1.proc.map((p, i) => p.syscw - cpu0.proc[i].syscw)) / per : null,
    bench_cpu_ms: ms(cpu0.bench, cpu1.bench),
    round_trips_per_claim: x0 === null ? null : perClaim(x1 - x0),
    writes_per_claim: perClaim(sum(counts.writes)),
    retried_per_claim: perClaim(sum(counts.retried)),
    image_catchups_per_claim_per_node: appliers ? perClaim(sum(counts.images) / appliers) : null,
    row_catchups_per_claim_per_node: appliers ? perClaim(sum(counts.rows) / appliers) : null,
    changes_applied_per_claim_per_node: appliers ? perClaim(sum(counts.applied) / appliers) : null,
    counters: counts,
    window_us: [w0, w1],
    pids: nodes.map((n) => n.child.pid),
    node_names: nodes.map((n) => n.name),
  }
  const f = fmtMs
  const what = opts.readsOnly
    ? `${s.reads} keep-up reads`
    : `${s.claims} claims (${r.achieved_per_s.toFixed(1)}/s of ${opts.rate} offered, ${s.notKeptUp} not kept up, ${s.failed} failed, ${s.conflicts} × 409)`
  progress(
    `  ${name}: ${what}; daemon CPU ${f(r.daemon_cpu_ms)} ms/${opts.readsOnly ? 'read' : 'claim'} (${r.node_cpu_ms.map(f).join(' + ')}; ${f(r.daemon_sys_ms)} in the kernel, ` +
      `${x(r.read_syscalls, 1)} read and ${x(r.write_syscalls, 1)} write system calls), database ${f(r.database_cpu_ms)}, bench ${f(r.bench_cpu_ms)}` +
      (opts.readsOnly
        ? ''
        : `; round trips/claim ${x(r.round_trips_per_claim, 2)}, retried/claim ${r.retried_per_claim?.toFixed(3)}, catch-ups/claim/node images ${r.image_catchups_per_claim_per_node?.toFixed(2)} rows ${r.row_catchups_per_claim_per_node?.toFixed(3)}; p50 ${f(r.claim_p50_ms)} ms`) +
      (s.errors ? `; ${s.errors} 5xx/errors (${kinds(s.errorKinds)}), e.g. ${s.errorSamples[0]}` : ''),
  )
  return r
}

/** The passes for one daemon count: warm-up, round-robin, and for K >= 2 pinned and reads alone. */
export async function measureFixedLoad(nodes, {rate, seconds, warmUp, database = ''}) {
  const k = nodes.length
  const first = await must(nodes[0].url, 'GET', CHURN_QUERY)
  if (!first.allocation_requests?.length) throw new Error(`the query ${CHURN_QUERY} has no candidates on ${nodes[0].name}`)
  // Fresh daemons spend much of their first thousand claims compiling: 2.5 ms of CPU a claim in
  // the first 10 s at 100/s on one node, 1.4 to 1.8 in the next three 10 s.
  const warm = warmUp
  progress(`${k} daemon(s): fixed load ${rate} claims/s; warm-up ${warm} s (not measured), then ${seconds} s a pass...`)
  const w = await pace(nodes, {rate, seconds: warm})
  await release(nodes[0], w.held)
  const alone = (when) => pass([nodes[0]], `node A alone, ${when}`, {rate, seconds}, k)
  const out = k >= 2 ? [await alone('before')] : []
  out.push(await pass(nodes, 'round-robin', {rate, seconds}))
  if (k >= 2) {
    out.push(await pass(nodes, 'round-robin by claim', {rate, seconds, byClaim: true}))
    out.push(await pass(nodes, 'pinned', {rate, seconds, pinned: true}))
    out.push(await alone('after'))
    out.push(await pass(nodes, 'reads alone', {rate, seconds: Math.min(seconds, 5), readsOnly: true}))
  }
  for (const r of out) report({database, ...r}, results.fixedRows)
  return out
}
