/**
 * `placemat upgrade check` on the real binary, as deployment tools run `placement-status upgrade
 * check`: oslo.upgradecheck's table or JSON, and its exit codes: 0 a fresh database, 1 a schema
 * older than this release's (run db upgrade), one a newer placemat expanded, or incomplete
 * consumers, 2 a schema a newer placemat contracted, 255 a database that cannot be read; a node of
 * another release serving the database is a warning.
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import os from 'node:os'
import SQLite from 'better-sqlite3'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {writeRecord} from '../../src/daemon/control.js'
import {buildApp} from '../../src/http/app.js'
import {Store} from '../../src/store/store.js'
import {ROOT, placemat} from '../helpers/cli.js'
import {startForeground} from '../helpers/foreground-daemon.js'
import {postgresAvailable, startPostgres, type TestPostgres} from '../helpers/postgres.js'
import {tempFiles} from '../helpers/temp-files.js'

if (!postgresAvailable)
  console.warn('cli-upgrade-check.test.ts: no PostgreSQL here (apt-get install postgresql): its PostgreSQL test is skipped')

const newDb = tempFiles('placemat-upgrade-check-')
const check = (args: string[], env: Record<string, string> = {}) => placemat(['upgrade', 'check', ...args, '--json'], {env})
type Report = {name: string; checks: Array<{check: string; result: number; details: string | null}>}
const results = (stdout: string) => Object.fromEntries((JSON.parse(stdout) as Report).checks.map((c) => [c.check, c.result]))
const detailsOf = (stdout: string, name: string) => (JSON.parse(stdout) as Report).checks.find((c) => c.check === name)!.details

async function freshDb(): Promise<string> {
  const file = newDb()
  const init = await placemat(['db', 'init', '--db', file])
  expect(init.code, init.stderr).toBe(0)
  return file
}

describe('placemat upgrade check', () => {
  it("a fresh database: every check succeeds, exit 0, in placement-status's table", async () => {
    const file = await freshDb()
    const r = await placemat(['upgrade', 'check', '--db', file])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^\+-+\+$/)
    expect(lines[1]).toMatch(/^\| Upgrade Check Results +\|$/)
    expect(r.stdout).toContain('| Check: Schema Migrations')
    expect(r.stdout).toContain('| Check: Missing Root Provider IDs')
    expect(r.stdout).toContain('| Check: Incomplete Consumers')
    expect(r.stdout).toContain('| Result: Success')
    expect(r.stdout).toContain('| Details: None')
    expect(r.stdout).not.toContain('Warning')
    for (const l of lines) expect(l.length).toBe(lines[0].length)
    const json = await check(['--db', file])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({
      name: 'Upgrade Check Results',
      checks: expect.arrayContaining([{check: 'Schema Migrations', result: 0, details: null}]),
    })
  })

  it('a database of an earlier release: a warning (1) that says to run db upgrade; after it, 0', async () => {
    const file = newDb()
    fs.copyFileSync(path.join(ROOT, 'fixtures/db/schema-0001.db'), file)
    const r = await check(['--db', file])
    expect(r.code, r.stderr).toBe(1)
    expect(results(r.stdout)['Schema Migrations']).toBe(1)
    expect(detailsOf(r.stdout, 'Schema Migrations')).toContain(`run "placemat db upgrade --db ${file}"`)
    expect((await placemat(['db', 'upgrade', '--db', file])).code).toBe(0)
    expect(results((await check(['--db', file])).stdout)['Schema Migrations']).toBe(0)
  })

  it('a database a newer placemat expanded: a warning (1), served until its contract; contracted: a failure (2)', async () => {
    const file = await freshDb()
    const raw = new SQLite(file)
    raw.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('9999_from_the_future', new Date().toISOString())
    const expanded = await check(['--db', file])
    expect(expanded.code).toBe(1)
    expect(detailsOf(expanded.stdout, 'Schema Migrations')).toContain('A newer placemat expanded it (migrations 9999_from_the_future')
    raw
      .prepare("update placemat_meta set value = ? where key = 'min_release'")
      .run(JSON.stringify({release: '9.0.0', migration: '9999_from_the_future'}))
    raw.close()
    const r = await check(['--db', file])
    expect(r.code).toBe(2)
    expect(results(r.stdout)['Schema Migrations']).toBe(2)
    expect(detailsOf(r.stdout, 'Schema Migrations')).toContain(
      'contracted by placemat 9.0.0 (9999_from_the_future): it needs placemat 9.0.0 or later',
    )
  })

  it('consumers written before microversion 1.8 (the incomplete-consumer project and user): a warning (1)', async () => {
    const file = await freshDb()
    const store = await Store.open(file)
    const app = await buildApp({store, auth: 'trusted'})
    try {
      const call = async (method: string, url: string, body: unknown, mv = 'latest') =>
        (
          await app.inject({
            method: method as 'PUT',
            url,
            headers: {'openstack-api-version': `placement ${mv}`, 'content-type': 'application/json'},
            payload: JSON.stringify(body),
          })
        ).statusCode
      const rp = 'a0000000-0000-4000-8000-000000000001'
      expect(await call('POST', '/resource_providers', {uuid: rp, name: 'cn1'})).toBe(200)
      expect(
        await call('PUT', `/resource_providers/${rp}/inventories`, {resource_provider_generation: 0, inventories: {VCPU: {total: 8}}}),
      ).toBe(200)
      const old = {allocations: [{resource_provider: {uuid: rp}, resources: {VCPU: 1}}]}
      expect(await call('PUT', '/allocations/c0000000-0000-4000-8000-000000000001', old, '1.7')).toBe(204)
    } finally {
      await app.close()
      await store.close()
    }
    const r = await check(['--db', file])
    expect(r.code, r.stderr).toBe(1)
    expect(results(r.stdout)).toMatchObject({'Schema Migrations': 0, 'Incomplete Consumers': 1})
    expect(detailsOf(r.stdout, 'Incomplete Consumers')).toMatch(
      /^1 consumer\(s\) have the incomplete-consumer project or user \(00000000-0000-0000-0000-000000000000\)/,
    )
  })

  it("no database, or one that is not placemat's: the checks cannot run (255), one line on stderr", async () => {
    const missing = path.join(path.dirname(newDb()), 'nothing-here.db')
    const r = await check(['--db', missing])
    expect(r.code).toBe(255)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(`placemat: no database file at ${missing}\n`)
    const other = newDb()
    const raw = new SQLite(other)
    raw.exec('create table alembic_version (version_num text); create table resource_providers (id integer)')
    raw.close()
    const foreign = await check(['--db', other])
    expect(foreign.code).toBe(255)
    expect(foreign.stderr).toContain("is an OpenStack Placement database, not placemat's")
    const conf = path.join(path.dirname(other), 'placement.conf')
    // A MariaDB nobody answers at (SQLAlchemy's form, taken as placemat's): named without its password.
    fs.writeFileSync(conf, '[placement_database]\nconnection = mysql+pymysql://placement:s3cret@127.0.0.1:1/placement\n')
    const mysql = await check(['--config-file', conf])
    expect(mysql.code).toBe(255)
    expect(mysql.stderr).not.toContain('s3cret')
  })

  describe('a daemon serving the database', () => {
    let older: http.Server
    let olderUrl: string
    beforeAll(async () => {
      // A daemon of an earlier release: its health answer has no schema.
      older = http.createServer((_req, res) =>
        res
          .writeHead(200, {'content-type': 'application/json'})
          .end(JSON.stringify({status: 'ok', database: 'ok', journal: {position: 1, head: 1, lag: 0}})),
      )
      await new Promise<void>((r) => older.listen(0, '127.0.0.1', () => r()))
      olderUrl = `http://127.0.0.1:${(older.address() as {port: number}).port}`
    })
    afterAll(() => new Promise<void>((r) => older.close(() => r())))

    it('of this release: success; of an earlier one: a warning (1) to restart it', async () => {
      const file = await freshDb()
      const d = await startForeground(['--db', file], {PLACEMAT_HOME: path.dirname(file)})
      try {
        const r = await check(['--db', file])
        expect(r.code, r.stdout).toBe(0)
      } finally {
        await d.stop()
      }
      writeRecord(file, {pid: process.pid, url: olderUrl, db: file})
      const r = await check(['--db', file])
      expect(r.code, r.stdout).toBe(1)
      expect(results(r.stdout)['Nodes Serving the Database']).toBe(1)
      expect(detailsOf(r.stdout, 'Nodes Serving the Database')).toContain(
        `release before 0.2.0 (not registered) on ${os.hostname()}, pid ${process.pid}, ${olderUrl}`,
      )
    })
  })

  describe.skipIf(!postgresAvailable)('on PostgreSQL', () => {
    let server: TestPostgres
    beforeAll(async () => {
      server = await startPostgres()
    }, 60000)
    afterAll(() => server?.stop())

    it('a fresh database by its URL, and by PLACEMAT_DB_FILE: 0; the password in no output', async () => {
      const url = (await server.database()).replace('://postgres@', '://postgres:s3cret-uc@')
      const home = path.dirname(newDb())
      expect((await placemat(['db', 'init', '--db', url], {env: {PLACEMAT_HOME: home}})).code).toBe(0)
      const r = await check(['--db', url], {PLACEMAT_HOME: home})
      expect(r.code, r.stderr).toBe(0)
      const secret = path.join(home, 'db-url')
      fs.writeFileSync(secret, `${url}\n`)
      const viaFile = await placemat(['upgrade', 'check'], {env: {PLACEMAT_HOME: home, PLACEMAT_DB_FILE: secret}})
      expect(viaFile.code, viaFile.stderr).toBe(0)
      expect(r.stdout + r.stderr + viaFile.stdout + viaFile.stderr).not.toContain('s3cret-uc')
    })

    it('db init on a database that holds placemat already: exit 4, nothing changed, the password in no output', async () => {
      const url = (await server.database()).replace('://postgres@', '://postgres:s3cret-init@')
      const first = await placemat(['db', 'init', '--db', url])
      expect(first.code, first.stderr).toBe(0)
      expect((await placemat(['provider', 'create', 'kept', '--db', url])).code).toBe(0)
      const again = await placemat(['db', 'init', '--db', url])
      expect(again.code).toBe(4)
      expect(again.stderr).toContain('exists already; nothing was changed')
      expect(first.stdout + first.stderr + again.stdout + again.stderr).not.toContain('s3cret-init')
      expect((await placemat(['provider', 'show', 'kept', '--db', url])).code).toBe(0)
    })
  })
})
