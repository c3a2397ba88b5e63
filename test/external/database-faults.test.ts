/**
 * The database fails and comes back: the daemon (the real binary, in a process of its own) never
 * exits, answers every request in bounded time with a 503 in Placement's error format while the
 * database is away, and serves again by itself once it answers. PostgreSQL and MariaDB are reached
 * through a TCP proxy (scripts/tcp-proxy.mjs) that the tests freeze; PostgreSQL's refuses while
 * it is "down", MariaDB is stopped and started again on its data. The daemon's connections are
 * ended by the server itself: pg_terminate_backend, KILL CONNECTION.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import pg from 'pg'
import {BIN, ROOT, childEnv} from '../helpers/cli.js'
import {mariadbAvailable, startMariadb} from '../helpers/mariadb.js'
import {postgresAvailable, startPostgres} from '../helpers/postgres.js'
// @ts-expect-error plain JavaScript module shared with the fault run and the benchmark
import {TcpProxy} from '../../scripts/tcp-proxy.mjs'
import {freePort} from '../helpers/ports.js'

const HEADERS = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
const RP = '11111111-2222-3333-4444-555555555555'

interface Daemon {
  child: ChildProcess
  headers?: Record<string, string>
  url: string
  output: () => string
  exited: Promise<number | null>
}

const running: Daemon[] = []
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-faults-'))

/** `placemat daemon start --foreground` on `db`; resolves once it listens (not necessarily serving). */
async function daemon(db: string, args: string[] = [], env: Record<string, string> = {}): Promise<Daemon> {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    [
      BIN,
      'daemon',
      'start',
      '--foreground',
      '--db',
      db,
      '--port',
      String(port),
      ...(args.includes('--auth') ? [] : ['--auth', 'noauth2']),
      ...(args.includes('--log-level') ? [] : ['--log-level', 'warn']),
      ...args,
    ],
    {
      cwd: ROOT,
      env: childEnv({PLACEMAT_HOME: dir, ...env}),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  const d = {child, url: `http://127.0.0.1:${port}`, output: () => out, exited}
  running.push(d)
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) return d
    try {
      await fetch(d.url + '/')
      return d
    } catch {
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  throw new Error(`daemon did not listen: ${out}`)
}

async function call(d: Daemon, method: string, url: string, body?: unknown) {
  const t0 = performance.now()
  const res = await fetch(d.url + url, {
    method,
    headers: {...HEADERS, ...d.headers},
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  }).catch((e) => {
    throw new Error(`${method} ${url}: ${e.cause ?? e} (daemon exit ${d.child.exitCode}): ${d.output().slice(-3000)}`)
  })
  const text = await res.text()
  return {status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers, ms: performance.now() - t0}
}

async function waitFor(what: string, fn: () => Promise<boolean>, ms = 20_000): Promise<number> {
  const t0 = performance.now()
  while (performance.now() - t0 < ms) {
    if (await fn().catch(() => false)) return performance.now() - t0
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${what}: not within ${ms} ms`)
}

const serving = (d: Daemon) => async () => (await call(d, 'GET', '/placemat/v1/health')).status === 200

afterEach(async () => {
  for (const d of running.splice(0)) {
    if (d.child.exitCode === null) {
      d.child.kill('SIGKILL')
      await d.exited
    }
  }
})

afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

type Proxy = InstanceType<typeof TcpProxy>

/** A database server of one kind, and how it fails. */
interface Server {
  /** A new, empty database's URL (placemat's), straight to the server. */
  database(): Promise<string>
  /** Ends every connection to the database at `url` but the caller's, from the server's side; how many it ended. */
  killConnections(url: string): Promise<number>
  /** The allocations the database at `url` holds for `consumer`, read straight from the server. */
  allocations(url: string, consumer: string): Promise<number>
  /** The server down: new connections refused (`proxy` stands between the daemon and it). */
  down(proxy: Proxy): Promise<void>
  /** The server answering again. */
  up(proxy: Proxy): Promise<void>
  stop(): Promise<void>
}

const servers: Array<{kind: string; available: boolean; start: () => Promise<Server>}> = [
  {
    kind: 'PostgreSQL',
    available: postgresAvailable,
    start: async () => {
      const server = await startPostgres()
      return {
        database: () => server.database(),
        async killConnections(url) {
          const u = new URL(url)
          const admin = new pg.Client({connectionString: url.replace(u.pathname, '/postgres')})
          await admin.connect()
          try {
            const r = await admin.query(
              'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
              [u.pathname.slice(1)],
            )
            return r.rowCount ?? 0
          } finally {
            await admin.end()
          }
        },
        async allocations(url, consumer) {
          const client = new pg.Client({connectionString: url})
          await client.connect()
          try {
            const r = await client.query('select count(*) as n from allocations where consumer_uuid = $1', [consumer])
            return Number(r.rows[0].n)
          } finally {
            await client.end()
          }
        },
        down: async (proxy) => proxy.setMode('refuse'),
        up: async (proxy) => proxy.setMode('pass'),
        stop: () => server.stop(),
      }
    },
  },
  {
    kind: 'MariaDB',
    available: mariadbAvailable,
    start: async () => {
      const server = await startMariadb()
      return {
        database: () => server.placematDatabase(),
        async killConnections(url) {
          // Both of the backend's pools: kysely's and the writers' sessions.
          const name = new URL(url).pathname.slice(1)
          const ids = (await server.sql(`select id from information_schema.processlist where db = '${name}' and id <> connection_id()`))
            .split('\n')
            .filter(Boolean)
          for (const id of ids) await server.sql(`kill connection ${Number(id)}`)
          return ids.length
        },
        async allocations(url, consumer) {
          const name = new URL(url).pathname.slice(1)
          return Number((await server.sql(`select count(*) from \`${name}\`.allocations where consumer_uuid = '${consumer}'`)).trim())
        },
        async down(proxy) {
          // Stopped, not frozen: the proxy passes connections on, and the port refuses them.
          await server.shutdown()
          proxy.setMode('pass')
        },
        async up(proxy) {
          await server.restart()
          proxy.setMode('pass')
        },
        stop: () => server.stop(),
      }
    },
  },
]

for (const s of servers) describe.skipIf(!s.available)(`${s.kind} goes away and comes back`, () => faultCases(s))

function faultCases({start}: (typeof servers)[number]) {
  let server: Server
  let proxy: Proxy
  let direct: string

  beforeAll(async () => {
    server = await start()
  }, 60_000)
  afterAll(async () => {
    await proxy?.close()
    await server?.stop()
  })

  /** A new database, and the URL to it through a fresh proxy. */
  async function database(): Promise<string> {
    direct = await server.database()
    const u = new URL(direct)
    await proxy?.close()
    proxy = new TcpProxy({port: Number(u.port)})
    u.port = String(await proxy.listen())
    return u.toString()
  }

  it('a connection killed inside a write transaction: the database, asked under the write lock, shows nothing was kept, the write runs again and commits, the daemon lives', async () => {
    const url = await database()
    const d = await daemon(url, [], {PLACEMAT_TEST_PAUSE_IN_TX: '1500'})
    await waitFor('serving', serving(d))
    const made = call(d, 'POST', '/resource_providers', {name: 'one', uuid: RP})
    await waitFor('paused in the transaction', async () => d.output().includes('placemat-test: paused in transaction'))
    expect(await server.killConnections(direct)).toBeGreaterThan(0)
    const res = await made
    // Its COMMIT went on the dead connection. One server (PostgreSQL, one MariaDB) ran it or not,
    // and not finding its image proves it was not kept: the write ran again, and this time
    // committed. (Galera, where another node may yet commit it, answers 503: galera-balancer.)
    expect(res.status).toBe(200)
    expect(d.output()).toContain('"kept":false')
    expect((await call(d, 'GET', `/resource_providers/${RP}`)).status).toBe(200)
    // Once: the run again made one provider, not two.
    expect((await call(d, 'POST', '/resource_providers', {name: 'one', uuid: RP})).status).toBe(409)
    expect(d.child.exitCode).toBeNull()
  })

  it('a COMMIT whose answer is lost with its connection: the write is found kept, and answered as committed', async () => {
    const url = await database()
    const d = await daemon(url)
    await waitFor('serving', serving(d))
    expect((await call(d, 'POST', '/resource_providers', {name: 'one', uuid: RP})).status).toBe(200)
    const inventory = {resource_provider_generation: 0, inventories: {VCPU: {total: 8}}}
    expect((await call(d, 'PUT', `/resource_providers/${RP}/inventories`, inventory)).status).toBe(200)
    const consumer = '22222222-3333-4444-5555-666666666666'
    // The server commits the claim (the round trip that records its image); its answer never
    // reaches the daemon, whose connection is then cut.
    proxy.dropRepliesAfter = /insert into "?placemat_change_images/i
    const claim = call(d, 'PUT', `/allocations/${consumer}`, {
      allocations: {[RP]: {resources: {VCPU: 2}}},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    })
    await waitFor('the claim committed on the server', async () => (await server.allocations(direct, consumer)) === 1)
    proxy.dropRepliesAfter = null
    proxy.cutAll()
    const res = await claim
    expect(res.status).toBe(204)
    expect(d.output()).toContain('commit_outcome_found')
    const held = await call(d, 'GET', `/allocations/${consumer}`)
    expect(held.body.allocations[RP].resources).toEqual({VCPU: 2})
    expect((await call(d, 'GET', `/resource_providers/${RP}/usages`)).body.usages).toEqual({VCPU: 2})
    expect(d.child.exitCode).toBeNull()
  })

  it('requests while the database is away are answered 503 within the timeout, and it serves again by itself', async () => {
    const url = await database()
    const d = await daemon(url, ['--db-connect-timeout', '1', '--db-statement-timeout', '2'])
    await waitFor('serving', serving(d))
    expect((await call(d, 'POST', '/resource_providers', {name: 'before', uuid: RP})).status).toBe(200)
    // Frozen: connections taken and never answered (a partition, a stopped server).
    proxy.setMode('blackhole')
    proxy.cutAll()
    const writes = await Promise.all([0, 1, 2].map((k) => call(d, 'PUT', `/resource_providers/${RP}`, {name: `during-${k}`})))
    for (const w of writes) {
      expect(w.status).toBe(503)
      expect(w.ms).toBeLessThan(15_000)
    }
    const read = await call(d, 'GET', '/resource_providers')
    expect(read.status).toBe(503)
    const health = await call(d, 'GET', '/placemat/v1/health')
    expect(health.status).toBe(503)
    const metrics = await fetch(d.url + '/metrics', {headers: HEADERS}).then((r) => r.text())
    expect(metrics).toMatch(/^placemat_database_up 0$/m)
    // Refused: the server is down.
    await server.down(proxy)
    expect((await call(d, 'PUT', `/resource_providers/${RP}`, {name: 'down'})).status).toBe(503)
    await server.up(proxy)
    const recovered = await waitFor('serving again', serving(d))
    expect(recovered).toBeLessThan(5000)
    const now = await call(d, 'GET', `/resource_providers/${RP}`)
    expect(now.body.name).toBe('before')
    expect((await call(d, 'PUT', `/resource_providers/${RP}`, {name: 'after'})).status).toBe(200)
    expect(d.child.exitCode).toBeNull()
  })

  it('starts while the database is away: says it is starting, serves once it answers; --db-wait bounds the wait', async () => {
    const url = await database()
    await server.down(proxy)
    const waiting = await daemon(url)
    const health = await call(waiting, 'GET', '/placemat/v1/health')
    expect(health.status).toBe(503)
    expect(health.body.errors[0].detail).toContain('starting')
    expect((await call(waiting, 'GET', '/resource_providers')).status).toBe(503)
    // It tells the operator why it waits (its first try to connect may begin after it listens).
    await waitFor('the log saying the database is not answering', async () => /not answering/.test(waiting.output()))
    await server.up(proxy)
    await waitFor('serving once the database answers', serving(waiting))

    proxy.setMode('blackhole')
    const withPassword = new URL(url)
    withPassword.password = 'secret'
    const bounded = await daemon(withPassword.toString(), ['--db-wait', '2', '--db-connect-timeout', '1'])
    expect(await bounded.exited).not.toBe(0)
    expect(bounded.output()).toContain('did not answer within the wait')
    expect(bounded.output()).toContain('***')
    expect(bounded.output()).not.toContain('secret')
    proxy.setMode('pass')
  })
}

describe('the SQLite file goes away', () => {
  it('a deleted file: writes refused with 503, health says so, the log says so at error level, nothing acknowledged', async () => {
    // The default auth: the admin token beside the database is what shows one was there.
    const home = fs.mkdtempSync(path.join(dir, 'home-'))
    const db = path.join(home, 'placemat.db')
    const d = await daemon(db, ['--log-level', 'info', '--auth', 'token'])
    d.headers = {'x-auth-token': fs.readFileSync(path.join(home, 'admin-token'), 'utf8').trim()}
    await waitFor('serving', serving(d)).catch((e) => {
      throw new Error(`${e.message}: ${d.output()}`)
    })
    expect((await call(d, 'POST', '/resource_providers', {name: 'kept', uuid: RP})).status).toBe(200)
    fs.rmSync(db)
    const write = await call(d, 'POST', '/resource_providers', {name: 'lost'})
    expect(write.status).toBe(503)
    expect(write.body.errors[0].title).toBe('Database File Replaced')
    const health = await call(d, 'GET', '/placemat/v1/health')
    expect(health.status).toBe(503)
    expect(health.body.errors[0].detail).toContain('replaced')
    // The log line may reach the pipe after the answers do.
    await waitFor('the error line in the log', async () => /"level":50[^\n]*deleted or replaced/.test(d.output())).catch(() => undefined)
    expect(d.output()).toMatch(/"level":50[^\n]*deleted or replaced/)
    // A restart does not quietly make an empty database where this one was.
    d.child.kill('SIGTERM')
    await d.exited
    const again = await daemon(db, ['--auth', 'token'])
    expect(await again.exited).toBe(1)
    expect(again.output()).toContain('shows a database was there')
    expect(fs.existsSync(db)).toBe(false)
  })

  it("without an admin token, SQLite's own WAL beside the missing file still shows one was there", async () => {
    const home = fs.mkdtempSync(path.join(dir, 'home-'))
    const db = path.join(home, 'placemat.db')
    const d = await daemon(db)
    await waitFor('serving', serving(d))
    expect((await call(d, 'POST', '/resource_providers', {name: 'kept', uuid: RP})).status).toBe(200)
    fs.rmSync(db)
    expect((await call(d, 'POST', '/resource_providers', {name: 'lost'})).status).toBe(503)
    d.child.kill('SIGTERM')
    await d.exited
    const again = await daemon(db)
    expect(await again.exited).toBe(1)
    expect(again.output()).toMatch(/placemat\.db-(wal|shm) shows a database was there/)
    expect(again.output()).toContain('placemat db init')
  })
})
