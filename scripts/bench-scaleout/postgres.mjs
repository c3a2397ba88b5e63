// The bench's PostgreSQL: a throwaway cluster (scripts/lib/postgres.mjs, durable defaults:
// fsync, synchronous_commit and full_page_writes on) with the placemat_scaleout database; the
// round trip of `select 1`; the transactions the server has ended.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import {freePort} from '../lib/ports.mjs'
import {chownPostgres, clusterIn, execAsPostgres, initdbArgs, pgCtlSync, pgUrl, postgresBin, postmasterPid, sql} from '../lib/postgres.mjs'
import {pct} from '../lib/stats.mjs'
import {progress, running, sleep} from './running.mjs'

const DB = 'placemat_scaleout'

function postgresServerBin() {
  const bin = postgresBin()
  if (!bin) throw new Error('no PostgreSQL server binaries (initdb) under /usr/lib/postgresql: install postgresql-15, or use --sqlite')
  if (!bin.includes('/15/')) progress(`PostgreSQL 15 not found; using ${bin}`)
  return bin
}

/** Starts the cluster (stopped on the way out) and makes the database: its port, its URL through another port, its log. */
export async function startPostgres() {
  const bin = postgresServerBin()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-scaleout-pg-'))
  running.dirs.push(dir)
  chownPostgres(dir)
  const c = clusterIn(dir, await freePort(), {bin, settings: ['shared_buffers=256MB']})
  execAsPostgres(path.join(bin, 'initdb'), initdbArgs(c))
  try {
    pgCtlSync(c, ['-l', c.log, '-o', c.opts, '-w', 'start'])
  } catch (err) {
    const tail = fs.existsSync(c.log) ? fs.readFileSync(c.log, 'utf8').slice(-800) : ''
    throw new Error(`${err.message}\n${tail}`)
  }
  running.pgStop = (mode = 'fast') => pgCtlSync(c, ['-m', mode, '-w', 'stop'])
  running.statsUrl = pgUrl(c.port, DB)
  running.postmaster = postmasterPid(c)
  await sql(c.port, 'postgres', `create database ${DB}`)
  return {port: c.port, url: (p = c.port) => pgUrl(p, DB), log: c.log}
}

/** Median round trip of `select 1` on a connection to `port` (to see what the proxy adds). */
export async function pingMs(port) {
  const c = new pg.Client({connectionString: pgUrl(port, DB)})
  await c.connect()
  try {
    const times = []
    for (let i = 0; i < 40; i++) {
      const t0 = performance.now()
      await c.query('select 1')
      times.push(performance.now() - t0)
    }
    return pct(times.slice(5), 50)
  } finally {
    await c.end()
  }
}

/**
 * Transactions the server has ended in the database at `statsUrl`: each of placemat's round trips
 * is one (its statements go in one simple query). The server publishes them within a second.
 */
export async function serverTransactions(statsUrl) {
  if (!statsUrl) return null
  await sleep(1100)
  const c = new pg.Client({connectionString: statsUrl})
  await c.connect()
  try {
    const r = await c.query('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()')
    return Number(r.rows[0].n)
  } finally {
    await c.end()
  }
}
