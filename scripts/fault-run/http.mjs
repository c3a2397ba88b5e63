// Requests to the daemons: one request that never throws, health, the metrics the run watches,
// and a bounded number of requests at once.
import {ADMIN_HEADERS as HEADERS} from '../lib/daemon.mjs'
import {now} from './live.mjs'

const CLIENT_TIMEOUT_MS = 60000

/** One request; never throws. status 0 with `kind` for a network error or the client timeout. */
export async function http(d, method, pathname, body, timeoutMs = CLIENT_TIMEOUT_MS) {
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

export const health = (d) => http(d, 'GET', '/placemat/v1/health', undefined, 10000)
export const errorTitle = (r) => r.json?.errors?.[0]?.title ?? null

/** Sums of the metrics this run watches, by name and labels. */
export async function metrics(d) {
  const r = await http(d, 'GET', '/metrics', undefined, 10000)
  if (r.status !== 200) return null
  const out = {}
  for (const line of r.text.split('\n')) {
    const m =
      /^(placemat_database_up|placemat_database_errors_total|placemat_database_reconnects_total|placemat_database_commit_unknown_total|placemat_database_commit_found_total|placemat_state_reloads_total|placemat_journal_lag)(\{[^}]*\})?\s+(\S+)/.exec(
        line,
      )
    if (m) out[m[1] + (m[2] ?? '')] = Number(m[3])
  }
  return out
}

export async function mapLimit(items, n, fn) {
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
