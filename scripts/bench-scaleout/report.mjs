// What bench-scaleout measured: each configuration's JSON line (to --json FILE, else stderr) and
// the table of the churn rows on stdout.
import fs from 'node:fs'
import {fmtMs} from '../lib/stats.mjs'
import {printTable} from '../lib/table.mjs'

/** The churn rows, the fixed-load passes, the CPU profiles of those passes. */
export const results = {rows: [], fixedRows: [], profiles: []}
let jsonFile = null

/** From now on the JSON lines go to `file` (emptied first), when there is one. */
export function openJson(file) {
  jsonFile = file ?? null
  if (jsonFile) fs.writeFileSync(jsonFile, '')
}

/** A result's JSON line out, the result into `into`. */
export function report(result, into = results.rows) {
  const line = JSON.stringify(result)
  if (jsonFile) fs.appendFileSync(jsonFile, line + '\n')
  else process.stderr.write(line + '\n')
  into.push(result)
}

/** The churn rows as a Markdown table. */
export function printChurnTable(rows = results.rows) {
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
  const cells = rows.map((r) => {
    const aw = r.after_write
      ? `${fmtMs(r.after_write.p50)} / ${fmtMs(r.after_write.p99)}${r.after_write.stale ? ` (${r.after_write.stale} stale)` : ''}`
      : '—'
    const oc = `${r.overcommit}${r.usage_mismatches ? ` (${r.usage_mismatches} usage ≠ claims held)` : ''}`
    const k = r.kill ? killCell(r.kill) : ''
    return [
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
    ]
  })
  printTable(header, cells)
}

function killCell(kill) {
  const reloads = kill.reloads.map((x) => `${x.node} ${x.delta}`).join(', ')
  return (
    `${kill.victim} killed: serving again ${kill.restart_to_serving_s?.toFixed(1) ?? '?'} s after restart; ` +
    `${kill.in_flight_to_killed} of the ${kill.in_flight_at_kill} in flight to it failed; survivors' 5xx+errors ${kill.survivor_errors}; full reloads on survivors: ${reloads}`
  )
}
