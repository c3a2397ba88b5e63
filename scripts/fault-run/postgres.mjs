// The fault run's PostgreSQL clusters (scripts/lib/postgres.mjs), driven without blocking the
// load: start, stop, a new cluster in the work directory, whether it answers, its processes,
// read-only on and off.
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import {logTail} from '../lib/daemon.mjs'
import {freePort} from '../lib/ports.mjs'
import {chownPostgres, clusterIn, initdbArgs, pgUrl, postgresBin, postmasterPid, sql} from '../lib/postgres.mjs'
import {live, must, run} from './live.mjs'

export const pgCtl = (c, args, timeoutMs) => must(path.join(c.bin, 'pg_ctl'), ['-D', c.data, ...args], {asPostgres: true, timeoutMs})

export async function pgStart(c) {
  try {
    await pgCtl(c, ['-l', c.log, '-o', c.opts, '-w', '-t', '120', 'start'], 150000)
  } catch (err) {
    throw new Error(`${err.message}\n${logTail(c.log, 10)}`)
  }
}
export const pgStop = (c, mode) => pgCtl(c, ['-m', mode, '-w', '-t', '120', 'stop'], 150000)

/** A new cluster (initdb) in the work directory, on a free port; `init: false` for a directory filled otherwise. */
export async function makeCluster(name, {init = true} = {}) {
  const bin = postgresBin()
  if (!bin) throw new Error('no PostgreSQL server binaries (initdb) under /usr/lib/postgresql')
  const dir = path.join(live.work, name)
  fs.mkdirSync(dir)
  chownPostgres(dir)
  const port = await freePort()
  const c = {name, ...clusterIn(dir, port, {bin})}
  live.clusters.add(c)
  if (init) await must(path.join(bin, 'initdb'), initdbArgs(c), {asPostgres: true})
  return c
}

export async function pgAnswers(port, db = 'postgres') {
  try {
    await sql(port, db, 'select 1', [], {timeoutMs: 5000})
    return true
  } catch {
    return false
  }
}

/** The postmaster and its children. */
export async function postmasterPids(c) {
  const pm = postmasterPid(c)
  const r = await run('ps', ['-o', 'pid=', '--ppid', String(pm)])
  return [
    pm,
    ...r.out
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0),
  ]
}

export async function setReadOnly(c, on) {
  const client = new pg.Client({connectionString: pgUrl(c.port, 'postgres'), connectionTimeoutMillis: 5000, query_timeout: 30000})
  client.on('error', () => {})
  await client.connect()
  try {
    // This session writes the setting whatever the server's default says.
    await client.query('set default_transaction_read_only = off')
    await client.query(on ? 'alter system set default_transaction_read_only = on' : 'alter system reset default_transaction_read_only')
    await client.query('select pg_reload_conf()')
  } finally {
    await client.end().catch(() => {})
  }
}
