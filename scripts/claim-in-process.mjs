#!/usr/bin/env node
// placemat measured where ../shared/perf/floor.mjs measures itself: the daemon (startServer, as
// `daemon start` runs it: durability full, the access log at info, the warm-up) and its client in
// one process, so no request or answer wakes another process. The client is the floor's: one
// kept-alive node:http connection, GET then PUT, one at a time, each timed from the request's
// start to its answer's end; the first 20 claims of a run are not counted.
//
//   node [daemon's node flags] scripts/claim-in-process.mjs DB [--placemat DIR] >LOG
//
// The daemon's log is stdout. On stderr, a JSON line {"url": ...} once it listens (the caller
// loads the providers through it); then, for each line `N` read on stdin, N claims (GET the flat
// query's candidates, PUT the first to a new consumer) and a line {get_p50, put_p50, claim_p50, n}.
// It exits when stdin closes.
import http from 'node:http'
import path from 'node:path'
import readline from 'node:readline'
import {randomUUID} from 'node:crypto'
import {pathToFileURL} from 'node:url'
import {ROOT} from './lib/daemon.mjs'

const argv = process.argv.slice(2)
const db = argv[0]
const at = argv.indexOf('--placemat')
const checkout = path.resolve(at >= 0 ? argv[at + 1] : ROOT)
const {startServer} = await import(pathToFileURL(path.join(checkout, 'dist/src/daemon/server.js')).href)
const {FLAT_QUERY} = await import(pathToFileURL(path.resolve(ROOT, '../shared/perf/lib.mjs')).href)

const server = await startServer({
  db,
  host: '127.0.0.1',
  port: 0,
  auth: 'noauth2',
  durability: 'full',
  logLevel: 'info',
  warmUp: true,
  candidates: {maxCandidates: -1},
  say: () => undefined,
})
const {port} = new URL(server.url)
const agent = new http.Agent({keepAlive: true})
const headers = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest'}

/** One request: its answer's body and the ms from the start to the answer's end. */
const call = (method, url, data) =>
  new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    const body = data === undefined ? undefined : JSON.stringify(data)
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: url,
        agent,
        headers: body ? {...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body)} : headers,
      },
      (res) => {
        const chunks = []
        res.on('data', (d) => chunks.push(d))
        res.on('end', () =>
          resolve({status: res.statusCode, text: Buffer.concat(chunks).toString(), ms: Number(process.hrtime.bigint() - t0) / 1e6}),
        )
      },
    )
    req.on('error', reject)
    if (body) req.write(body)
    req.end()
  })

async function claims(n) {
  const get = []
  const put = []
  const claim = []
  for (let i = 0; i < n; i++) {
    const g = await call('GET', `/allocation_candidates?${FLAT_QUERY}&limit=5`)
    const ar = JSON.parse(g.text).allocation_requests?.[0]
    if (!ar) throw new Error(`no candidate left (${g.status})`)
    const p = await call('PUT', `/allocations/${randomUUID()}`, {
      allocations: ar.allocations,
      project_id: randomUUID(),
      user_id: randomUUID(),
      consumer_generation: null,
      consumer_type: 'TEST',
    })
    if (p.status !== 204) throw new Error(`PUT answered ${p.status}: ${p.text.slice(0, 200)}`)
    get.push(g.ms)
    put.push(p.ms)
    claim.push(g.ms + p.ms)
  }
  const p50 = (xs) => +xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)].toFixed(3)
  return {get_p50: p50(get), put_p50: p50(put), claim_p50: p50(claim), n}
}

const report = (o) => process.stderr.write(`${JSON.stringify(o)}\n`)
report({url: server.url})
for await (const line of readline.createInterface({input: process.stdin})) {
  const n = Number(line.trim())
  if (!(n > 0)) continue
  await claims(20) // as the floor: the first 20 claims of a run are not counted
  report(await claims(n))
}
agent.destroy()
await server.close()
process.exit(0)
