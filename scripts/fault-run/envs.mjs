// The environments the faults run in: PostgreSQL (a cluster, 2 daemons each through a TcpProxy
// of its own) and SQLite (1 daemon on a file), the providers loaded through the first daemon;
// back to normal before each fault; torn down after.
import fs from 'node:fs'
import path from 'node:path'
import {loadThroughBatch} from '../huge-sets.mjs'
import {pgUrl, sql} from '../lib/postgres.mjs'
import {TcpProxy} from '../tcp-proxy.mjs'
import {alive, startDaemon, stopDaemon, waitHealthy} from './daemons.mjs'
import {http} from './http.mjs'
import {live, now, progress, state} from './live.mjs'
import {makeEnv, QUERY, QUERY_FALLBACK} from './load.mjs'
import {makeCluster, pgAnswers, pgStart, pgStop, setReadOnly} from './postgres.mjs'

/** Back to normal: PostgreSQL up and writable, proxies passing, every daemon running and healthy. */
export async function ensureNormal(env) {
  for (const pid of live.frozen) {
    try {
      process.kill(pid, 'SIGCONT')
    } catch {}
  }
  live.frozen.clear()
  if (env.kind === 'postgres' && env.cluster) {
    if (!(await pgAnswers(env.cluster.port))) {
      progress('  PostgreSQL is not answering: starting it')
      if (fs.existsSync(path.join(env.cluster.data, 'postmaster.pid'))) await pgStop(env.cluster, 'immediate').catch(() => {})
      await pgStart(env.cluster)
    }
    const ro = await sql(env.cluster.port, 'postgres', "select current_setting('default_transaction_read_only') as ro")
    if (ro.rows[0].ro === 'on') await setReadOnly(env.cluster, false)
  }
  for (const p of env.proxies) p.setMode('pass')
  for (const d of env.rotation) {
    if (!alive(d)) {
      progress(`  restarting daemon ${d.name} (it exited: ${d.exitInfo?.code ?? d.exitInfo?.signal})`)
      await startDaemon(env, d.name, d.db, d.extra, {serving: false})
    }
  }
  await waitHealthy(env.rotation, 120000)
}

/** Loads `providers` flat providers through `d`, then picks the load's query. */
export async function loadProviders(env, d, providers) {
  const t = now()
  const n = await loadThroughBatch(d.url, 'flat', providers)
  progress(`  ${n} flat providers loaded through ${d.name} in ${((now() - t) / 1000).toFixed(1)} s`)
  const r = await http(d, 'GET', QUERY)
  if (r.status !== 200) throw new Error(`GET ${QUERY}: ${r.status || r.kind} ${r.text.slice(0, 300)}`)
  if (!r.json.allocation_requests.length) {
    env.query = QUERY_FALLBACK
    const note =
      'the claim query VCPU:1,MEMORY_MB:64 has no candidates on the flat providers (their MEMORY_MB has min_unit 128): the load asks VCPU:1,MEMORY_MB:128'
    if (!state.notes.includes(note)) state.notes.push(note)
    const f = await http(d, 'GET', QUERY_FALLBACK)
    if (!f.json?.allocation_requests?.length) throw new Error(`no candidates for ${QUERY_FALLBACK} either`)
  }
}

export async function proxied(env, targetPort) {
  const proxy = new TcpProxy({port: targetPort})
  live.proxies.add(proxy)
  await proxy.listen()
  env.proxies.push(proxy)
  return proxy
}

export async function postgresEnv(providers) {
  const env = makeEnv('pg', 'postgres')
  progress('PostgreSQL: initdb and start (durable defaults)')
  env.cluster = await makeCluster('pg')
  await pgStart(env.cluster)
  env.dbName = 'placemat_faults'
  env.sqlPort = () => env.cluster.port
  await sql(env.cluster.port, 'postgres', `create database ${env.dbName}`)
  for (const name of ['pg-a', 'pg-b']) {
    const proxy = await proxied(env, env.cluster.port)
    const d = await startDaemon(env, name, pgUrl(proxy.port, env.dbName))
    env.rotation.push(d)
    if (name === 'pg-a') await loadProviders(env, d, providers)
  }
  await waitHealthy(env.rotation)
  return env
}

export async function teardown(env) {
  for (const d of env.daemons) await stopDaemon(d)
  for (const p of env.proxies) {
    await p.close().catch(() => {})
    live.proxies.delete(p)
  }
  for (const c of [env.cluster, env.standby].filter(Boolean)) {
    if (fs.existsSync(path.join(c.data, 'postmaster.pid'))) await pgStop(c, 'fast').catch(() => pgStop(c, 'immediate').catch(() => {}))
  }
}

export async function sqliteEnv(name, dir, providers) {
  const env = makeEnv(name, 'sqlite')
  env.dir = dir
  env.file = path.join(dir, 'placemat.db')
  const d = await startDaemon(env, 'sqlite', env.file)
  env.rotation.push(d)
  await loadProviders(env, d, providers)
  await waitHealthy(env.rotation)
  return env
}
