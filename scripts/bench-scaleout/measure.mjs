// One configuration measured: the churn with the nodes' counters, the database's transactions and
// every process's CPU before and after, the overcommit check, the first query after a write; the
// progress lines and the configuration's result.
import os from 'node:os'
import {cpuSeconds, processTree} from '../lib/proc.mjs'
import {fmtMs, pct} from '../lib/stats.mjs'
import {afterWriteAcrossNodes, afterWriteByCli} from './after-write.mjs'
import {checkAndRelease} from './check.mjs'
import {CLIENTS, churn} from './churn.mjs'
import {logSummary, metricValue} from './nodes.mjs'
import {serverTransactions} from './postgres.mjs'
import {report} from './report.mjs'
import {progress, running} from './running.mjs'

/** CPU seconds used so far by the daemons, the database server (PostgreSQL or MariaDB's, when there is one) and this process. */
function cpuNow(nodes) {
  const sum = (pids) => pids.reduce((a, p) => a + (cpuSeconds(p) ?? 0), 0)
  const self = process.cpuUsage()
  return {
    daemons: sum(nodes.flatMap((n) => processTree(n.child.pid))),
    database: running.postmaster ? sum(processTree(running.postmaster)) : running.mariadbPids ? sum(running.mariadbPids()) : 0,
    bench: (self.user + self.system) / 1e6,
    // The delay proxy, when there is one: it shares the cores with the rest.
    ...(running.proxyPid ? {proxy: cpuSeconds(running.proxyPid) ?? 0} : {}),
  }
}

/** Measures `nodes` (the run's options `o`) and reports the result. */
export async function measure(
  o,
  {setup, backend, nodes, loadS, proxyRtt, directRtt, cliDb, statsUrl = running.statsUrl, server = 'placemat'},
) {
  const k = nodes.length
  progress(
    `${setup}, ${k} daemon(s): start-up ${nodes.map((n) => n.startup.toFixed(1)).join(' / ')} s, RSS ${nodes.map((n) => n.rss).join(' / ')} MiB`,
  )
  progress(
    `${setup}, ${k} daemon(s): churn, ${CLIENTS} clients for ${o.seconds} s${o.kill ? ' (one node killed at S/3, restarted at 2S/3)' : ''}...`,
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
  const run = await churn(nodes, o.seconds, {kill: o.kill, pin: o.pin})
  const cpuAfter = cpuNow(nodes)
  const xactsAfter = await serverTransactions(statsUrl)
  const s = run.stats
  // Where a claim's time goes on this machine: CPU milliseconds per claim, by process kind.
  const cpuPerClaim = Object.fromEntries(
    Object.keys(cpuAfter).map((k) => [k, s.claims ? ((cpuAfter[k] - cpuBefore[k]) * 1000) / s.claims : null]),
  )
  const [writesAfter, retriedAfter, imagesAfter, rowsAfter] = o.kill ? [null, null, null, null] : await counters()
  // How the nodes caught up with each other: from the writes' images, or by reading rows.
  const catchUps = imagesAfter === null || imagesBefore === null ? null : {images: imagesAfter - imagesBefore, rows: rowsAfter - rowsBefore}
  // Writes another node overtook (tried in one round trip, run again): what contention costs.
  const overtaken =
    writesAfter === null || retriedAfter === null || writesBefore === null || retriedBefore === null
      ? null
      : {writes: writesAfter - writesBefore, retried: retriedAfter - retriedBefore}
  progress(
    `  ${s.claims} claims in ${run.elapsed.toFixed(1)} s (${(s.claims / run.elapsed).toFixed(1)}/s), p50 ${fmtMs(pct(s.latencies, 50))} ms, p99 ${fmtMs(pct(s.latencies, 99))} ms; ` +
      `${s.conflicts} answered 409; statuses ${JSON.stringify(s.statuses)}; 5xx+errors ${s.errors}${o.kill ? `, in flight to the killed node ${s.inFlightKilled}` : ''}`,
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
    progress(`  first limited query after a CLI write (${o.rounds} rounds)...`)
    afterWrite = await afterWriteByCli(nodes[0], cliDb, {rounds: o.rounds, bin: o.bin})
  } else if (k >= 2) {
    progress(`  first limited query on B after a write on A (${o.rounds} rounds)...`)
    afterWrite = await afterWriteAcrossNodes(nodes, o.rounds)
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
    providers: o.providers,
    daemons: k,
    delay_ms: o.delayMs,
    proxy_rtt_ms: proxyRtt ?? null,
    direct_rtt_ms: directRtt ?? null,
    seconds: o.seconds,
    clients: CLIENTS,
    pinned: o.pin,
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
