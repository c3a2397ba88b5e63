// The load and its ledger: 4 clients, each request to the next daemon in turn: a candidates
// query, a claim of the first candidate (the next on 409), the client's oldest claim deleted once
// it holds more than 10; every claim and delete written down with what was answered. And the
// load's samples counted: by status, in a window, each daemon's first claim after a moment.
import crypto from 'node:crypto'
import {errorTitle, http} from './http.mjs'
import {sleep} from './live.mjs'

export const QUERY = '/allocation_candidates?resources=VCPU:1,MEMORY_MB:64&limit=5'
export const QUERY_FALLBACK = '/allocation_candidates?resources=VCPU:1,MEMORY_MB:128&limit=5'
const CLIENTS = 4
const HOLD = 10
const BACKOFF_MS = 100

export function makeEnv(name, kind) {
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
        const unsure = /may or may not/.test(w.json?.errors?.[0]?.detail ?? '')
        e.putFails.push({s: w.status || w.kind, title: errorTitle(w), unsure, phase: phase.id, daemon: w.d.name})
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

export function startLoad(env, phase) {
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
export const overlapping = (samples, from, to) => samples.filter((s) => s.t0 <= to && s.t1 >= from)

export function countStatuses(samples) {
  const counts = {}
  for (const s of samples) counts[s.s] = (counts[s.s] ?? 0) + 1
  return counts
}

export function fmtCounts(counts) {
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
export function firstClaims(phase, daemons, from) {
  const out = {}
  for (const d of daemons) {
    const hit = phase.samples
      .filter((s) => s.d === d.name && s.m === 'PUT' && typeof s.s === 'number' && s.s >= 200 && s.s < 300 && s.t1 >= from)
      .sort((a, b) => a.t1 - b.t1)[0]
    out[d.name] = hit ? (hit.t1 - from) / 1000 : null
  }
  return out
}
