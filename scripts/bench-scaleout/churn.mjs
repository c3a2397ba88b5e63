// The churn: 8 clients for S seconds, claims and releases, each request to the next node in turn
// (or, pinned, each client's to a node of its own); with a kill, one node SIGKILLed at S/3 and
// restarted at 2S/3. What it leaves for the check: the providers touched, the claims held and
// those whose outcome is unclear.
import crypto from 'node:crypto'
import {call, must} from './http.mjs'
import {metricValue, startDaemon} from './nodes.mjs'
import {progress, sleep} from './running.mjs'

// The smallest request placeload's flat providers can take: their MEMORY_MB has min_unit 128 and
// DISK_GB min_unit 5, so MEMORY_MB:64,DISK_GB:1 would never have a candidate.
export const CHURN_QUERY = '/allocation_candidates?resources=VCPU:1,MEMORY_MB:128,DISK_GB:5&limit=5'
export const CLIENTS = 8
const HOLD = 20

export async function churn(nodes, seconds, {kill, pin} = {}) {
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
    const node = pin ? live[client % live.length] : live[counter++ % live.length]
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
                again = await startDaemon({name: v.name, db: v.db, home: v.home, port: v.port, extra: v.extra, bin: v.bin})
              } catch (err) {
                progress(`  ${v.name} did not come back on port ${v.port} (${err.message.split('\n')[0]}); trying another port`)
                again = await startDaemon({name: v.name, db: v.db, home: v.home, extra: v.extra, bin: v.bin})
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
