/**
 * The real OpenStack Placement for the tests (Debian's placement-api): `placement-manage db
 * sync` on SQLite in a temporary folder, then uwsgi serving placement-api with noauth2 on a
 * free loopback port. `placementAvailable` is false (and the tests that need it are skipped,
 * saying so) where it is not installed.
 */
import {execFile, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {promisify} from 'node:util'
import {freePort} from './ports.js'
import {fetchAgain, startUwsgi, stopChild} from './uwsgi.js'

const run = promisify(execFile)

export const placementAvailable = ['/usr/bin/placement-manage', '/usr/bin/placement-api', '/usr/bin/uwsgi'].every((f) => fs.existsSync(f))

export interface ReferencePlacement {
  url: string
  dir: string
  /** Its database, as placement.conf names it. */
  connection: string
  /** A request as the admin of noauth2, at the given microversion; the answer's status and JSON (or null). */
  call(method: string, path: string, body?: unknown, version?: string): Promise<{status: number; body: any}>
  stop(): Promise<void>
}

/**
 * Placement on `connection` (SQLAlchemy's URL, as placement.conf has it; default: a SQLite file
 * in its folder, `dir`/placement.db), its schema made by `placement-manage db sync`.
 */
/** An empty Placement database at `connection`: its schema made by `placement-manage db sync`, nothing in it. */
export async function syncPlacementDatabase(connection: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-placement-sync-'))
  try {
    const conf = path.join(dir, 'placement.conf')
    fs.writeFileSync(conf, ['[DEFAULT]', '[placement_database]', `connection = ${connection}`, ''].join('\n'))
    await run('/usr/bin/placement-manage', ['--config-file', conf, 'db', 'sync'], {cwd: dir})
  } finally {
    fs.rmSync(dir, {recursive: true, force: true})
  }
}

export async function startPlacement(options: {connection?: string} = {}): Promise<ReferencePlacement> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-placement-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const conf = path.join(dir, 'placement.conf')
  const connection = options.connection ?? `sqlite:///${path.join(dir, 'placement.db')}`
  fs.writeFileSync(
    conf,
    ['[DEFAULT]', 'debug = False', '[api]', 'auth_strategy = noauth2', '[placement_database]', `connection = ${connection}`, ''].join('\n'),
  )
  await run('/usr/bin/placement-manage', ['--config-file', conf, 'db', 'sync'], {cwd: dir})
  const child: ChildProcess = await startUwsgi(
    '/usr/bin/placement-api',
    port,
    {OS_PLACEMENT_CONFIG_DIR: dir},
    path.join(dir, 'uwsgi.log'),
    `${url}/`,
  )
  return {
    url,
    dir,
    connection,
    async call(method, p, body, version = '1.39') {
      const res = await fetchAgain(`${url}${p}`, {
        method,
        headers: {
          'x-auth-token': 'admin',
          'openstack-api-version': `placement ${version}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await res.text()
      return {status: res.status, body: text ? JSON.parse(text) : null}
    },
    async stop() {
      await stopChild(child)
      fs.rmSync(dir, {recursive: true, force: true})
    },
  }
}
