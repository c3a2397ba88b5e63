// A throwaway PostgreSQL cluster, for the scripts that start one (bench-scaleout, fault-run):
// Debian's server binaries, a data directory of its own, durable defaults (nothing about fsync,
// synchronous_commit or full_page_writes is changed), loopback only. initdb refuses to run as
// root: as root, PostgreSQL's programs run as the postgres user.
import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'

const BASE = '/usr/lib/postgresql'

/**
 * Where the server binaries are: 15 (the release the anchor figures were taken on) when it is
 * installed, else the newest; null when there is none.
 */
export function postgresBin() {
  if (fs.existsSync(path.join(BASE, '15', 'bin', 'initdb'))) return path.join(BASE, '15', 'bin')
  if (!fs.existsSync(BASE)) return null
  for (const v of fs.readdirSync(BASE).sort((a, b) => Number(b) - Number(a))) {
    if (fs.existsSync(path.join(BASE, v, 'bin', 'initdb'))) return path.join(BASE, v, 'bin')
  }
  return null
}

export const asRoot = process.getuid?.() === 0

/** `cmd args` as the postgres user when this process is root: the file and arguments to run. */
export const asPostgres = (cmd, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args])

/** Runs one of PostgreSQL's programs to its end, blocking; throws with the end of what it said. */
export function execAsPostgres(cmd, args) {
  const [file, argv] = asPostgres(cmd, args)
  try {
    return execFileSync(file, argv, {stdio: 'pipe'})
  } catch (err) {
    throw new Error(
      `${path.basename(cmd)} ${args.join(' ')} failed: ${String(err.stderr ?? err.message)
        .trim()
        .slice(-800)}`,
    )
  }
}

/** A directory the server must write in: the postgres user's when this process is root. */
export function chownPostgres(dir) {
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir])
}

/**
 * A cluster in `dir`: its data directory, its log, and the server's options for `port` (its
 * socket in `dir`, 127.0.0.1, 100 connections, then each of `settings` as -c).
 */
export function clusterIn(dir, port, {bin = postgresBin(), settings = []} = {}) {
  const opts = [`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100`, ...settings.map((s) => `-c ${s}`)].join(' ')
  return {bin, dir, data: path.join(dir, 'data'), log: path.join(dir, 'log'), port, opts}
}

/** initdb's arguments for a cluster: trust on every connection, the postgres superuser, UTF8. */
export const initdbArgs = (c) => ['-D', c.data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8']

/** pg_ctl on a cluster, blocking (for the way out, where nothing may wait). */
export const pgCtlSync = (c, args) => execAsPostgres(path.join(c.bin, 'pg_ctl'), ['-D', c.data, ...args])

/** The postmaster's pid, from the data directory. */
export const postmasterPid = (c) => Number(fs.readFileSync(path.join(c.data, 'postmaster.pid'), 'utf8').split('\n')[0])

export const pgUrl = (port, db) => `postgres://postgres@127.0.0.1:${port}/${db}`

/** One query on a connection of its own, straight to the server at `port`. */
export async function sql(port, db, text, params = [], {timeoutMs = 30000} = {}) {
  const client = new pg.Client({connectionString: pgUrl(port, db), connectionTimeoutMillis: 5000, query_timeout: timeoutMs})
  client.on('error', () => {})
  await client.connect()
  try {
    return await client.query(text, params)
  } finally {
    await client.end().catch(() => {})
  }
}
