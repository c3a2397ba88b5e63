/**
 * A throwaway PostgreSQL server for tests: PLACEMAT_TEST_PG_URL if set (a server whose user may
 * create databases), else a cluster made with the local PostgreSQL binaries (initdb) in a temp
 * folder on a free loopback port. Each call of `database()` gives a new empty database.
 */
import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import {freePort} from './ports.js'

function serverBin(): string | null {
  const base = '/usr/lib/postgresql'
  if (!fs.existsSync(base)) return null
  for (const v of fs.readdirSync(base).sort((a, b) => Number(b) - Number(a))) {
    const bin = path.join(base, v, 'bin')
    if (fs.existsSync(path.join(bin, 'initdb'))) return bin
  }
  return null
}

/** Whether PostgreSQL tests can run here. */
export const postgresAvailable = Boolean(process.env.PLACEMAT_TEST_PG_URL || serverBin())

export interface TestPostgres {
  /** A URL to a new, empty database. */
  database(): Promise<string>
  stop(): Promise<void>
}

export async function startPostgres(): Promise<TestPostgres> {
  let adminUrl = process.env.PLACEMAT_TEST_PG_URL
  let stop = async (): Promise<void> => {}
  if (!adminUrl) {
    const bin = serverBin()!
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-pg-'))
    // initdb refuses to run as root: run the server as the postgres user then.
    const root = process.getuid?.() === 0
    if (root) execFileSync('chown', ['-R', 'postgres:postgres', dir])
    const asPg = (cmd: string, args: string[]) =>
      root ? execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], {stdio: 'pipe'}) : execFileSync(cmd, args, {stdio: 'pipe'})
    asPg(path.join(bin, 'initdb'), ['-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8'])
    const port = await freePort()
    const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`
    asPg(path.join(bin, 'pg_ctl'), ['-D', path.join(dir, 'data'), '-l', path.join(dir, 'log'), '-o', opts, '-w', 'start'])
    adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`
    stop = async () => {
      try {
        asPg(path.join(bin, 'pg_ctl'), ['-D', path.join(dir, 'data'), '-m', 'immediate', '-w', 'stop'])
      } finally {
        fs.rmSync(dir, {recursive: true, force: true})
      }
    }
  }
  let n = 0
  return {
    async database() {
      const name = `placemat_test_${process.pid}_${Date.now()}_${++n}`
      const client = new pg.Client({connectionString: adminUrl})
      await client.connect()
      try {
        await client.query(`create database ${name}`)
      } finally {
        await client.end()
      }
      const u = new URL(adminUrl!)
      u.pathname = `/${name}`
      return u.toString()
    },
    stop,
  }
}
