#!/usr/bin/env node
// npm run bench: runs the Placement perf scenarios of ../shared/perf against a placemat daemon it
// starts (fresh SQLite database per data set) and prints a table beside OpenStack Placement 8.0.0's
// anchor figures (the better of its SQLite and PostgreSQL runs), with the speed-up at the median.
//
//   npm run bench                          # flat 1000 and nested 1000 (9000 providers)
//   npm run bench -- --sets flat:1000      # pick data sets: flat:N, nested:N
//   npm run bench -- --big                 # also 100,000 flat providers, limit=1000 (loaded in bulk)
//   npm run bench -- --huge                # only the huge sets: 100k and 1M flat, 100k nested trees
//                                          # (scripts/bench-huge.mjs: load, start-up, RSS, streamed answers)
//   npm run bench -- --takeover            # moving a cloud between OpenStack Placement and placemat, both ways
//                                          # (scripts/bench-takeover.mjs)
//   npm run bench -- --scaleout            # several daemons on one PostgreSQL database: claim churn, overcommit,
//                                          # reads after another node's write, start-up, RSS (scripts/bench-scaleout.mjs);
//                                          # --databases sqlite,postgres,mariadb,galera: all of them in one run
//   npm run bench -- --capacity            # capacity of 20 flavors at 10k and 100k hosts with NUMA
//                                          # children, and a what-if without one rack (bench-capacity.mjs)
//   npm run bench -- --snapshots           # export and import of 10,000 providers, JSON and YAML, side by side
//                                          # (scripts/bench-snapshots.mjs)
//   npm run bench -- --make-room           # the fewest moves for K=50 of a large flavor in one rack, a rack drained
//                                          # and hosts freed, at 1,000 and 10,000 hosts (scripts/bench-make-room.mjs)
//   npm run bench -- --cli-start           # provider list, --version and node -e 0 as whole processes,
//                                          # with and without NODE_EXTRA_CA_CERTS (--vs CHECKOUT: beside another)
//   npm run bench -- --claim-profile       # one claim's PUT phase by phase on SQLite, beside two bare
//                                          # node:http + better-sqlite3 floors, this project's and ../shared/perf's
//                                          # floor.mjs (scripts/bench-claim-profile.mjs)
//   npm run bench -- --runs 1 --placement URL   # also measure a live Placement at URL (same machine)
//   npm run bench -- --json out.jsonl      # keep the raw scenario lines
//   npm run bench -- --no-answer-cache     # every candidates query searched and encoded afresh
//   npm run bench -- --durability both     # each data set with every commit fsynced (full, the default)
//                                          # and with --durability normal, to see what an fsync costs
//   npm run bench -- --scenarios claim,claims-concurrent   # only these scenarios
//   npm run bench -- --anchor DIR          # compare with a Placement run of ../shared/perf/run-anchor.sh
//                                          # (RESULTS=DIR) made just before, instead of the README figures
//   npm run bench -- --with-placement      # the same run measures OpenStack Placement 8.0.0 first (Debian's
//                                          # placement-api under uwsgi, ../shared/perf/run-anchor.sh, SQLite
//                                          # 1 process x 1 thread; --placement-backends sqlite,postgres for both,
//                                          # the better p50 is compared), on the same data sets and scenarios;
//                                          # nested sets then run lighter (--count 30 --total 100 --claims 33)
//                                          # on both servers, as Placement needs ~1 s per nested query
import {spawn, execFileSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {DAEMON_NODE_OPTIONS} from '../dist/src/daemon/node-flags.js'
import {loadThroughBatch} from './huge-sets.mjs'
import {daemonStartArgs, warmedUp} from './lib/daemon.mjs'
import {freePort} from './lib/ports.mjs'
import {statusMiB} from './lib/proc.mjs'
import {printTable} from './lib/table.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
if (process.argv.includes('--huge')) {
  execFileSync(process.execPath, [path.join(root, 'scripts/bench-huge.mjs'), ...process.argv.slice(2)], {stdio: 'inherit'})
  process.exit(0)
}
if (process.argv.includes('--takeover')) {
  execFileSync(process.execPath, [path.join(root, 'scripts/bench-takeover.mjs'), ...process.argv.slice(2)], {stdio: 'inherit'})
  process.exit(0)
}
if (process.argv.includes('--cli-start')) {
  execFileSync(process.execPath, [path.join(root, 'scripts/bench-cli-start.mjs'), ...process.argv.slice(2)], {stdio: 'inherit'})
  process.exit(0)
}
if (process.argv.includes('--claim-profile')) {
  execFileSync(process.execPath, [path.join(root, 'scripts/bench-claim-profile.mjs'), ...process.argv.slice(2)], {stdio: 'inherit'})
  process.exit(0)
}
if (process.argv.includes('--snapshots')) {
  execFileSync(process.execPath, [path.join(root, 'scripts/bench-snapshots.mjs'), ...process.argv.slice(2)], {stdio: 'inherit'})
  process.exit(0)
}
if (process.argv.includes('--make-room')) {
  // With the daemon's young generation: make-room plans are made in the daemon (daemon start gives it).
  execFileSync(process.execPath, [...DAEMON_NODE_OPTIONS, path.join(root, 'scripts/bench-make-room.mjs'), ...process.argv.slice(2)], {
    stdio: 'inherit',
  })
  process.exit(0)
}
if (process.argv.includes('--capacity')) {
  execFileSync(process.execPath, [path.join(root, 'scripts/bench-capacity.mjs'), ...process.argv.slice(2)], {stdio: 'inherit'})
  process.exit(0)
}
if (process.argv.includes('--scaleout')) {
  execFileSync(process.execPath, [path.join(root, 'scripts/bench-scaleout.mjs'), ...process.argv.slice(2)], {stdio: 'inherit'})
  process.exit(0)
}
const perf = path.resolve(root, '../shared/perf')
const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : dflt
}
const flag = (name) => argv.includes(`--${name}`)
const runs = opt('runs', '3')
const sets = opt('sets', 'flat:1000,nested:1000')
  .split(',')
  .map((s) => s.split(':'))
  .map(([mode, n]) => ({mode, n: Number(n)}))
const jsonOut = opt('json')
const placementUrl = opt('placement')
// Only these scenarios of ../shared/perf/bench.mjs (e.g. claim,claims-concurrent); all by default.
const scenarioArgs = opt('scenarios') ? ['--scenarios', opt('scenarios')] : []
const durabilities = opt('durability', 'full') === 'both' ? ['full', 'normal'] : [opt('durability', 'full')]

// OpenStack Placement 8.0.0 on this kind of machine (../shared/perf/README.md): p50 ms, best of sqlite/postgres.
const ANCHOR = {
  'flat-1000': {candidates: 96.1, 'candidates-concurrent': 888.3, 'provider-list': 43.0, claim: 101.1, 'claims-concurrent': 308.1},
  'nested-1000': {
    'candidates-nested': 699.6,
    'candidates-nested-concurrent': 4355.0,
    'candidates-nested-net': 751.6,
    'provider-list': 41.0,
    claim: 643.7,
    'claims-concurrent': 341.1,
  },
  'flat-10000': {candidates: 1353.5, 'candidates-concurrent': 7597.5, 'provider-list': 562.4, claim: 1144.5, 'claims-concurrent': 1215.0},
}

// Bench arguments per data set: with Placement in the run, nested sets are lighter (its nested
// queries take ~1 s each), for both servers alike.
const withPlacement = flag('with-placement')
const setArgs = (mode) => (withPlacement && mode === 'nested' ? ['--count', '30', '--total', '100', '--claims', '33'] : [])

// OpenStack Placement measured first in this same run (../shared/perf/run-anchor.sh), per data set.
let anchorDir = opt('anchor')
if (withPlacement) {
  if (!fs.existsSync('/usr/bin/placement-api')) {
    console.error(
      "--with-placement needs Debian's placement-api: apt-get install -y placement-api python3-placement uwsgi-core uwsgi-plugin-python3",
    )
    process.exit(2)
  }
  anchorDir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-bench-placement-'))
  const backends = opt('placement-backends', 'sqlite').split(',').join(' ')
  for (const {mode, n} of sets) {
    process.stderr.write(`[placement ${mode}-${n}] loading and benchmarking OpenStack Placement (${backends}); results in ${anchorDir}\n`)
    execFileSync('bash', [path.join(perf, 'run-anchor.sh')], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        BACKENDS: backends,
        SETS: `${mode}:${n}`,
        RUNS: runs,
        RESULTS: anchorDir,
        BENCH_ARGS: [...setArgs(mode), ...scenarioArgs].join(' '),
        BIG_BENCH_ARGS: '',
      },
    })
  }
}

// Same-run figures: the better (lower) p50 of Placement on each backend, per data set and scenario.
if (anchorDir) {
  const measured = {}
  for (const line of fs.readFileSync(path.join(anchorDir, 'bench.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue
    const r = JSON.parse(line)
    const set = String(r.label).replace(/^(sqlite|postgres)-/, '')
    const into = (measured[set] ??= {})
    if (typeof r.p50 === 'number' && (into[r.scenario] === undefined || r.p50 < into[r.scenario])) into[r.scenario] = r.p50
  }
  for (const k of Object.keys(ANCHOR)) delete ANCHOR[k]
  Object.assign(ANCHOR, measured)
}

if (!fs.existsSync(path.join(perf, 'bench.mjs'))) {
  console.error(`no perf scenarios at ${perf}`)
  process.exit(2)
}

async function startDaemon(dbFile, durability = durabilities[0]) {
  const port = await freePort()
  const extra = [...(flag('no-answer-cache') ? ['--no-answer-cache'] : []), '--durability', durability]
  // A new database is made on purpose first: a daemon does not start an empty one where its log
  // (opened below, before it starts) says a database was.
  if (!fs.existsSync(dbFile))
    execFileSync(process.execPath, [path.join(root, 'bin/run.js'), 'db', 'init', '--db', dbFile], {stdio: 'ignore'})
  // The access log goes to a file beside the database, as a detached daemon's does.
  const log = fs.openSync(path.join(path.dirname(dbFile), 'placemat.log'), 'a')
  const child = spawn(process.execPath, [...DAEMON_NODE_OPTIONS, path.join(root, 'bin/run.js'), ...daemonStartArgs(dbFile, port, extra)], {
    stdio: ['ignore', log, 'inherit'],
  })
  fs.closeSync(log)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url + '/')).ok) return {child, url}
    } catch {}
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('daemon did not start')
}

const rssMiB = (pid) => statusMiB(pid, 'VmRSS')

function runNode(script, args) {
  return execFileSync(process.execPath, [path.join(perf, script), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  })
}

const fmt = (v) => (v === undefined || v === null ? '' : typeof v === 'number' ? (v >= 100 ? v.toFixed(0) : v.toFixed(2)) : String(v))
const lines = []
const rows = []
for (const {mode, n} of sets)
  for (const durability of durabilities) {
    const set = `${mode}-${n}`
    const label = durabilities.length > 1 || durability !== 'full' ? `${set} ${durability}` : set
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-bench-'))
    const {child, url} = await startDaemon(path.join(dir, 'placemat.db'), durability)
    try {
      process.stderr.write(`[${label}] loading...\n`)
      const t0 = Date.now()
      const load = JSON.parse(
        runNode('load.mjs', [url, '--mode', mode, '-n', String(n), '-c', '10', '--quiet'])
          .trim()
          .split('\n')
          .at(-1),
      )
      // The daemon's warm-up starts once it has nothing to serve: measured after it, not beside it.
      await warmedUp(path.join(dir, 'placemat.log'), {pid: child.pid, waitMs: 20_000})
      process.stderr.write(
        `[${label}] loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s (${load.requests_per_s ?? load.rps ?? '?'} req/s); benchmarking...\n`,
      )
      const out = runNode('bench.mjs', [
        url,
        '--mode',
        mode,
        '--runs',
        runs,
        '--label',
        `placemat-${label.replace(' ', '-')}`,
        ...setArgs(mode),
        ...scenarioArgs,
      ])
      for (const line of out.trim().split('\n')) {
        const r = JSON.parse(line)
        lines.push(r)
        rows.push({
          set: label,
          scenario: r.scenario,
          p50: r.p50,
          p99: r.p99,
          rps: r.rps,
          anchor: ANCHOR[set]?.[r.scenario],
          notes:
            r.get_p50 !== undefined
              ? `GET ${fmt(r.get_p50)} + PUT ${fmt(r.put_p50)}`
              : r.put_p50 !== undefined
                ? `PUT ${fmt(r.put_p50)}`
                : '',
        })
      }
      rows.push({set: label, scenario: 'daemon RSS MiB', p50: rssMiB(child.pid)})
    } finally {
      child.kill('SIGTERM')
      fs.rmSync(dir, {recursive: true, force: true})
    }
  }

if (flag('big')) {
  const label = 'flat-100000'
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-bench-'))
  const {child, url} = await startDaemon(path.join(dir, 'placemat.db'))
  try {
    const t0 = Date.now()
    await loadThroughBatch(url, 'flat', 100000)
    await warmedUp(path.join(dir, 'placemat.log'), {pid: child.pid, waitMs: 20_000})
    process.stderr.write(`[${label}] bulk-loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s; benchmarking...\n`)
    const q = 'resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=14a5c8a3-5a99-4e8f-88be-00d85fcb1c17&required=HW_CPU_X86_AVX2&limit=1000'
    const out = runNode('bench.mjs', [
      url,
      '--mode',
      'flat',
      '--runs',
      runs,
      '--count',
      '50',
      '--scenarios',
      'candidates,claim',
      '--claims',
      '33',
      '--flat-query',
      q,
      '--label',
      `placemat-${label}`,
    ])
    for (const line of out.trim().split('\n')) {
      const r = JSON.parse(line)
      lines.push(r)
      rows.push({set: label, scenario: `${r.scenario} (limit=1000)`, p50: r.p50, p99: r.p99, rps: r.rps, anchor: undefined})
    }
    rows.push({set: label, scenario: 'daemon RSS MiB', p50: rssMiB(child.pid)})
  } finally {
    child.kill('SIGTERM')
    fs.rmSync(dir, {recursive: true, force: true})
  }
}

if (placementUrl) {
  process.stderr.write(`[placement] benchmarking ${placementUrl} (load it first with ../shared/perf/load.mjs)\n`)
  const out = runNode('bench.mjs', [placementUrl, '--mode', 'flat', '--runs', runs, '--label', 'placement'])
  for (const line of out.trim().split('\n')) {
    const r = JSON.parse(line)
    lines.push(r)
    const mine = rows.find((x) => x.set === 'flat-1000' && x.scenario === r.scenario)
    if (mine) mine.live = r.p50
  }
}

if (jsonOut) fs.writeFileSync(jsonOut, lines.map((l) => JSON.stringify(l)).join('\n') + '\n')

const header = [
  'data set',
  'scenario',
  'p50 ms',
  'p99 ms',
  'req/s',
  anchorDir ? 'Placement p50 (same run)' : 'Placement p50',
  'speed-up',
  ...(placementUrl ? ['live Placement p50', 'live speed-up'] : []),
  'notes (p50 ms)',
]
const table = rows.map((r) => [
  r.set,
  r.scenario,
  fmt(r.p50),
  fmt(r.p99),
  fmt(r.rps),
  fmt(r.anchor),
  r.anchor && r.p50 ? `${(r.anchor / r.p50).toFixed(1)}x` : '',
  ...(placementUrl ? [fmt(r.live), r.live && r.p50 ? `${(r.live / r.p50).toFixed(1)}x` : ''] : []),
  r.notes ?? '',
])
printTable(header, table)
