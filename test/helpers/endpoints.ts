/**
 * The three things a CLI test runs every command against: a placemat daemon, a plain
 * Placement stand-in (another daemon behind a proxy that hides /placemat/), and a file
 * (--db, opened in process with onFile). All on loopback, in a fresh temporary directory.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {LocalTransport} from '../../src/cli/backend/local-transport.js'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {Store} from '../../src/store/store.js'
import {plainProxy} from './claim-cloud.js'

export interface Endpoints {
  dir: string
  server: RunningServer
  plainServer: RunningServer
  proxy: {url: string; close(): Promise<void>}
  /** CLI arguments for the daemon and for plain Placement. */
  daemon: string[]
  plain: string[]
  daemonClient: PlacementClient
  plainClient: PlacementClient
}

/** A daemon on a file of the directory (noauth2, any port). */
export const serverIn = (dir: string, name: string) => startServer({db: path.join(dir, name), host: '127.0.0.1', port: 0, auth: 'noauth2'})

export async function startEndpoints(prefix: string): Promise<Endpoints> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const server = await serverIn(dir, 'daemon.db')
  const plainServer = await serverIn(dir, 'plain.db')
  const proxy = await plainProxy(plainServer.url)
  return {
    dir,
    server,
    plainServer,
    proxy,
    daemon: ['--url', server.url, '--token', 'admin'],
    plain: ['--url', proxy.url, '--token', 'admin'],
    daemonClient: new PlacementClient(new HttpTransport(server.url, 'admin')),
    plainClient: new PlacementClient(new HttpTransport(plainServer.url, 'admin')),
  }
}

export async function stopEndpoints(e: Partial<Endpoints> | undefined): Promise<void> {
  await e?.proxy?.close()
  await e?.server?.close()
  await e?.plainServer?.close()
  if (e?.dir) fs.rmSync(e.dir, {recursive: true, force: true})
}

/** Runs `fn` with a client on the database file itself (the daemon's app in process). */
export async function onFile<T>(db: string, fn: (c: PlacementClient) => Promise<T>): Promise<T> {
  const c = new PlacementClient(await LocalTransport.open(db))
  try {
    return await fn(c)
  } finally {
    await c.close()
  }
}

/** Creates an empty database file (the current schema, the standard classes and traits). */
export async function newDb(file: string): Promise<void> {
  await (await Store.open(file)).close()
}
