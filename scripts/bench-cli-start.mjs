// `npm run bench -- --cli-start [--runs N] [--vs CHECKOUT]`: a short command's whole process, timed
// from outside as an operator meets it (issue 59's target: `provider list` against a running
// daemon with 25 providers in 150 ms). Each command runs N times (default 31) after a warm-up, in
// turn with the others so that a drift of the machine's speed falls on all; medians. The `#!`
// line starts it, as a shell would. Also timed: `node -e 0` (Node's own start, the floor), with
// and without NODE_EXTRA_CA_CERTS (Node parses the bundle it names at every start), and without
// the chunks' code cache (PLACEMAT_NO_CODE_CACHE=1). --vs CHECKOUT: the same commands of another
// built checkout beside them, paired run by run.
import {spawnSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {DAEMON_NODE_OPTIONS} from '../dist/src/daemon/node-flags.js'
import {ADMIN_HEADERS, binOf, daemonStartArgs, logTail, ROOT, spawnToLog, warmedUp} from './lib/daemon.mjs'
import {freePort} from './lib/ports.mjs'
import {fmtMs, pct} from './lib/stats.mjs'
import {printTable} from './lib/table.mjs'

const opt = (name) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : undefined
}
const runs = Number(opt('runs') ?? 31)
const other = opt('vs') ? path.resolve(opt('vs')) : null
const TARGET_MS = 150
const PROVIDERS = 25

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-cli-start-'))
const db = path.join(dir, 'p.db')
const logFile = path.join(dir, 'daemon.log')
const port = await freePort()
const url = `http://127.0.0.1:${port}`
spawnSync(process.execPath, [binOf(), 'db', 'init', '--db', db], {stdio: 'ignore'})
const {child: daemon} = spawnToLog(process.execPath, [...DAEMON_NODE_OPTIONS, binOf(), ...daemonStartArgs(db, port)], {logFile})

try {
  if (!(await warmedUp(logFile, {pid: daemon.pid}))) throw new Error(`the daemon did not start:\n${logTail(logFile)}`)
  for (let i = 0; i < PROVIDERS; i++) {
    const r = await fetch(`${url}/resource_providers`, {
      method: 'POST',
      headers: ADMIN_HEADERS,
      body: JSON.stringify({name: `cli-start-${i}`}),
    })
    if (r.status !== 200) throw new Error(`creating a provider: ${r.status}`)
  }

  const withCa = {...process.env}
  const withoutCa = {...process.env}
  delete withoutCa.NODE_EXTRA_CA_CERTS
  const ca = process.env.NODE_EXTRA_CA_CERTS ? 'set' : 'unset'
  const list = (checkout) => [binOf(checkout), 'provider', 'list', '--url', url, '--token', 'admin']
  const version = (checkout) => [binOf(checkout), '--version']
  /** What is timed: a label, the argv (the #! line starts the first), the environment. */
  const cases = [
    {label: `provider list (NODE_EXTRA_CA_CERTS ${ca})`, argv: list(ROOT), env: withCa, target: true},
    {label: `--version (NODE_EXTRA_CA_CERTS ${ca})`, argv: version(ROOT), env: withCa},
    {label: `node -e 0 (NODE_EXTRA_CA_CERTS ${ca})`, argv: [process.execPath, '-e', '0'], env: withCa},
    {label: 'provider list (NODE_EXTRA_CA_CERTS unset)', argv: list(ROOT), env: withoutCa, target: true},
    {label: '--version (NODE_EXTRA_CA_CERTS unset)', argv: version(ROOT), env: withoutCa},
    {label: 'node -e 0 (NODE_EXTRA_CA_CERTS unset)', argv: [process.execPath, '-e', '0'], env: withoutCa},
    {label: 'provider list, no code cache', argv: list(ROOT), env: {...withCa, PLACEMAT_NO_CODE_CACHE: '1'}},
  ]
  if (other) for (const c of cases.filter((c) => c.argv[0] === binOf(ROOT))) c.vs = {...c, argv: [binOf(other), ...c.argv.slice(1)]}

  const time = ({argv, env}) => {
    const start = process.hrtime.bigint()
    const r = spawnSync(argv[0], argv.slice(1), {env, stdio: ['ignore', 'pipe', 'pipe']})
    const ms = Number(process.hrtime.bigint() - start) / 1e6
    if (r.status !== 0) throw new Error(`${argv.join(' ')}: exit ${r.status}\n${r.stderr}`)
    return ms
  }
  const all = cases.flatMap((c) => (c.vs ? [c, c.vs] : [c]))
  for (const c of all) time(c)
  const times = new Map(all.map((c) => [c, []]))
  for (let i = 0; i < runs; i++) for (const c of all) times.get(c).push(time(c))

  const ratios = (c) => times.get(c).map((ms, i) => ms / times.get(c.vs)[i])
  console.log(
    `A command's whole process, ${runs} runs each in turn, medians in ms (a daemon with ${PROVIDERS} providers, ${os.cpus().length} cores)`,
  )
  printTable(
    ['command', 'p50', 'min', 'max', ...(other ? [`${path.basename(other)} p50`, 'paired ratio (p50)'] : [])],
    cases.map((c) => [
      c.label,
      `${fmtMs(pct(times.get(c), 50))}${c.target ? (pct(times.get(c), 50) <= TARGET_MS ? ' (≤ 150)' : ' (> 150)') : ''}`,
      fmtMs(Math.min(...times.get(c))),
      fmtMs(Math.max(...times.get(c))),
      ...(other ? (c.vs ? [fmtMs(pct(times.get(c.vs), 50)), `${pct(ratios(c), 50).toFixed(2)}x`] : ['', '']) : []),
    ]),
  )
} finally {
  daemon.kill('SIGTERM')
  await new Promise((r) => daemon.once('exit', r))
  fs.rmSync(dir, {recursive: true, force: true})
}
