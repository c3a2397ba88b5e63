/**
 * Helpers for the reshape and db tests: running the real binary, and a dump of every
 * row of a database file, to prove a file did (not) change.
 */
import {execFile, spawn} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import {startServer} from '../../src/daemon/server.js'
import {BIN, ROOT, childEnv, placemat, type Result} from './cli.js'

export {BIN, ROOT, childEnv, placemat, type Result}

/** Runs a node script of the repository (scripts/...). */
export function script(file: string, args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(ROOT, file), ...args], {cwd: ROOT, env: childEnv()}, (err, stdout, stderr) => {
      resolve({code: err ? ((err as any).code ?? 1) : 0, stdout, stderr})
    })
  })
}

/**
 * Every row of every table (but kysely's migration lock and the nodes' beats), each table's rows sorted, as
 * one string: two equal dumps mean two files hold the same data. Opening the file runs
 * SQLite's recovery (a torn WAL tail is dropped), as any later reader would.
 */
export function dumpDb(file: string): string {
  const raw = new SQLite(file, {readonly: true, fileMustExist: true})
  try {
    const tables = (raw.prepare(`select name from sqlite_master where type = 'table' order by name`).all() as {name: string}[])
      .map((t) => t.name)
      // The lock row and the nodes' beats are bookkeeping: a daemon serving the file beats every few seconds.
      .filter((t) => t !== 'kysely_migration_lock' && t !== 'placemat_nodes')
    const out: Record<string, string[]> = {}
    for (const t of tables) out[t] = (raw.prepare(`select * from "${t}"`).all() as object[]).map((r) => JSON.stringify(r)).sort()
    return JSON.stringify(out)
  } finally {
    raw.close()
  }
}

export {spawn}

/** The VGPU fixture's plan. */
export const VGPU_PLAN = path.join(ROOT, 'fixtures/reshape/vgpu.yaml')

/** Loads the VGPU fixture into a database (--db FILE) or an endpoint (--url URL --token T). */
export async function setupVgpu(args: string[]): Promise<void> {
  const r = await script('scripts/setup-vgpu-fixture.mjs', args)
  if (r.code !== 0) throw new Error(`setup-vgpu-fixture ${args.join(' ')}: exit ${r.code}\n${r.stderr}`)
}

/** The VGPU fixture offline (a file) and online (a daemon), in a fresh temporary directory. */
export async function startVgpu(prefix: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const file = path.join(dir, 'vgpu.db')
  const server = await startServer({db: path.join(dir, 'daemon.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
  const online = ['--url', server.url, '--token', 'admin']
  const offline = ['--db', file]
  await setupVgpu(offline)
  await setupVgpu(online)
  return {
    dir,
    file,
    server,
    online,
    offline,
    async close() {
      await server.close()
      fs.rmSync(dir, {recursive: true, force: true})
    },
  }
}
