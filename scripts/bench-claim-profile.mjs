#!/usr/bin/env node
// npm run bench -- --claim-profile: where one claim's PUT spends its time on SQLite, phase by
// phase, beside the floor measured in the same run (scripts/claim-floor.mjs: a bare node:http
// server committing the same rows in one better-sqlite3 transaction, same durability, same file
// system). The daemon runs with PLACEMAT_PROFILE=statements (src/store/phase-profile.ts); 1,000 flat
// providers (../shared/perf/load.mjs); each round claims as ../shared/perf's `claim` scenario does
// (GET /allocation_candidates &limit=5, PUT the first to a new consumer), and after each PUT puts
// a body of the same shape to the floor, one request at a time.
//
// The floor answers the GET too, with the bytes of placemat's answer: the claim (GET + PUT) at the
// client is set beside the floor's. After each round the independent floor of ../shared/perf
// (floor.mjs: its client in its own process, a claim's rows under integer keys) runs as many
// claims, and placemat is set beside the faster of the two floors. That floor's client is in its
// server's process, so no request wakes another process; placemat is measured there too, after
// each round: scripts/claim-in-process.mjs, a daemon of its own (its own 1,000 providers) and the
// floor's client in one process. --placemat DIR profiles another (built) checkout's daemon, to
// set before and after side by side with the same script.
//
// Then the same under concurrency (--concurrent 10 clients, 0 to skip): each client claims on a
// pool of ten roomy providers in an aggregate of their own (GET candidates with member_of, PUT the
// first), --attempts times in all, on placemat and on the floor in turn (two passes each). Beside
// the latency: each server's CPU and the client's, per attempt (the floor commits each claim on
// its own, with its fsync inline, as SQLite's synchronous=FULL does). Before those, two long passes
// (--steady claims each) of the shared floor and placemat in one process, in turn: a round's 99
// claims meet each on a WAL that still grows and code not yet optimized. Then one fdatasync's cost
// by how many WAL frames a commit writes (scripts/lib/sync-cost.mjs): the floors differ there too.
// Then the rounds' claims at SQLite's own cost: the statements the daemon ran for them, run again
// alone on a copy of its database taken before the rounds (scripts/lib/claim-sql-replay.mjs), set
// beside the faster floor's PUT: what 1.3x of it leaves for placemat's own code.
//
//   npm run bench -- --claim-profile [--runs 3] [--claims 99] [-n 1000] [--durability full|normal] [--placemat DIR]
//                                    [--concurrent 10] [--attempts 3000] [--steady 2000]
import {spawn, execFileSync} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {DAEMON_NODE_OPTIONS} from '../dist/src/daemon/node-flags.js'
import {daemonStartArgs, warmedUp} from './lib/daemon.mjs'
import {freePort} from './lib/ports.mjs'
import {syncCostByFrames} from './lib/sync-cost.mjs'
import {copyDatabase, replayClaims, reportReplay} from './lib/claim-sql-replay.mjs'

/**
 * Placemat against the shared floor, each with its client in its process: a table of `runs` (the
 * rounds, or the long passes), each {alone, shared} with GET, PUT and claim p50s.
 */
function reportInProcess(heading, each, runs) {
  console.log('')
  console.log(`| ${heading}, p50 | placemat | shared floor | placemat / shared floor | per ${each}: placemat / shared floor |`)
  console.log('|---|---:|---:|---:|---|')
  for (const [name, key] of [
    ['GET', 'get_p50'],
    ['PUT', 'put_p50'],
    ['claim (GET + PUT)', 'claim_p50'],
  ]) {
    const pm = p50(runs.map((x) => x.alone[key]))
    const shared = p50(runs.map((x) => x.shared[key]))
    const per = runs.map((x) => `${f3(x.alone[key])} / ${f3(x.shared[key])} (${(x.alone[key] / x.shared[key]).toFixed(2)}x)`)
    console.log(`| ${name} | ${f3(pm)} | ${f3(shared)} | ${(pm / shared).toFixed(2)}x | ${per.join('; ')} |`)
  }
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const perf = path.resolve(root, '../shared/perf')
const {Client, FLAT_QUERY, percentile} = await import(path.join(perf, 'lib.mjs'))
const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : dflt
}
const runs = Number(opt('runs', '3'))
const claims = Number(opt('claims', '99'))
const n = Number(opt('n', '1000'))
const durability = opt('durability', 'full')
const placematRoot = path.resolve(opt('placemat', root))
const concurrency = Number(opt('concurrent', '10'))
const attempts = Number(opt('attempts', '3000'))
// Claims in each of the two long passes after the rounds (0: none).
const steady = Number(opt('steady', '2000'))

async function waitFor(url) {
  for (let i = 0; i < 400; i++) {
    try {
      if ((await fetch(url + '/')).ok) return
    } catch {}
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`${url} did not start`)
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-claim-profile-'))
const dbFile = path.join(dir, 'placemat.db')
// placemat's candidates answer, for the shared floor's GET to send as many bytes.
const answerFile = path.join(dir, 'answer.json')
execFileSync(process.execPath, [path.join(placematRoot, 'bin/run.js'), 'db', 'init', '--db', dbFile], {stdio: 'ignore'})
const port = await freePort()
const log = fs.openSync(path.join(dir, 'placemat.log'), 'a')
const daemon = spawn(
  process.execPath,
  [...DAEMON_NODE_OPTIONS, path.join(placematRoot, 'bin/run.js'), ...daemonStartArgs(dbFile, port, ['--durability', durability])],
  {stdio: ['ignore', log, 'inherit'], env: {...process.env, PLACEMAT_PROFILE: 'statements'}},
)
fs.closeSync(log)
const floor = spawn(process.execPath, [path.join(root, 'scripts/claim-floor.mjs'), path.join(dir, 'floor.db'), durability], {
  stdio: ['ignore', 'pipe', 'inherit'],
})
const floorPort = await new Promise((resolve, reject) => {
  floor.stdout.once('data', (d) => resolve(Number(String(d).trim())))
  floor.once('exit', () => reject(new Error('the floor server did not start')))
})
const url = `http://127.0.0.1:${port}`
const floorUrl = `http://127.0.0.1:${floorPort}`

try {
  await waitFor(url)
  process.stderr.write(`[claim-profile] loading ${n} flat providers...\n`)
  execFileSync(process.execPath, [path.join(perf, 'load.mjs'), url, '--mode', 'flat', '-n', String(n), '-c', '10', '--quiet'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const inProcess = await startInProcess()
  const pm = new Client(url)
  const fl = new Client(floorUrl)
  const mv = (await pm.get('/')).json().versions[0].max_version
  const body = (ar) => ({
    allocations: ar.allocations,
    project_id: randomUUID(),
    user_id: randomUUID(),
    consumer_generation: null,
    ...(mv >= '1.38' ? {consumer_type: 'TEST'} : {}),
  })
  // Warm both up (and drop what the load traced).
  for (let i = 0; i < 10; i++) {
    const ar = (await pm.get(`/allocation_candidates?${FLAT_QUERY}&limit=5`)).json().allocation_requests[0]
    await pm.put(`/allocations/${randomUUID()}`, body(ar))
    await fl.put(`/allocations/${randomUUID()}`, body(ar))
  }
  // The daemon's warm-up rehearses requests after its start (rolled back, never synced) and
  // they are traced too: the rounds begin once it has ended, with its traces dropped.
  await warmedUp(path.join(dir, 'placemat.log'), {waitMs: 20_000})
  await pm.get('/placemat/v1/profile')
  // The database as the rounds find it: their statements are run again on this copy at the end.
  const replayCopy = path.join(dir, 'replay.db')
  await copyDatabase(placematRoot, dbFile, replayCopy)
  const rounds = []
  for (let r = 0; r < runs; r++) {
    const put = []
    const get = []
    const floorMs = []
    const floorGet = []
    const floorTx = []
    for (let i = 0; i < claims; i++) {
      // The GET after the last PUT: the answer follows the write.
      const g = await pm.get(`/allocation_candidates?${FLAT_QUERY}&limit=5`)
      const ar = g.json()?.allocation_requests?.[0]
      if (!ar) throw new Error('no candidate left')
      get.push(g.ms)
      const p = await pm.put(`/allocations/${randomUUID()}`, body(ar))
      if (p.status !== 204) throw new Error(`PUT answered ${p.status}: ${p.text.slice(0, 200)}`)
      put.push(p.ms)
      // The floor right after, with an answer of the same bytes and a body of the same shape:
      // both meet the same machine.
      if (i === 0) {
        await fl.request('POST', '/answer', g.json())
        fs.writeFileSync(answerFile, g.text)
      }
      const fg = await fl.get(`/allocation_candidates?${FLAT_QUERY}&limit=5`)
      if (fg.status !== 200) throw new Error(`the floor's GET answered ${fg.status}`)
      floorGet.push(fg.ms)
      const f = await fl.put(`/allocations/${randomUUID()}`, body(ar))
      if (f.status !== 204) throw new Error(`the floor answered ${f.status}: ${f.text.slice(0, 200)}`)
      floorMs.push(f.ms)
      floorTx.push(Number(f.headers['x-transaction-ms']))
    }
    const {phases, traces, statements = []} = (await pm.get('/placemat/v1/profile')).json()
    const claim = put.map((v, k) => v + get[k])
    const floorClaim = floorMs.map((v, k) => v + floorGet[k])
    const shared = sharedFloor(claims)
    const alone = await inProcess.claims(claims)
    rounds.push({phases, traces, statements, put, get, claim, floor: floorMs, floorGet, floorClaim, floorTx, shared, alone})
    process.stderr.write(
      `[claim-profile] round ${r + 1}: GET p50 ${p50(get).toFixed(3)}, PUT ${p50(put).toFixed(3)}, claim ${p50(claim).toFixed(3)} ms; ` +
        `floor ${p50(floorGet).toFixed(3)}, ${p50(floorMs).toFixed(3)}, ${p50(floorClaim).toFixed(3)} ms; ` +
        `shared floor ${f3(shared.get_p50)}, ${f3(shared.put_p50)}, ${f3(shared.claim_p50)} ms; ` +
        `placemat in one process with its client ${f3(alone.get_p50)}, ${f3(alone.put_p50)}, ${f3(alone.claim_p50)} ms\n`,
    )
  }
  // Long runs, each in turn: a round's 99 claims on a new WAL still extend the file at each
  // commit and run code not yet optimized; after some hundreds, the WAL is written over in place.
  const steadyPasses = []
  for (let k = 0; steady > 0 && k < 2; k++) steadyPasses.push({shared: sharedFloor(steady), alone: await inProcess.claims(steady)})
  inProcess.close()
  const syncCost = syncCostByFrames(dir)
  // An older build (--placemat DIR) keeps no statements: nothing to replay.
  const replayed = rounds.flatMap((r) => r.statements).filter((claim) => claim.length)
  const replay = replayed.length ? replayClaims(placematRoot, replayCopy, replayed) : null
  const concurrent = concurrency > 0 ? await concurrentPasses(pm, fl, body) : null
  pm.close()
  fl.close()
  report(rounds)
  if (steadyPasses.length) reportInProcess(`${steady} claims in a row, client and server in one process`, 'pass', steadyPasses)
  reportSyncCost(syncCost)
  if (replay) reportReplayed(replay, rounds, steadyPasses)
  if (concurrent) reportConcurrent(concurrent)
} finally {
  daemon.kill('SIGTERM')
  floor.kill('SIGTERM')
  await new Promise((r) => setTimeout(r, 300))
  fs.rmSync(dir, {recursive: true, force: true})
}

/**
 * ../shared/perf/floor.mjs, run after each round: the independent floor, a bare node:http server
 * and its client in one process (no hop between processes), answering the GET with placemat's own
 * answer and committing a claim's consumer, two allocations and the provider's generation (four
 * pages of WAL) in one better-sqlite3 transaction with synchronous=FULL. Its {get_p50, put_p50,
 * claim_p50}, ms.
 */
function sharedFloor(count) {
  const floorDir = fs.mkdtempSync(path.join(dir, 'shared-floor-'))
  const out = execFileSync(process.execPath, [path.join(perf, 'floor.mjs'), floorDir, String(count)], {
    cwd: root, // its better-sqlite3 is the project's
    env: {...process.env, FLOOR_GET_BODY: answerFile},
    encoding: 'utf8',
  })
  fs.rmSync(floorDir, {recursive: true, force: true})
  return JSON.parse(out.trim().split('\n').at(-1))
}

/**
 * scripts/claim-in-process.mjs on a database of its own, loaded as the daemon's was: `claims(n)`
 * runs n claims there and answers its {get_p50, put_p50, claim_p50}.
 */
async function startInProcess() {
  const file = path.join(dir, 'in-process.db')
  execFileSync(process.execPath, [path.join(placematRoot, 'bin/run.js'), 'db', 'init', '--db', file], {stdio: 'ignore'})
  const log = fs.openSync(path.join(dir, 'in-process.log'), 'a')
  const child = spawn(
    process.execPath,
    [...DAEMON_NODE_OPTIONS, path.join(root, 'scripts/claim-in-process.mjs'), file, '--placemat', placematRoot],
    {
      stdio: ['pipe', log, 'pipe'],
    },
  )
  fs.closeSync(log)
  const lines = []
  const waiting = []
  let buffered = ''
  child.stderr.on('data', (d) => {
    buffered += d
    let at
    while ((at = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, at)
      buffered = buffered.slice(at + 1)
      if (!line.startsWith('{')) process.stderr.write(`[in-process] ${line}\n`)
      else if (waiting.length) waiting.shift()(JSON.parse(line))
      else lines.push(JSON.parse(line))
    }
  })
  const next = () =>
    lines.length
      ? Promise.resolve(lines.shift())
      : new Promise((resolve, reject) => {
          waiting.push(resolve)
          child.once('exit', (code) => reject(new Error(`claim-in-process exited (${code})`)))
        })
  const {url: at} = await next()
  execFileSync(process.execPath, [path.join(perf, 'load.mjs'), at, '--mode', 'flat', '-n', String(n), '-c', '10', '--quiet'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  return {
    claims: (count) => {
      child.stdin.write(`${count}\n`)
      return next()
    },
    close: () => child.stdin.end(),
  }
}

/**
 * The rounds' claims at SQLite's own cost beside the faster floor's PUT and placemat's, where the
 * shared floor measures itself (its client in its process): in the rounds (the floor on a new
 * WAL), and in the long passes (its WAL written over in place, as placemat's is); medians of the
 * runs' p50s.
 */
function reportReplayed(replay, rounds, passes) {
  const view = (runs) => ({
    httpMs: p50(runs.map((x) => x.shared.get_p50)),
    floorPut: p50(runs.map((x) => x.shared.put_p50)),
    placemat: p50(runs.map((x) => x.alone.put_p50)),
  })
  reportReplay(replay, {
    [`the rounds (${rounds.length} of ${claims})`]: view(rounds),
    ...(passes.length ? {[`${steady} claims in a row (${passes.length} passes)`]: view(passes)} : {}),
  })
}

/**
 * The sync's cost by a commit's size, on the file system both floors and placemat write to: the
 * shared floor's claim commits some 4 WAL frames, placemat's some 8 to 18 (its consumer, allocation
 * and provider rows with their indexes, the journal and its image).
 */
function reportSyncCost(byFrames) {
  const [[fewest, base]] = Object.entries(byFrames)
  console.log('')
  console.log(`| WAL frames written in place, then one fdatasync | p50 (ms) | against ${fewest} frames |`)
  console.log('|---|---:|---:|')
  for (const [frames, ms] of Object.entries(byFrames)) console.log(`| ${frames} | ${f3(ms)} | ${(ms / base).toFixed(2)}x |`)
}

/** A process's CPU so far (user + system), in ms. */
function cpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100)
}

/** Claims from `concurrency` clients at once on placemat and on the floor, in turn. */
async function concurrentPasses(pm, fl, body) {
  // A pool of its own, roomy enough that no attempt is refused: both servers answer 204 to each.
  const aggregate = randomUUID()
  for (let i = 0; i < 10; i++) {
    const uuid = randomUUID()
    await pm.post('/resource_providers', {name: `concurrent-${i}`, uuid})
    const inv = await pm.put(`/resource_providers/${uuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: {VCPU: {total: 1e6, max_unit: 64}, MEMORY_MB: {total: 1e8, max_unit: 1e6}, DISK_GB: {total: 1e7, max_unit: 1e5}},
    })
    await pm.put(`/resource_providers/${uuid}/aggregates`, {
      resource_provider_generation: inv.json().resource_provider_generation,
      aggregates: [aggregate],
    })
  }
  const query = `/allocation_candidates?resources=VCPU:1,MEMORY_MB:256,DISK_GB:10&member_of=${aggregate}&limit=5`
  await fl.request('POST', '/answer', (await pm.get(query)).json())
  const servers = {
    placemat: {client: new Client(url, {concurrency}), pid: daemon.pid},
    floor: {client: new Client(floorUrl, {concurrency}), pid: floor.pid},
  }
  const passes = []
  // A short pass on each first, untimed: the client's code and each server's warm up alike.
  for (const [name, timed] of [
    ['placemat', false],
    ['floor', false],
    ['placemat', true],
    ['floor', true],
    ['placemat', true],
    ['floor', true],
  ]) {
    const {client, pid} = servers[name]
    const count = timed ? attempts : Math.min(300, attempts)
    process.stderr.write(
      `[claim-profile] ${concurrency} concurrent claimers on ${name}, ${count} attempts${timed ? '' : ' (warm-up)'}...\n`,
    )
    let next = 0
    const claim = []
    const get = []
    const put = []
    let failed = 0
    const worker = async () => {
      while (next++ < count) {
        const g = await client.get(query)
        const ar = g.json()?.allocation_requests?.[0]
        if (!ar) throw new Error(`${name}: no candidate (${g.status})`)
        const p = await client.put(`/allocations/${randomUUID()}`, body(ar))
        if (p.status !== 204) failed++
        get.push(g.ms)
        put.push(p.ms)
        claim.push(g.ms + p.ms)
      }
    }
    const [server0, client0, t0] = [cpuMs(pid), process.cpuUsage(), performance.now()]
    await Promise.all(Array.from({length: concurrency}, worker))
    const wall = performance.now() - t0
    const c = process.cpuUsage(client0)
    if (timed)
      passes.push({
        name,
        perSecond: (claim.length / wall) * 1000,
        claim,
        get,
        put,
        failed,
        serverCpu: (cpuMs(pid) - server0) / claim.length,
        clientCpu: (c.user + c.system) / 1000 / claim.length,
      })
  }
  servers.placemat.client.close()
  servers.floor.client.close()
  return passes
}

function reportConcurrent(passes) {
  console.log('')
  console.log(`${concurrency} concurrent claimers (GET candidates + PUT the first), ${attempts} attempts a pass; ms`)
  console.log('| pass | attempts/s | claim p50 | p90 | GET p50 | PUT p50 | refused | server CPU per attempt | client CPU per attempt |')
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const p of passes)
    console.log(
      `| ${p.name} | ${p.perSecond.toFixed(0)} | ${f3(p50(p.claim))} | ${f3(p90(p.claim))} | ${f3(p50(p.get))} | ${f3(p50(p.put))} | ${p.failed} | ${f3(p.serverCpu)} | ${f3(p.clientCpu)} |`,
    )
  const all = (name, key) => passes.filter((p) => p.name === name).flatMap((p) => p[key])
  console.log(`claim p50, placemat / floor over both passes: ${(p50(all('placemat', 'claim')) / p50(all('floor', 'claim'))).toFixed(2)}x`)
}

function f3(v) {
  return v === null || v === undefined ? '' : v.toFixed(3)
}
function spread(vs) {
  return vs.length > 1 ? `${f3(Math.min(...vs))}-${f3(Math.max(...vs))}` : f3(vs[0])
}
function p50(xs) {
  return percentile(
    [...xs].sort((a, b) => a - b),
    50,
  )
}
function p90(xs) {
  return percentile(
    [...xs].sort((a, b) => a - b),
    90,
  )
}

function report(rounds) {
  const phases = rounds[0].phases
  console.log(`claim PUT on SQLite (${durability}), ${n} flat providers, ${rounds.length} rounds of ${claims} claims; ms`)
  console.log('| phase | p50 | p90 | p50 per round |')
  console.log('|---|---:|---:|---|')
  let sum = 0
  phases.forEach((name, k) => {
    const all = rounds.flatMap((r) => r.traces.map((t) => t[k]).filter((v) => v !== null))
    if (!all.length) return console.log(`| ${name} | | | not seen |`)
    sum += p50(all)
    console.log(
      `| ${name} | ${f3(p50(all))} | ${f3(p90(all))} | ${spread(rounds.map((r) => p50(r.traces.map((t) => t[k]).filter((v) => v !== null))))} |`,
    )
  })
  const inServer = rounds.flatMap((r) => r.traces.map((t) => t.reduce((a, v) => a + (v ?? 0), 0)))
  console.log(`| in the server (request event to finish) | ${f3(p50(inServer))} | ${f3(p90(inServer))} | sum of phase p50s ${f3(sum)} |`)
  // placemat's transaction: from the lock to COMMIT done, beside the floor's.
  const [from, to] = [phases.indexOf('lock'), phases.indexOf('fdatasync')]
  const tx = (r) => r.traces.map((t) => t.slice(from, to + 1).reduce((a, v) => a + (v ?? 0), 0))
  console.log(
    `| placemat's transaction (lock to the WAL on disk, index patch included) | ${f3(p50(rounds.flatMap(tx)))} | ${f3(p90(rounds.flatMap(tx)))} | ${spread(rounds.map((r) => p50(tx(r))))} |`,
  )
  const ftx = rounds.flatMap((r) => r.floorTx)
  console.log(`| the floor's transaction | ${f3(p50(ftx))} | ${f3(p90(ftx))} | ${spread(rounds.map((r) => p50(r.floorTx)))} |`)
  console.log('')
  console.log('| at the client | placemat p50 | p90 | floor p50 | p90 | ratio of p50s | p50 per round: placemat / floor |')
  console.log('|---|---:|---:|---:|---:|---:|---|')
  for (const [name, pmKey, flKey] of [
    ['GET (candidates, limit=5, after the last PUT)', 'get', 'floorGet'],
    ['PUT (the claim)', 'put', 'floor'],
    ['claim (GET + PUT)', 'claim', 'floorClaim'],
  ]) {
    const pmAll = rounds.flatMap((r) => r[pmKey])
    const flAll = rounds.flatMap((r) => r[flKey])
    const perRound = rounds.map((r) => `${f3(p50(r[pmKey]))} / ${f3(p50(r[flKey]))} (${(p50(r[pmKey]) / p50(r[flKey])).toFixed(2)}x)`)
    console.log(
      `| ${name} | ${f3(p50(pmAll))} | ${f3(p90(pmAll))} | ${f3(p50(flAll))} | ${f3(p90(flAll))} | ${(p50(pmAll) / p50(flAll)).toFixed(2)}x | ${perRound.join('; ')} |`,
    )
  }
  // Both floors side by side: this project's (another process's client, placemat's tables and
  // keys: some 7-8 pages of WAL a claim) and ../shared/perf's (its client in its own process,
  // integer keys: some 4 pages); placemat against the faster of the two.
  console.log('')
  console.log(
    '| at the client, p50 | placemat | this floor | shared floor (../shared/perf/floor.mjs) | placemat / the faster floor | per round: placemat / faster |',
  )
  console.log('|---|---:|---:|---:|---:|---|')
  for (const [name, pmKey, flKey, shKey] of [
    ['GET', 'get', 'floorGet', 'get_p50'],
    ['PUT', 'put', 'floor', 'put_p50'],
    ['claim (GET + PUT)', 'claim', 'floorClaim', 'claim_p50'],
  ]) {
    const pm = p50(rounds.flatMap((r) => r[pmKey]))
    const ours = p50(rounds.flatMap((r) => r[flKey]))
    const shared = p50(rounds.map((r) => r.shared[shKey]))
    const perRound = rounds.map((r) => `${(p50(r[pmKey]) / Math.min(p50(r[flKey]), r.shared[shKey])).toFixed(2)}x`)
    console.log(
      `| ${name} | ${f3(pm)} | ${f3(ours)} | ${f3(shared)} | ${(pm / Math.min(ours, shared)).toFixed(2)}x | ${perRound.join(', ')} |`,
    )
  }
  // Each where the shared floor is measured: the client in the server's process.
  reportInProcess('client and server in one process', 'round', rounds)
}
