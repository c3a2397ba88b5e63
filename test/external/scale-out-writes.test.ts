/**
 * Three daemons on one PostgreSQL database (and on one MariaDB), eight writers: every claim acknowledged by one node is
 * at once resized (consumer_generation 1) or released on another, as nova's next call does when
 * it lands on another API node. No such write may be refused as if the claim were not there (a
 * release answered 404 leaks the claim; a resize answered "consumer generation conflict" fails the
 * resize): a node answers a write, refused or not, only on a State that holds every write
 * acknowledged before the request arrived. At the end the database holds exactly the claims
 * acknowledged and not released. Needs PostgreSQL or MariaDB (skipped, and said so, without them).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import mysql from 'mysql2/promise'
import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startChurn} from '../helpers/claim-churn.js'
import {placemat} from '../helpers/cli.js'
import {startForeground, until, type ForegroundDaemon} from '../helpers/foreground-daemon.js'
import {mariadbAvailable, startMariadb} from '../helpers/mariadb.js'
import {postgresAvailable, startPostgres} from '../helpers/postgres.js'

if (!postgresAvailable) console.warn('scale-out-writes: skipped on PostgreSQL: none here (PLACEMAT_TEST_PG_URL or the postgresql package)')
if (!mariadbAvailable) console.warn('scale-out-writes: skipped on MariaDB: none here (the mariadb-server package)')

/** A database server of one kind: a new database's URL, the allocations it holds, and stopping it. */
interface Server {
  database(): Promise<string>
  allocations(url: string): Promise<Array<{consumer_uuid: string; provider_uuid: string; resource_class: string; used: number}>>
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
        allocations: async (url) => {
          const client = new pg.Client({connectionString: url})
          await client.connect()
          try {
            return (await client.query('select consumer_uuid, provider_uuid, resource_class, used from allocations')).rows
          } finally {
            await client.end()
          }
        },
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
        allocations: async (url) => {
          const client = await mysql.createConnection(url)
          try {
            const [rows] = await client.query('select consumer_uuid, provider_uuid, resource_class, used from allocations')
            return rows as Array<{consumer_uuid: string; provider_uuid: string; resource_class: string; used: number}>
          } finally {
            await client.end()
          }
        },
        stop: () => server.stop(),
      }
    },
  },
]

const HEADERS = {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json'}
const rp = (i: number) => `b0000000-0000-4000-8000-${String(i).padStart(12, '0')}`
/** Follow-ups to send at least (more show a rarer race; PLACEMAT_TEST_FOLLOW_UPS sets it). */
const FOLLOW_UPS = Number(process.env.PLACEMAT_TEST_FOLLOW_UPS ?? 1500)

describe.each(servers)('writes across three nodes on $kind', ({available, start}) => {
  let server: Server
  const nodes: ForegroundDaemon[] = []
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-scale-out-'))
  beforeAll(async () => {
    if (available) server = await start()
  }, 60_000)
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()))
    await server?.stop()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it.runIf(available)(
    'a resize or release sent to one node right after another acknowledged the claim is never refused as stale',
    async () => {
      const url = await server.database()
      expect((await placemat(['db', 'init', '--db', url])).code).toBe(0)
      // A data directory per node, as on hosts of their own (one pid record each).
      for (let i = 0; i < 3; i++) {
        const home = path.join(dir, `node-${i}`)
        fs.mkdirSync(home)
        nodes.push(await startForeground(['--db', url, '--auth', 'noauth2', '--log-level', 'warn'], {PLACEMAT_HOME: home}))
      }
      for (let i = 1; i <= 12; i++) {
        const on = nodes[i % 3].url
        expect(
          (
            await fetch(`${on}/resource_providers`, {
              method: 'POST',
              headers: HEADERS,
              body: JSON.stringify({uuid: rp(i), name: `host-${i}`}),
            })
          ).status,
        ).toBe(200)
        const inv = {resource_provider_generation: 0, inventories: {VCPU: {total: 100_000}, MEMORY_MB: {total: 100_000_000}}}
        expect(
          (await fetch(`${on}/resource_providers/${rp(i)}/inventories`, {method: 'PUT', headers: HEADERS, body: JSON.stringify(inv)}))
            .status,
        ).toBe(200)
      }
      const churn = startChurn(
        nodes.map((n) => n.url),
        {workers: 8, pauseMs: 0, followUps: 1},
      )
      await until(
        () => churn.report.followUps >= FOLLOW_UPS || churn.report.unexpected.length > 20,
        `${FOLLOW_UPS} follow-ups`,
        170_000,
      ).catch(() => undefined)
      const report = await churn.stop()

      // What the database holds against what the writers were told.
      const held = new Map<string, Record<string, Record<string, number>>>()
      for (const r of await server.allocations(url)) {
        const c = held.get(r.consumer_uuid) ?? {}
        ;(c[r.provider_uuid] ??= {})[r.resource_class] = Number(r.used)
        held.set(r.consumer_uuid, c)
      }
      const same = (a?: Record<string, Record<string, number>>, b?: Record<string, Record<string, number>>) =>
        JSON.stringify(
          Object.entries(a ?? {})
            .sort()
            .map(([p, r]) => [p, Object.entries(r).sort()]),
        ) ===
        JSON.stringify(
          Object.entries(b ?? {})
            .sort()
            .map(([p, r]) => [p, Object.entries(r).sort()]),
        )
      const lost = [...report.held].filter(([consumer, claim]) => !same(held.get(consumer), claim)).map(([c]) => c)
      const leaked = [...held.keys()].filter((c) => !report.held.has(c) && !report.unsure.has(c))

      console.log(
        `scale-out-writes: 3 nodes, 8 writers: answers ${JSON.stringify(report.statuses)}; follow-ups ${report.followUps} ` +
          `(a resize or release on another node right after the claim's 204), stale ${report.stale.length}; unexpected ${report.unexpected.length}; ` +
          `claims held ${report.held.size}, lost ${lost.length}, leaked ${leaked.length}`,
      )
      expect(report.unexpected).toEqual([])
      expect(report.followUps).toBeGreaterThanOrEqual(FOLLOW_UPS)
      expect(report.stale).toEqual([])
      expect(lost).toEqual([])
      expect(leaked).toEqual([])
    },
    240_000,
  )
})

describe('the command line on the file a daemon serves', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-cli-after-daemon-'))
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('resizes and releases, with --db, claims the daemon acknowledged just before', async () => {
    const db = path.join(dir, 'p.db')
    const d = await startForeground(['--db', db, '--auth', 'noauth2', '--log-level', 'warn'], {PLACEMAT_HOME: dir})
    expect(
      (await fetch(`${d.url}/resource_providers`, {method: 'POST', headers: HEADERS, body: JSON.stringify({uuid: rp(1), name: 'host-1'})}))
        .status,
    ).toBe(200)
    const inv = {resource_provider_generation: 0, inventories: {VCPU: {total: 64}}}
    expect(
      (await fetch(`${d.url}/resource_providers/${rp(1)}/inventories`, {method: 'PUT', headers: HEADERS, body: JSON.stringify(inv)}))
        .status,
    ).toBe(200)
    const claim = (consumer: string) =>
      fetch(`${d.url}/allocations/${consumer}`, {
        method: 'PUT',
        headers: HEADERS,
        body: JSON.stringify({
          allocations: {[rp(1)]: {resources: {VCPU: 1}}},
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        }),
      })
    for (let i = 0; i < 4; i++) {
      const consumer = `c0000000-0000-4000-8000-${String(i).padStart(12, '0')}`
      expect((await claim(consumer)).status).toBe(204)
      const cli =
        i % 2
          ? ['allocation', 'delete', consumer, '--db', db]
          : ['allocation', 'set', consumer, '--allocation', `rp=${rp(1)},VCPU=2`, '--db', db]
      const r = await placemat(cli, {env: {PLACEMAT_HOME: dir}})
      expect(r.code, `${cli.join(' ')}: ${r.stderr}`).toBe(0)
    }
    const usages = (await (await fetch(`${d.url}/resource_providers/${rp(1)}/usages`, {headers: HEADERS})).json()) as {
      usages: Record<string, number>
    }
    expect(usages.usages.VCPU).toBe(4) // two resized to 2, two released
  })
})
