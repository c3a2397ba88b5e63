// A fault under load: back to normal, 5 s of load, the fault, load until every daemon has
// acknowledged a claim again (5 s at least, 60 s at most), then the checks; the fault's row
// (statuses during it, longest wait, recovery, health, metrics, log lines) from what was seen.
import fs from 'node:fs'
import {checks} from './checks.mjs'
import {alive, logLines} from './daemons.mjs'
import {ensureNormal} from './envs.mjs'
import {errorTitle, health, metrics} from './http.mjs'
import {now, progress, sleep, state} from './live.mjs'
import {countStatuses, firstClaims, fmtCounts, overlapping, startLoad} from './load.mjs'

/** The longest answer that keeps within the daemons' bounds: connect 2 + lock 5 + statement 5 + 3 s margin. */
export const BOUND_MS = (2 + 5 + 5 + 3) * 1000
export const RECOVERY_CAP_MS = 60000
const PRE_MS = 5000
const POST_MS = 5000
const INSTANT_WINDOW_MS = 2000

/**
 * Runs one fault: back to normal, 5 s of load, `fault(ctx)` (which calls ctx.start() and
 * ctx.end()), load until 5 s after its end and every daemon in the rotation acknowledged a claim
 * (60 s at most), then the checks. Returns the row's result.
 */
export async function runFault(env, id, name, fault, {recovery = true, after, instant = false} = {}) {
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
  state.phase = phase
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
  state.phase = null
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
