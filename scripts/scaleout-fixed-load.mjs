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
// Each pass reads the CPU of each daemon and of PostgreSQL (utime+stime, /proc) and the nodes'
// counters before and after. The decomposition of K nodes against one: followers' CPU per claim
// (less their reads' own cost) = applying the others' changes; node A's against the one-node
// figure = what being one of several costs the writer; round-robin minus both = interleaving.
// With --cpu-prof DIR the daemons run under node --cpu-prof, and each pass's samples (cut to its
// window) give the functions with the most self time per claim.
import crypto from 'node:crypto'
import fs from 'node:fs'
import {SourceMap} from 'node:module'
import path from 'node:path'
import {CLOCK_TICKS, statFields} from './lib/proc.mjs'

const MAX_IN_FLIGHT = 50
const HELD = 160
const KEEP_UP_READ = '/resource_classes/VCPU'
const COUNTERS = {
  writes: 'placemat_store_write_duration_seconds_count',
  retried: 'placemat_writes_retried_total',
  images: 'placemat_journal_catchups_total{from="images"}',
  rows: 'placemat_journal_catchups_total{from="rows"}',
  applied: 'placemat_journal_changes_applied_total',
}
const x = (v, digits = 2) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits))
const nowUs = () => Number(process.hrtime.bigint() / 1000n)

/**
 * Offers `rate` claims a second for `seconds` s: round-robin per request over `nodes`, or all to
 * nodes[0] with `pinned` (one keep-up read per claim to each other node then), or round-robin per
 * claim with `byClaim` (a claim's requests, its release among them, to one node). With `readsOnly`,
 * only the keep-up reads, at `rate` a second.
 */
async function pace(nodes, {rate, seconds, pinned = false, readsOnly = false, byClaim = false}, d) {
  const stats = {
    due: 0,
    started: 0,
    notKeptUp: 0,
    claims: 0,
    failed: 0,
    conflicts: 0,
    errors: 0,
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
    if (stats.errorSamples.length < 5)
      stats.errorSamples.push(`${node.name} ${method} ${err ? err.message : `${r.status} ${r.text.slice(0, 160)}`}`)
  }
  const send = async (method, pathname, body, to) => {
    const node = to ?? (pinned ? nodes[0] : nodes[counter++ % nodes.length])
    try {
      const r = await d.call(node.url, method, pathname, body)
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
    const g = await send('GET', d.query, undefined, to)
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
      const r = await d.call(node.url, 'GET', KEEP_UP_READ)
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
async function release(node, consumers, d) {
  let next = 0
  const worker = async () => {
    while (next < consumers.length) {
      try {
        await d.call(node.url, 'DELETE', `/allocations/${consumers[next++]}`)
      } catch {}
    }
  }
  await Promise.all(Array.from({length: 4}, worker))
}

async function counters(nodes, d) {
  return Promise.all(
    nodes.map(async (n) => {
      const out = {}
      for (const [k, m] of Object.entries(COUNTERS)) out[k] = (await d.metricValue(n, m)) ?? 0
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

function cpu(nodes, d) {
  const sum = (pids) => pids.reduce((a, p) => a + (d.cpuSeconds(p) ?? 0), 0)
  const self = process.cpuUsage()
  const pm = d.postmaster()
  return {
    proc: nodes.map((n) => procOf(n.child.pid)),
    nodes: nodes.map((n) => sum(d.processTree(n.child.pid))),
    postgres: pm ? sum(d.processTree(pm)) + reapedCpuSeconds(pm) : 0,
    bench: (self.user + self.system) / 1e6,
  }
}

/** One measured pass: counters, database transactions and CPU before and after `pace`. */
async function pass(nodes, name, opts, d) {
  const k = nodes.length
  const c0 = await counters(nodes, d)
  const x0 = await d.serverTransactions()
  const cpu0 = cpu(nodes, d)
  const w0 = nowUs()
  const {stats: s, held} = await pace(nodes, opts, d)
  const w1 = nowUs()
  const cpu1 = cpu(nodes, d)
  const x1 = await d.serverTransactions()
  const c1 = await counters(nodes, d)
  await release(nodes[0], held, d)
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
    error_samples: s.errorSamples,
    keep_up_reads: s.reads,
    claim_p50_ms: d.pct(s.latencies, 50),
    claim_p99_ms: d.pct(s.latencies, 99),
    daemon_cpu_ms: ms(sum(cpu0.nodes), sum(cpu1.nodes)),
    node_cpu_ms: cpu1.nodes.map((v, i) => ms(cpu0.nodes[i], v)),
    postgres_cpu_ms: ms(cpu0.postgres, cpu1.postgres),
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
  const f = d.fmtMs
  const what = opts.readsOnly
    ? `${s.reads} keep-up reads`
    : `${s.claims} claims (${r.achieved_per_s.toFixed(1)}/s of ${opts.rate} offered, ${s.notKeptUp} not kept up, ${s.failed} failed, ${s.conflicts} × 409)`
  d.progress(
    `  ${name}: ${what}; daemon CPU ${f(r.daemon_cpu_ms)} ms/${opts.readsOnly ? 'read' : 'claim'} (${r.node_cpu_ms.map(f).join(' + ')}; ${f(r.daemon_sys_ms)} in the kernel, ` +
      `${x(r.read_syscalls, 1)} read and ${x(r.write_syscalls, 1)} write system calls), PostgreSQL ${f(r.postgres_cpu_ms)}, bench ${f(r.bench_cpu_ms)}` +
      (opts.readsOnly
        ? ''
        : `; round trips/claim ${r.round_trips_per_claim?.toFixed(2)}, retried/claim ${r.retried_per_claim?.toFixed(3)}, catch-ups/claim/node images ${r.image_catchups_per_claim_per_node?.toFixed(2)} rows ${r.row_catchups_per_claim_per_node?.toFixed(3)}; p50 ${f(r.claim_p50_ms)} ms`) +
      (s.errors ? `; ${s.errors} 5xx/errors, e.g. ${s.errorSamples[0]}` : ''),
  )
  return r
}

/** The passes for one daemon count: warm-up, round-robin, and for K >= 2 pinned and reads alone. */
export async function measureFixedLoad(nodes, {rate, seconds, warmUp}, d) {
  const k = nodes.length
  const first = await d.must(nodes[0].url, 'GET', d.query)
  if (!first.allocation_requests?.length) throw new Error(`the query ${d.query} has no candidates on ${nodes[0].name}`)
  // Fresh daemons spend much of their first thousand claims compiling: 2.5 ms of CPU a claim in
  // the first 10 s at 100/s on one node, 1.4 to 1.8 in the next three 10 s.
  const warm = warmUp
  d.progress(`${k} daemon(s): fixed load ${rate} claims/s; warm-up ${warm} s (not measured), then ${seconds} s a pass...`)
  const w = await pace(nodes, {rate, seconds: warm}, d)
  await release(nodes[0], w.held, d)
  const out = [await pass(nodes, 'round-robin', {rate, seconds}, d)]
  if (k >= 2) {
    out.push(await pass(nodes, 'round-robin by claim', {rate, seconds, byClaim: true}, d))
    out.push(await pass(nodes, 'pinned', {rate, seconds, pinned: true}, d))
    out.push(await pass(nodes, 'reads alone', {rate, seconds: Math.min(seconds, 5), readsOnly: true}, d))
  }
  for (const r of out) d.report(r)
  return out
}

// ---------------------------------------------------------------------------------------------
// The table and where the difference goes

export function printFixedLoad(rows, fmtMs, log = console.log) {
  const claimRows = rows.filter((r) => r.pass !== 'reads alone')
  if (!claimRows.length) return
  const one = claimRows.find((r) => r.nodes === 1)
  const header = [
    'nodes',
    'load',
    'offered/s',
    'achieved/s',
    'not kept up',
    'daemon CPU ms/claim',
    'per node',
    'PG CPU ms/claim',
    'ratio to 1 node',
    'round trips/claim',
    'retried/claim',
    'images applied/claim/node',
    'claim p50 ms',
  ]
  log(`| ${header.join(' | ')} |`)
  log(`|${header.map(() => '---').join('|')}|`)
  for (const r of claimRows) {
    log(
      `| ${[
        r.nodes,
        r.pass,
        r.offered_per_s,
        r.achieved_per_s.toFixed(1),
        r.not_kept_up,
        fmtMs(r.daemon_cpu_ms),
        r.node_cpu_ms.map(fmtMs).join(' + '),
        fmtMs(r.postgres_cpu_ms),
        one ? `${x(r.daemon_cpu_ms / one.daemon_cpu_ms)}x` : '—',
        x(r.round_trips_per_claim),
        x(r.retried_per_claim, 3),
        x(r.image_catchups_per_claim_per_node),
        fmtMs(r.claim_p50_ms),
      ].join(' | ')} |`,
    )
  }
  if (claimRows.some((r) => r.pass === 'pinned')) {
    log('')
    log(
      `pinned: every request of a claim to node A; each other node gets one GET ${KEEP_UP_READ} a claim, whose CPU, round trips and catch-ups are in that row.`,
    )
  }
  for (const line of decomposition(rows, fmtMs)) log(line)
}

/** Where K nodes' extra CPU per claim goes, from the round-robin, pinned and reads-alone passes. */
export function decomposition(rows, fmtMs) {
  const one = rows.find((r) => r.nodes === 1 && r.pass === 'round-robin')
  const lines = []
  for (const k of [...new Set(rows.map((r) => r.nodes))].filter((n) => n > 1)) {
    const rr = rows.find((r) => r.nodes === k && r.pass === 'round-robin')
    const pin = rows.find((r) => r.nodes === k && r.pass === 'pinned')
    const byClaim = rows.find((r) => r.nodes === k && r.pass === 'round-robin by claim')
    const reads = rows.find((r) => r.nodes === k && r.pass === 'reads alone')
    if (!rr || !pin || !reads) continue
    const writer = pin.node_cpu_ms[0]
    const followers = pin.node_cpu_ms.slice(1).reduce((a, b) => a + b, 0)
    // Each follower got one keep-up read per claim: what a read costs with nothing to apply is taken off.
    const readsPerClaimPerFollower = pin.keep_up_reads / pin.claims / (k - 1)
    const readCost = reads.daemon_cpu_ms * readsPerClaimPerFollower * (k - 1)
    const applying = followers - readCost
    const interleaving = rr.daemon_cpu_ms - writer - applying
    lines.push('')
    lines.push(
      `**${k} nodes against 1, daemon CPU per claim at ${rr.offered_per_s}/s offered:** ${fmtMs(rr.daemon_cpu_ms)} ms round-robin` +
        (one
          ? ` against ${fmtMs(one.daemon_cpu_ms)} ms on one node (${x(rr.daemon_cpu_ms / one.daemon_cpu_ms)}x, +${fmtMs(rr.daemon_cpu_ms - one.daemon_cpu_ms)} ms), in the kernel ${fmtMs(rr.daemon_sys_ms)} against ${fmtMs(one.daemon_sys_ms)} ms; ` +
            `PostgreSQL ${fmtMs(rr.postgres_cpu_ms)} against ${fmtMs(one.postgres_cpu_ms)} ms; the daemons' system calls per claim: ${x(rr.write_syscalls, 1)} against ${x(one.write_syscalls, 1)} writes, ${x(rr.read_syscalls, 1)} against ${x(one.read_syscalls, 1)} reads`
          : ''),
    )
    lines.push(
      `- applying the others' changes: ${fmtMs(applying)} ms/claim (${fmtMs(applying / (k - 1))} a follower; pinned pass, the followers' ${fmtMs(followers)} ms less their keep-up reads' own ${fmtMs(readCost)} ms); ` +
        `per claim per follower ${x(pin.changes_applied_per_claim_per_node)} changes applied, catch-ups from images ${x(pin.image_catchups_per_claim_per_node)}, from rows ${x(pin.row_catchups_per_claim_per_node, 3)}`,
    )
    lines.push(
      `- the writer being one of ${k}: node A ${fmtMs(writer)} ms/claim pinned` +
        (one
          ? ` against ${fmtMs(one.daemon_cpu_ms)} alone: ${writer >= one.daemon_cpu_ms ? '+' : ''}${fmtMs(writer - one.daemon_cpu_ms)} ms`
          : ''),
    )
    lines.push(
      `- interleaving (round-robin less writer less applying): ${fmtMs(interleaving)} ms/claim; round trips/claim ${x(rr.round_trips_per_claim)} round-robin, ${x(pin.round_trips_per_claim)} pinned` +
        (one ? `, ${x(one.round_trips_per_claim)} one node` : '') +
        `; writes retried/claim ${x(rr.retried_per_claim, 3)} against ${x(pin.retried_per_claim, 3)} pinned; catch-ups/claim/node from images ${x(rr.image_catchups_per_claim_per_node)} against ${x(pin.image_catchups_per_claim_per_node)} pinned, from rows ${x(rr.row_catchups_per_claim_per_node, 3)}; changes applied/claim/node ${x(rr.changes_applied_per_claim_per_node)}`,
    )
    if (byClaim) {
      lines.push(
        `- of which sending each request of a claim to another node: round-robin by claim costs ${fmtMs(byClaim.daemon_cpu_ms)} ms/claim, ${fmtMs(rr.daemon_cpu_ms - byClaim.daemon_cpu_ms)} less than by request ` +
          `(round trips/claim ${x(byClaim.round_trips_per_claim)}, retried/claim ${x(byClaim.retried_per_claim, 3)}, catch-ups/claim/node from images ${x(byClaim.image_catchups_per_claim_per_node)})`,
      )
    }
  }
  return lines
}

// ---------------------------------------------------------------------------------------------
// CPU profiles (--cpu-prof DIR): self time per claim by function, in each pass's window

const sourceMaps = new Map()
/** Where a function of the bundle (dist/cli) was written: its source file and line, through the bundle's source map. */
function origin(cf, root) {
  const file = cf.url.startsWith('file://') ? cf.url.slice(7) : null
  if (!file?.startsWith(root)) return null
  if (!sourceMaps.has(file)) {
    let map = null
    try {
      map = new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, 'utf8')))
    } catch {}
    sourceMaps.set(file, map)
  }
  const e = sourceMaps.get(file)?.findEntry(cf.lineNumber, cf.columnNumber)
  if (!e?.originalSource) return null
  return `${path.relative(root, path.resolve(path.dirname(file), e.originalSource))}:${e.originalLine + 1}`
}

/** Self microseconds by function in `profile`'s samples between `from` and `to` (µs, the monotonic clock). */
export function selfTimes(profile, [from, to], root) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const out = new Map()
  let t = profile.startTime
  const {samples, timeDeltas} = profile
  for (let i = 0; i < samples.length; i++) {
    t += timeDeltas[i]
    // A sample stands for the time until the next one.
    const dur = i + 1 < timeDeltas.length ? timeDeltas[i + 1] : 0
    if (t < from || t > to || dur <= 0) continue
    const cf = byId.get(samples[i]).callFrame
    if (cf.functionName === '(idle)') continue
    const url =
      origin(cf, root) ?? `${cf.url.replace(`file://${root}/`, '').replace(/^file:\/\/.*\/node_modules\//, '')}:${cf.lineNumber + 1}`
    const key = cf.url ? `${cf.functionName || '(anonymous)'} ${url}` : cf.functionName
    out.set(key, (out.get(key) ?? 0) + dur)
  }
  return out
}

/** The profile file each pid wrote in `dir` (the main thread's). */
function profileOf(dir, pid) {
  const file = fs.readdirSync(dir).find((f) => new RegExp(`\\.${pid}\\.0\\.\\d+\\.cpuprofile$`).test(f))
  return file ? JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) : null
}

const add = (into, from, scale = 1) => {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v * scale)
  return into
}

/**
 * Per pass, self ms per claim by function: all nodes together, the writer (node A) and the
 * followers when pinned. Called once the daemons have exited (their profiles written).
 */
export function passProfiles(dir, passRows, root) {
  const out = []
  for (const r of passRows) {
    if (!(r.pass === 'reads alone' ? r.keep_up_reads : r.claims)) continue
    const maps = r.pids.map((pid) => {
      const p = profileOf(dir, pid)
      return p ? selfTimes(p, r.window_us, root) : null
    })
    if (maps.some((m) => m === null)) continue
    // V8 samples by the clock, not by CPU: a process that waits for a core is counted where it
    // stopped, mostly just after a socket write woke the other end (writeBuffer, writev). So each
    // node's samples in JavaScript and V8 are scaled to its user CPU per claim (/proc), and the
    // kernel's part is its system CPU, in place of the socket writes' samples.
    const scaled = maps.map((m, i) => {
      const user = new Map([...m].filter(([k]) => kindOf(k) !== 'socket writes'))
      return add(new Map([[KERNEL, r.node_sys_ms[i]]]), user, r.node_user_ms[i] / total(user))
    })
    const group = (ms) => ms.reduce((a, m) => add(a, m), new Map())
    const parts = {all: group(scaled)}
    if (r.pass === 'pinned') {
      parts.writer = scaled[0]
      parts.followers = group(scaled.slice(1))
    }
    if (r.pass === 'reads alone') {
      delete parts.all
      parts['followers, per read'] = group(scaled.slice(1))
    }
    out.push({nodes: r.nodes, pass: r.pass, parts})
  }
  return out
}

const KERNEL = '(kernel: system calls, /proc stime)'

/** What a function is part of: the socket writes (system calls), the collector, a layer of placemat, a library, Node. */
function kindOf(key) {
  if (/^(writeBuffer|writev|writeLatin1String|writeUtf8String|writeAsciiString)\b/.test(key)) return 'socket writes'
  if (key.startsWith('(')) return key
  const where = key.slice(key.lastIndexOf(' ') + 1)
  const m = /^src\/([a-z-]+)\//.exec(where) ?? /^(?:@[^/]+\/)?([^/:]+)\//.exec(where)
  if (/^node:/.test(where)) return 'node internals'
  return m ? (where.startsWith('src/') ? `src/${m[1]}` : m[1]) : 'other'
}
const byKind = (m) => {
  const out = new Map()
  for (const [k, v] of m) out.set(kindOf(k), (out.get(kindOf(k)) ?? 0) + v)
  return out
}

const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
const total = (m) => [...m.values()].reduce((a, b) => a + b, 0)

export function printProfiles(profiles, log = console.log, n = 12) {
  if (!profiles.length) return
  log('')
  log("**CPU profiles: self time per claim (ms) by function within each pass, each node's samples scaled to its CPU per claim (/proc)**")
  for (const p of profiles) {
    for (const [part, m] of Object.entries(p.parts)) {
      log(
        `- ${p.nodes} node(s), ${p.pass}, ${part === 'all' ? 'all nodes' : part}: ${total(m).toFixed(2)} ms; ${top(m, n)
          .map(([k, v]) => `${k} ${v.toFixed(3)}`)
          .join('; ')}`,
      )
      log(
        `  by kind: ${top(byKind(m), 10)
          .map(([k, v]) => `${k} ${v.toFixed(2)}`)
          .join(', ')}`,
      )
    }
  }
  const one = profiles.find((p) => p.nodes === 1)
  const grew = (from, to, what) => {
    const diff = add(new Map(to.parts.all), from.parts.all, -1)
    log(
      `- grew most ${what} (ms/claim): ${top(diff, n)
        .map(([k, v]) => `${k} +${v.toFixed(3)}`)
        .join('; ')}`,
    )
    log(
      `  by kind: ${top(byKind(diff), 10)
        .map(([k, v]) => `${k} ${v >= 0 ? '+' : ''}${v.toFixed(2)}`)
        .join(', ')}`,
    )
  }
  for (const p of profiles.filter((q) => q.nodes > 1 && q.pass === 'round-robin')) {
    if (one) grew(one, p, `from 1 node to ${p.nodes} round-robin`)
    const byClaim = profiles.find((q) => q.nodes === p.nodes && q.pass === 'round-robin by claim')
    if (byClaim) grew(byClaim, p, `from ${p.nodes} by claim to ${p.nodes} by request`)
  }
}
