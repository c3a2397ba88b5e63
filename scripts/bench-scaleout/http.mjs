// Requests to the API nodes. The clients share this machine's cores with the nodes they measure:
// requests go through node:http on kept-alive connections, which costs the bench a fraction of
// what fetch does.
import http from 'node:http'
import {ADMIN_HEADERS as HEADERS} from '../lib/daemon.mjs'

export const FETCH_TIMEOUT_MS = 30000
const AGENT = new http.Agent({keepAlive: true, maxSockets: 64})

/** One request; never throws for an HTTP status (network errors and timeouts do throw). */
export function call(url, method, pathname, body) {
  const t0 = performance.now()
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const headers = payload === undefined ? HEADERS : {...HEADERS, 'content-length': Buffer.byteLength(payload)}
  return new Promise((resolve, reject) => {
    const req = http.request(url + pathname, {method, headers, agent: AGENT, timeout: FETCH_TIMEOUT_MS}, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const text = chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString()
        // Time to the last byte, as ../shared/perf measures (parsing the answer is the client's cost).
        const ms = performance.now() - t0
        let json = null
        if (text) {
          try {
            json = JSON.parse(text)
          } catch {}
        }
        resolve({status: res.statusCode, json, text, ms})
      })
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${FETCH_TIMEOUT_MS} ms`)))
    req.on('error', reject)
    req.end(payload)
  })
}

/** A request that must answer one of `ok`; throws naming the request and the answer otherwise. */
export async function must(url, method, pathname, body, ok = [200]) {
  let r
  try {
    r = await call(url, method, pathname, body)
  } catch (err) {
    throw new Error(`${method} ${url}${pathname}: ${err.cause?.message ?? err.message}`)
  }
  if (!ok.includes(r.status)) throw new Error(`${method} ${url}${pathname}: ${r.status} ${r.text.slice(0, 400)}`)
  return r.json
}
