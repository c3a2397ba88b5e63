// The fault run's report: a table of the faults, one of the failover, and the notes under them
// (every goal missed, stale answers, health during each fault, the daemons' error log lines).
import {countStatuses, fmtCounts} from './load.mjs'
import {state} from './live.mjs'
import {BOUND_MS, RECOVERY_CAP_MS} from './run-fault.mjs'

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
function notesFor(r, {failover = false, providers} = {}) {
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
    if (l.committedAfterUnsure503)
      n.push(`${label}: ${l.committedAfterUnsure503} claims answered 503 ("may or may not have been kept") were kept (not a loss)`)
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
        `${label}: started again on the missing file it was NOT refused (${x.restart.exit}): it created ${x.restart.fileCreated ? 'a new database file' : 'no file'}, answered health ${x.restart.health}, served ${x.restart.providersServed} providers (there were ${providers}) and usages ${JSON.stringify(x.restart.usagesOfAClientProject)} for a load client's project; beside the file afterwards: ${x.restart.besideTheFileAfter?.join(', ')}; it said: ${x.restart.message}`,
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

/** The report of `results` (the run's options `o`), as Markdown. */
export function report(results, o) {
  const out = []
  if (results.faults.length) {
    out.push(`## Database faults under claim load (${o.providers} providers, 4 clients)`, '')
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
  const notes = [...state.notes]
  if (state.setupExits.length) notes.push(`daemons exited during set-up: ${JSON.stringify(state.setupExits)}`)
  if (results.postgresLedger) {
    const l = results.postgresLedger
    notes.push(
      `PostgreSQL faults, the whole ledger in SQL at the end: ${l.acked} claims and ${l.deletesAcked} deletes acknowledged, ${l.lost} lost${l.lost ? ` ${JSON.stringify(l.lostSamples.slice(0, 3))}` : ''}`,
    )
  }
  for (const r of results.faults) notes.push(...notesFor(r, {providers: o.providers}))
  if (f) notes.push(...notesFor(f, {failover: true, providers: o.providers}))
  if (results.fatal) notes.push(`the run stopped early: ${results.fatal}`)
  if (notes.length) {
    out.push('### Notes', '')
    for (const n of notes) out.push(`- ${n}`)
    out.push('')
  }
  return out.join('\n')
}
