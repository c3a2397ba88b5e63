#!/usr/bin/env node
// npm run bench -- --huge: placemat at 100,000 and 1,000,000 flat providers and 100,000
// compute-node trees (900,000 providers), each on a fresh SQLite file:
//   load         the providers made through POST /placemat/v1/batch, 10,000 a call
//   start-up     a restarted daemon, from spawn to its first answered candidates query
//   RSS          the daemon's resident memory at rest and its peak (VmHWM)
//   candidates   limit=1000 p50/p99, and unlimited (streamed) time, bytes and peak RSS
//   first write  the first write to a provider's inventory after the start, against the next ones
//   after write  the first limited query after a write to one provider's inventory, traits
//                or aggregates (the index follows the write)
//   claim, claims-concurrent, provider-list-all (every provider, streamed)
// The daemon runs with --no-answer-cache: every candidates query is searched and encoded afresh.
//
//   npm run bench -- --huge                       # flat:100000,flat:1000000,nested:100000
//   npm run bench -- --huge --huge-sets flat:100000 --runs 1
import {spawn, execFileSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {DAEMON_NODE_OPTIONS} from '../dist/src/daemon/node-flags.js'
import {loadThroughBatch, AGGREGATES} from './huge-sets.mjs'
import {daemonStartArgs, warmedUp} from './lib/daemon.mjs'
import {freePort} from './lib/ports.mjs'
import {statusMiB as status} from './lib/proc.mjs'
import {pct} from './lib/stats.mjs'
import {printTable} from './lib/table.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const perf = path.resolve(root, '../shared/perf')
const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : dflt
}
const runs = opt('runs', '3')
const sets = opt('huge-sets', 'flat:100000,flat:1000000,nested:100000')
  .split(',')
  .map((s) => s.split(':'))
  .map(([mode, n]) => ({mode, n: Number(n)}))
const HEADERS = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
const FLAT_QUERY = `resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=${AGGREGATES[0]}&required=HW_CPU_X86_AVX2`
const NESTED_QUERY =
  'resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH&resources_COMPUTE=VCPU:1,MEMORY_MB:256&required_COMPUTE=CUSTOM_FOO&resources_FPGA=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_FPGA'

async function startDaemon(dbFile, probe) {
  const port = await freePort()
  // A new database is made on purpose first: a daemon does not start an empty one where its log says one was.
  if (!fs.existsSync(dbFile))
    execFileSync(process.execPath, [path.join(root, 'bin/run.js'), 'db', 'init', '--db', dbFile], {stdio: 'ignore'})
  const log = fs.openSync(path.join(path.dirname(dbFile), 'placemat.log'), 'a')
  const t0 = performance.now()
  // Every candidates query searched and encoded afresh: no memo of identical answers.
  const args = daemonStartArgs(dbFile, port, ['--no-answer-cache'])
  const child = spawn(process.execPath, [...DAEMON_NODE_OPTIONS, path.join(root, 'bin/run.js'), ...args], {
    stdio: ['ignore', log, 'inherit'],
  })
  fs.closeSync(log)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 6000; i++) {
    try {
      const res = await fetch(url + probe, {headers: HEADERS})
      await res.arrayBuffer()
      if (res.ok) return {child, url, startup: (performance.now() - t0) / 1000}
    } catch {}
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('daemon did not start')
}

async function stop(child) {
  const done = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await done
}

async function timed(url, pathname, init = {}) {
  const t0 = performance.now()
  const res = await fetch(url + pathname, {headers: HEADERS, ...init})
  const body = await res.arrayBuffer()
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${pathname}: ${res.status} ${Buffer.from(body).toString().slice(0, 300)}`)
  return {ms: performance.now() - t0, bytes: body.byteLength, body}
}

/**
 * The first write that changes a provider's shape after a start (the candidates index follows
 * it), against the p50 of the next `count`: each a provider's inventory written (reserved flipped).
 */
async function firstWrites(url, query, count = 10) {
  const list = JSON.parse(Buffer.from((await timed(url, `/allocation_candidates?${query}&limit=${count + 1}`)).body).toString())
  const uuids = Object.keys(list.provider_summaries)
  const times = []
  for (let k = 0; k <= count; k++) {
    const uuid = uuids[k % uuids.length]
    const {resource_provider_generation: generation, inventories} = JSON.parse(
      Buffer.from((await timed(url, `/resource_providers/${uuid}/inventories`)).body).toString(),
    )
    const first = Object.keys(inventories)[0]
    inventories[first] = {...inventories[first], reserved: inventories[first].reserved ? 0 : 1}
    const body = JSON.stringify({resource_provider_generation: generation, inventories})
    times.push((await timed(url, `/resource_providers/${uuid}/inventories`, {method: 'PUT', body})).ms)
  }
  return {first: times[0], next: pct(times.slice(1), 50)}
}

/** The first limited query after a write to one provider's inventory, traits or aggregates. */
async function afterWrite(url, query, count = 30) {
  const list = JSON.parse(Buffer.from((await timed(url, `/allocation_candidates?${query}&limit=5`)).body).toString())
  const uuids = Object.keys(list.provider_summaries)
  const times = []
  for (let k = 0; k < count; k++) {
    const uuid = uuids[k % uuids.length]
    const p = JSON.parse(Buffer.from((await timed(url, `/resource_providers/${uuid}`)).body).toString())
    const generation = p.generation
    const kind = k % 3
    if (kind === 0) {
      const inv = JSON.parse(Buffer.from((await timed(url, `/resource_providers/${uuid}/inventories`)).body).toString())
      const inventories = inv.inventories
      const first = Object.keys(inventories)[0]
      inventories[first] = {...inventories[first], reserved: inventories[first].reserved ? 0 : 1}
      await timed(url, `/resource_providers/${uuid}/inventories`, {
        method: 'PUT',
        body: JSON.stringify({resource_provider_generation: generation, inventories}),
      })
    } else if (kind === 1) {
      const t = JSON.parse(Buffer.from((await timed(url, `/resource_providers/${uuid}/traits`)).body).toString())
      const traits = t.traits.includes('CUSTOM_BENCH') ? t.traits.filter((x) => x !== 'CUSTOM_BENCH') : [...t.traits, 'CUSTOM_BENCH']
      await timed(url, `/resource_providers/${uuid}/traits`, {
        method: 'PUT',
        body: JSON.stringify({resource_provider_generation: generation, traits}),
      })
    } else {
      const a = JSON.parse(Buffer.from((await timed(url, `/resource_providers/${uuid}/aggregates`)).body).toString())
      const extra = '00000000-0000-4000-8000-00000000b0b0'
      const aggregates = a.aggregates.includes(extra) ? a.aggregates.filter((x) => x !== extra) : [...a.aggregates, extra]
      await timed(url, `/resource_providers/${uuid}/aggregates`, {
        method: 'PUT',
        body: JSON.stringify({resource_provider_generation: generation, aggregates}),
      })
    }
    times.push((await timed(url, `/allocation_candidates?${query}&limit=1000`)).ms)
  }
  return {p50: pct(times, 50), p99: pct(times, 99)}
}

function perfBench(url, mode, args) {
  const out = execFileSync(process.execPath, [path.join(perf, 'bench.mjs'), url, '--mode', mode, '--runs', runs, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  })
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
}

const rows = []
const row = (set, what, value, notes = '') => {
  rows.push({set, what, value, notes})
  process.stderr.write(`[${set}] ${what}: ${value} ${notes}\n`)
}
const ms = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(2))

for (const {mode, n} of sets) {
  const set = `${mode}-${n}`
  const query = mode === 'nested' ? NESTED_QUERY : FLAT_QUERY
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-huge-'))
  const db = path.join(dir, 'placemat.db')
  try {
    let {child, url} = await startDaemon(db, '/')
    await fetch(url + '/traits/CUSTOM_BENCH', {method: 'PUT', headers: HEADERS})
    const t0 = performance.now()
    const providers = await loadThroughBatch(url, mode, n)
    const load = (performance.now() - t0) / 1000
    row(
      set,
      'load (batch API)',
      `${load.toFixed(1)} s`,
      `${providers} providers, ${Math.round(providers / load)}/s; RSS ${status(child.pid, 'VmRSS')} MiB`,
    )
    await stop(child)
    // Without the State's image a clean stop leaves (as after a crash): every row is read.
    fs.rmSync(path.join(dir, 'placemat.state'), {force: true})
    const cold = await startDaemon(db, `/allocation_candidates?${query}&limit=1000`)
    row(
      set,
      'start-up to first candidates answer, no image (after a crash)',
      `${cold.startup.toFixed(2)} s`,
      `RSS ${status(cold.child.pid, 'VmRSS')} MiB, peak ${status(cold.child.pid, 'VmHWM')} MiB`,
    )
    const stopping = performance.now()
    await stop(cold.child)
    row(set, 'clean stop (the State image written)', `${((performance.now() - stopping) / 1000).toFixed(2)} s`, '')
    const s = await startDaemon(db, `/allocation_candidates?${query}&limit=1000`)
    child = s.child
    url = s.url
    row(
      set,
      'start-up to first candidates answer (after a clean stop)',
      `${s.startup.toFixed(2)} s`,
      `image ${(fs.statSync(path.join(dir, 'placemat.state')).size / 1e6).toFixed(1)} MB; RSS ${status(child.pid, 'VmRSS')} MiB, peak ${status(child.pid, 'VmHWM')} MiB`,
    )
    // The daemon rehearses a scheduler's requests once it serves (warm-up.ts); the first writes are
    // timed after it, as a scheduler's first claims after a rolling restart would meet them.
    const warm = await warmedUp(path.join(dir, 'placemat.log'), {pid: child.pid})
    if (warm)
      row(set, 'warm-up after the start (in the background)', `${(warm.ms / 1000).toFixed(2)} s`, `${warm.requests} rehearsed requests`)
    const fw = await firstWrites(url, query)
    row(set, 'first shape-changing write after the start', `${ms(fw.first)} ms`, `the next: p50 ${ms(fw.next)} ms`)

    const limited = perfBench(url, mode, [
      '--scenarios',
      mode === 'nested' ? 'candidates-nested' : 'candidates',
      '--count',
      '100',
      `--${mode}-query`,
      `${query}&limit=1000`,
    ])[0]
    row(set, 'candidates limit=1000', `p50 ${ms(limited.p50)} ms, p99 ${ms(limited.p99)} ms`, `${limited.notes ?? ''}`)
    const unlimited = []
    for (let k = 0; k < 3; k++) unlimited.push(await timed(url, `/allocation_candidates?${query}`))
    row(
      set,
      'candidates unlimited',
      `p50 ${ms(
        pct(
          unlimited.map((u) => u.ms),
          50,
        ),
      )} ms`,
      `${(unlimited[0].bytes / 1e6).toFixed(0)} MB; peak RSS ${status(child.pid, 'VmHWM')} MiB`,
    )
    const aw = await afterWrite(url, query)
    row(set, 'first query after a structural write', `p50 ${ms(aw.p50)} ms, p99 ${ms(aw.p99)} ms`, 'inventory, traits, aggregates in turn')
    for (const r of perfBench(url, mode, ['--scenarios', 'claim,claims-concurrent', '--claims', '33'])) {
      row(
        set,
        r.scenario,
        `p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms`,
        r.scenario === 'claims-concurrent' ? `${r.rps.toFixed(0)} claims/s; ${r.notes ?? ''}` : `${r.notes ?? ''}`,
      )
    }
    const all = []
    for (let k = 0; k < 3; k++) all.push(await timed(url, '/resource_providers'))
    row(
      set,
      'provider list, all',
      `p50 ${ms(
        pct(
          all.map((u) => u.ms),
          50,
        ),
      )} ms`,
      `${(all[0].bytes / 1e6).toFixed(0)} MB`,
    )
    row(set, 'daemon RSS', `${status(child.pid, 'VmRSS')} MiB`, `peak ${status(child.pid, 'VmHWM')} MiB`)
    await stop(child)
  } finally {
    fs.rmSync(dir, {recursive: true, force: true})
  }
}

printTable(
  ['data set', 'measure', 'value', 'notes'],
  rows.map((r) => [r.set, r.what, r.value, r.notes]),
)
