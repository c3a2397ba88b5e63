// The failover run: a primary, a synchronous streaming standby (pg_basebackup -R), 2 daemons
// through one shared TcpProxy; the primary stopped hard, the standby promoted, the proxy repointed.
import path from 'node:path'
import {pgUrl, sql} from '../lib/postgres.mjs'
import {alive, startDaemon, waitHealthy} from './daemons.mjs'
import {loadProviders, proxied, teardown} from './envs.mjs'
import {health} from './http.mjs'
import {must, now, progress, sleep} from './live.mjs'
import {countStatuses, makeEnv, overlapping} from './load.mjs'
import {makeCluster, pgCtl, pgStart, pgStop} from './postgres.mjs'
import {BOUND_MS, runFault} from './run-fault.mjs'

/** The failover run, its row into `results.failover`. */
export async function failoverRun(o, results) {
  const env = makeEnv('failover', 'postgres')
  env.dbName = 'placemat_failover'
  progress('failover: primary (initdb) and a synchronous streaming standby (pg_basebackup -R)')
  const primary = await makeCluster('primary')
  await pgStart(primary)
  await sql(primary.port, 'postgres', `create database ${env.dbName}`)
  const standby = await makeCluster('standby', {init: false})
  await must(
    path.join(primary.bin, 'pg_basebackup'),
    ['-D', standby.data, '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-R', '-X', 'stream', '-c', 'fast'],
    {asPostgres: true},
  )
  await pgStart(standby)
  env.cluster = primary
  env.standby = standby
  let serverPort = primary.port
  env.sqlPort = () => serverPort
  const waitRepl = async (pred, what) => {
    for (let i = 0; i < 300; i++) {
      const r = await sql(primary.port, 'postgres', 'select application_name, state, sync_state from pg_stat_replication')
      if (r.rows.some(pred)) return r.rows
      await sleep(100)
    }
    throw new Error(`the standby is not ${what}`)
  }
  await waitRepl((r) => r.state === 'streaming', 'streaming')
  // Only now synchronous: commits wait for the standby (the standby's own settings, copied
  // before this, leave it a primary without a synchronous standby once promoted).
  await sql(primary.port, 'postgres', "alter system set synchronous_standby_names = '*'")
  await sql(primary.port, 'postgres', "alter system set synchronous_commit = 'on'")
  await sql(primary.port, 'postgres', 'select pg_reload_conf()')
  const rows = await waitRepl((r) => r.sync_state === 'sync', 'synchronous')
  progress(`  replication: ${JSON.stringify(rows)}`)
  const proxy = await proxied(env, primary.port)
  const url = pgUrl(proxy.port, env.dbName)
  for (const name of ['fo-a', 'fo-b']) {
    const d = await startDaemon(env, name, url)
    env.rotation.push(d)
    if (name === 'fo-a') await loadProviders(env, d, o.providers)
  }
  await waitHealthy(env.rotation)
  try {
    const r = await runFault(
      env,
      'failover',
      'primary stopped (immediate), standby promoted, proxy repointed',
      async (ctx) => {
        ctx.start()
        ctx.phase.recoveryFrom = ctx.phase.faultStart
        await pgStop(primary, 'immediate')
        ctx.phase.extra.stoppedSeconds = (now() - ctx.phase.faultStart) / 1000
        await pgCtl(standby, ['promote', '-w', '-t', '60'], 90000)
        ctx.phase.extra.promotedSeconds = (now() - ctx.phase.faultStart) / 1000
        serverPort = standby.port
        env.cluster = standby
        proxy.repoint({port: standby.port})
        ctx.end()
      },
      {
        async after(ctx, result) {
          // "Statuses during" for the failover: from the stop until both daemons serve claims.
          const phase = ctx.phase
          const until = result.recovery === null ? now() : phase.faultStart + result.recovery * 1000
          const during = overlapping(phase.samples, phase.faultStart, until)
          result.statusesDuring = countStatuses(during)
          result.over15s = during.filter((s) => s.ms > BOUND_MS).length
          result.longestMs = during.length ? Math.max(...during.map((s) => s.ms)) : null
          result.window = {from: 0, to: (until - phase.faultStart) / 1000}
          const counter = await sql(standby.port, env.dbName, "select value from placemat_meta where key = 'change_counter'")
          phase.extra.promotedChangeCounter = Number(counter.rows[0]?.value)
          phase.extra.daemonJournal = {}
          for (const d of env.rotation.filter(alive)) phase.extra.daemonJournal[d.name] = (await health(d)).json?.journal ?? null
        },
      },
    )
    results.failover = r
  } finally {
    await teardown(env)
  }
}
