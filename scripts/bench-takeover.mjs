#!/usr/bin/env node
// npm run bench -- --takeover: moving a cloud between OpenStack Placement (Debian's placement-api,
// on SQLite) and placemat, at N providers (placeload-shaped, from scripts/gen-huge.mjs, with N/2
// consumers):
//   to-placement    placemat export --to-placement into an empty Placement database (the way back;
//                   also how the Placement database of the other rows is made)
//   from-placement  placemat import --from-placement from that database (the switch-over's copy)
//   switch-over     from-placement, then a daemon started on the copy up to its first answer: the
//                   downtime of docs/upgrades.md's procedure, placement-api being stopped meanwhile
//   api export      placemat export --url through placement-api serving that database (the path
//                   that needs no database access; up to --api-max providers, default 10,000)
//
//   npm run bench -- --takeover                         # 10,000 and 100,000 providers
//   npm run bench -- --takeover --providers 10000 --api-max 0
import {execFileSync, spawn} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {daemonStartArgs} from './lib/daemon.mjs'
import {freePort} from './lib/ports.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(root, 'bin/run.js')
const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : dflt
}
const SIZES = String(opt('providers', '10000,100000')).split(',').map(Number)
const API_MAX = Number(opt('api-max', 10000))
if (!fs.existsSync('/usr/bin/placement-api') || !fs.existsSync('/usr/bin/placement-manage')) {
  console.error("bench-takeover: needs Debian's placement-api (apt-get install placement-api uwsgi-plugin-python3)")
  process.exit(1)
}

const log = (m) => process.stderr.write(`[takeover ${new Date().toISOString().slice(11, 19)}] ${m}\n`)
const seconds = (t0) => (performance.now() - t0) / 1000
const placemat = (argv, env = {}) =>
  execFileSync(process.execPath, [BIN, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {...process.env, ...env},
    maxBuffer: 1 << 30,
  }).toString()
const timed = (fn) => {
  const t0 = performance.now()
  fn()
  return seconds(t0)
}
async function waitFor(url, ms = 120_000) {
  const until = Date.now() + ms
  for (;;) {
    try {
      const r = await fetch(url, {headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39'}})
      if (r.status < 500) return
    } catch {
      // not yet
    }
    if (Date.now() > until) throw new Error(`${url} did not answer`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const rows = []
for (const n of SIZES) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-takeover-bench-'))
  const env = {PLACEMAT_HOME: dir}
  try {
    log(`${n} providers: generating and importing the placemat cloud...`)
    const snap = path.join(dir, 'cloud.json')
    execFileSync(process.execPath, [
      path.join(root, 'scripts/gen-huge.mjs'),
      '--snapshot',
      snap,
      '--consumers',
      String(n / 2),
      '--compact',
      String(n),
    ])
    const source = path.join(dir, 'placemat.db')
    placemat(['import', snap, '--db', source], env)

    const placementDb = path.join(dir, 'placement.db')
    const conf = path.join(dir, 'placement.conf')
    fs.writeFileSync(
      conf,
      `[DEFAULT]\ndebug = False\n[api]\nauth_strategy = noauth2\n[placement_database]\nconnection = sqlite:///${placementDb}\n`,
    )
    execFileSync('/usr/bin/placement-manage', ['--config-file', conf, 'db', 'sync'], {cwd: dir, stdio: 'ignore'})
    const url = `sqlite:///${placementDb}`
    log('  export --to-placement...')
    const toPlacement = timed(() => placemat(['export', '--db', source, '--to-placement', url], env))
    log(`  ${toPlacement.toFixed(1)} s; import --from-placement...`)
    const copy = path.join(dir, 'copy.db')
    const fromPlacement = timed(() => placemat(['import', '--from-placement', url, '--db', copy], env))
    log(`  ${fromPlacement.toFixed(1)} s; the switch-over (a fresh copy, then a daemon up to its first answer)...`)
    const copy2 = path.join(dir, 'copy2.db')
    const port = await freePort()
    const t0 = performance.now()
    placemat(['import', '--from-placement', url, '--db', copy2], env)
    const daemon = spawn(process.execPath, [BIN, ...daemonStartArgs(copy2, port, ['--log-level', 'warn'])], {
      stdio: 'ignore',
      env: {...process.env, ...env},
    })
    await waitFor(`http://127.0.0.1:${port}/resource_providers?limit=1`)
    const switchOver = seconds(t0)
    daemon.kill('SIGTERM')
    log(`  ${switchOver.toFixed(1)} s`)

    let apiExport = null
    if (n <= API_MAX) {
      log('  export --url through placement-api...')
      const pport = await freePort()
      const uwsgi = spawn(
        '/usr/bin/uwsgi',
        [
          '--plugin',
          'python3',
          '--http-socket',
          `127.0.0.1:${pport}`,
          '--wsgi-file',
          '/usr/bin/placement-api',
          '--master',
          '--processes',
          '1',
          '--threads',
          '1',
          '--die-on-term',
          '--add-header',
          'Connection: close',
          '--disable-logging',
        ],
        {stdio: 'ignore', env: {...process.env, OS_PLACEMENT_CONFIG_DIR: dir}},
      )
      try {
        await waitFor(`http://127.0.0.1:${pport}/`)
        apiExport = timed(() =>
          placemat(['export', '--url', `http://127.0.0.1:${pport}`, '--token', 'admin', '--json', '-o', path.join(dir, 'api.json')], env),
        )
        log(`  ${apiExport.toFixed(1)} s`)
      } finally {
        uwsgi.kill('SIGTERM')
      }
    }
    const row = {
      providers: n,
      consumers: n / 2,
      to_placement_s: toPlacement,
      from_placement_s: fromPlacement,
      switch_over_s: switchOver,
      api_export_s: apiExport,
    }
    process.stderr.write(JSON.stringify(row) + '\n')
    rows.push(row)
  } finally {
    fs.rmSync(dir, {recursive: true, force: true})
  }
}
const f = (x) => (x === null ? '— (not run)' : x.toFixed(1))
console.log(
  '| providers | consumers | export --to-placement s | import --from-placement s | switch-over (copy + daemon serving) s | export --url through placement-api s |',
)
console.log('|---:|---:|---:|---:|---:|---:|')
for (const r of rows)
  console.log(
    `| ${r.providers} | ${r.consumers} | ${f(r.to_placement_s)} | ${f(r.from_placement_s)} | ${f(r.switch_over_s)} | ${f(r.api_export_s)} |`,
  )
