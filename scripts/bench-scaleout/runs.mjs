// The runs: on PostgreSQL (a cluster, the providers loaded through one daemon, then K daemons for
// each count, churned or under a fixed load, then Placement's rows with --placement), on MariaDB
// (one server, or a three-node Galera cluster with daemon i on node i mod 3), or on SQLite (one
// daemon, the writes of "after write" by the CLI).
import fs from 'node:fs'
import path from 'node:path'
import {loadThroughBatch} from '../huge-sets.mjs'
import {ROOT} from '../lib/daemon.mjs'
import {startGalera, startMariadb} from '../lib/mariadb.mjs'
import {processTree} from '../lib/proc.mjs'
import {passProfiles} from './cpu-profiles.mjs'
import {calibratedDelayProxy} from './delay-proxy.mjs'
import {measureFixedLoad} from './fixed-load.mjs'
import {must} from './http.mjs'
import {measure} from './measure.mjs'
import {startDaemon, stopDaemon} from './nodes.mjs'
import {placementOnMariadb, placementOnPostgres, runPlacement} from './placement.mjs'
import {startPostgres} from './postgres.mjs'
import {results} from './report.mjs'
import {progress, running} from './running.mjs'

/** A daemon on `db` loads `o.providers` flat providers through its batch API, and stops: the seconds it took. */
async function loadProviders(o, db, home) {
  const loader = await startDaemon({name: 'loader', db, home, bin: o.bin})
  await must(loader.url, 'PUT', '/traits/CUSTOM_BENCH', undefined, [201, 204])
  const t0 = performance.now()
  const made = await loadThroughBatch(loader.url, 'flat', o.providers)
  const loadS = (performance.now() - t0) / 1000
  progress(`loaded ${made} providers in ${loadS.toFixed(1)} s`)
  await stopDaemon(loader)
  return loadS
}

export async function runPostgres(o, work) {
  progress('starting a PostgreSQL cluster...')
  const db = await startPostgres()
  progress(`PostgreSQL on 127.0.0.1:${db.port}`)
  progress(`loading ${o.providers} flat providers through one daemon's batch API...`)
  const loadS = await loadProviders(o, db.url(), path.join(work, 'loader-postgres'))

  let proxy = null
  let proxyRtt = null
  let directRtt = null
  if (o.delayMs > 0) ({proxy, proxyRtt, directRtt} = await calibratedDelayProxy(db.port, o.delayMs))
  const dbUrl = db.url(proxy ? proxy.port : db.port)
  // What the proxy really adds is measured and shown.
  const measuredDelay = proxy ? ` (measured +${(proxyRtt - directRtt).toFixed(2)} ms)` : ''
  const where = `postgres${o.delayMs ? `, proxy +${o.delayMs} ms${measuredDelay}` : ''}`
  const setup = `${o.label}${where}${o.kill ? ', one node killed' : ''}${o.pin ? ', clients pinned' : ''}`
  try {
    await runDaemonCounts(o, work, {dbUrls: [dbUrl], setup, backend: 'postgres', loadS, proxyRtt, directRtt})
    if (o.placement) await runPlacement(o, {home: placementOnPostgres(db, proxy ? proxy.port : db.port), where, work, proxyRtt, directRtt})
  } finally {
    if (proxy) {
      await proxy.close()
      running.proxyPid = null
    }
    progress('stopping PostgreSQL...')
    try {
      running.pgStop('fast')
    } catch (err) {
      progress(`pg_ctl stop: ${err.message}`)
    }
    running.pgStop = null
    // A run on another database after this one counts neither its CPU nor its transactions here.
    running.postmaster = null
    running.statsUrl = null
  }
}

/** K daemons on `dbUrls` (node i on the i-th mod their number) for each count, churned or under a fixed load. */
async function runDaemonCounts(o, work, {dbUrls, setup, backend, loadS, proxyRtt = null, directRtt = null}) {
  if (o.cpuProf) fs.mkdirSync(o.cpuProf, {recursive: true})
  const nodeOptions = o.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', o.cpuProf] : []
  for (const k of o.daemonCounts) {
    const nodes = []
    let passes = null
    try {
      for (let i = 0; i < k; i++) {
        progress(`starting daemon ${i + 1} of ${k}...`)
        const home = path.join(work, `${backend}-k${k}-node${i + 1}`)
        nodes.push(await startDaemon({name: `node${i + 1}`, db: dbUrls[i % dbUrls.length], home, bin: o.bin, nodeOptions}))
      }
      if (o.churn) await measure(o, {setup, backend, nodes, loadS, proxyRtt, directRtt})
      if (o.fixedLoad !== null)
        passes = await measureFixedLoad(nodes, {rate: o.fixedLoad, seconds: o.seconds, warmUp: o.warmUp, database: setup})
    } finally {
      await Promise.all(nodes.map(stopDaemon))
    }
    if (passes && o.cpuProf) results.profiles.push(...passProfiles(o.cpuProf, passes, ROOT))
  }
}

/**
 * On one MariaDB server (then Placement's rows with --placement), or (`galera`) a three-node Galera
 * cluster: daemon i on node i mod 3, or (o.oneWriter) every daemon on the first node, as a balancer
 * with one active node sends them.
 */
export async function runMariadb(o, work, {galera = false} = {}) {
  progress(galera ? 'starting a three-node Galera cluster...' : 'starting a MariaDB server...')
  let dbUrls
  let server = null
  if (galera) {
    const cluster = await startGalera()
    running.mariadbStop = () => cluster.stopAll()
    running.mariadbPids = () => cluster.nodes.flatMap((n) => (n.pid ? processTree(n.pid) : []))
    const urls = await cluster.database('placemat_scaleout')
    dbUrls = o.oneWriter ? urls.slice(0, 1) : urls
  } else {
    server = await startMariadb({bufferPool: '256M'})
    running.mariadbStop = () => server.stop()
    running.mariadbPids = () => processTree(server.pid)
    dbUrls = [await server.placematDatabase()]
  }
  const backend = galera ? 'galera' : 'mariadb'
  try {
    progress(`loading ${o.providers} flat providers through one daemon's batch API...`)
    const loadS = await loadProviders(o, dbUrls[0], path.join(work, `loader-${backend}`))
    const where = galera ? `galera (3 nodes${o.oneWriter ? ', every daemon on node 1' : ''})` : 'mariadb'
    await runDaemonCounts(o, work, {dbUrls, setup: `${o.label}${where}`, backend, loadS})
    if (o.placement && server) await runPlacement(o, {home: placementOnMariadb(server), where, work})
  } finally {
    progress(galera ? 'stopping the Galera cluster...' : 'stopping MariaDB...')
    await running.mariadbStop()
    running.mariadbStop = null
    running.mariadbPids = null
  }
}

export async function runSqlite(o, work) {
  const dbFile = path.join(work, 'placemat.db')
  progress(`loading ${o.providers} flat providers into ${dbFile} through a daemon's batch API...`)
  const loadS = await loadProviders(o, dbFile, path.join(work, 'loader-sqlite'))
  progress('starting the daemon...')
  const node = await startDaemon({name: 'node1', db: dbFile, home: path.join(work, 'node1'), bin: o.bin})
  try {
    await measure(o, {setup: `${o.label}sqlite + CLI writes`, backend: 'sqlite', nodes: [node], loadS, cliDb: dbFile})
  } finally {
    await stopDaemon(node)
  }
}
