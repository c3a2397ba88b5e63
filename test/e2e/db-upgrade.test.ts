/**
 * Schema versions: `placemat db status / upgrade / check` on the committed first-schema
 * fixture (an upgrade loses nothing: its export is still fixtures/db/schema-0001.yaml),
 * and, in process with test-only migrations added to the static list, the upgrade
 * transaction itself: a failing migration changes nothing, a good one runs after a
 * backup, the daemon refuses the old schema and points at `db upgrade`; and the expand and
 * contract of a rolling upgrade from placemat 0.1.0's schema.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import YAML from 'yaml'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {PlacementClient} from '../../src/client/client.js'
import {LocalTransport} from '../../src/cli/backend/local-transport.js'
import {dbStatus} from '../../src/cli/services/db/status.js'
import {dbUpgrade} from '../../src/cli/services/db/upgrade.js'
import {Failure, exitCodeOf} from '../../src/cli/failure.js'
import {exportSnapshot} from '../../src/cli/services/state-export.js'
import {PlainBackend} from '../../src/cli/backend/plain.js'
import {daemonFiles} from '../../src/daemon/paths.js'
import {Kysely, Migrator, SqliteDialect} from 'kysely'
import {RELEASE} from '../../src/store/release.js'
import {BASELINE, SCHEMA_RANGE, migrations} from '../../src/store/schema.js'
import {SchemaOutOfDateError, Store} from '../../src/store/store.js'
import {dumpDb, placemat, ROOT, script} from '../helpers/db-tools.js'
import {dbCheck} from '../../src/cli/services/db/check.js'

const FIXTURE = path.join(ROOT, 'fixtures/db/schema-0001.db')
const FIXTURE_EXPORT = YAML.parse(fs.readFileSync(path.join(ROOT, 'fixtures/db/schema-0001.yaml'), 'utf8'))

let dir: string
let n = 0
/** A fresh copy of the fixture in its own folder. */
const copy = () => {
  const d = path.join(dir, `c${++n}`)
  fs.mkdirSync(d)
  const f = path.join(d, 'placemat.db')
  fs.copyFileSync(FIXTURE, f)
  return f
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-db-'))
})
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

describe('fixtures/db/schema-0001.db', () => {
  it('is in the first schema', () => {
    const raw = new SQLite(FIXTURE, {readonly: true})
    const names = (raw.prepare('select name from kysely_migration order by name').all() as {name: string}[]).map((r) => r.name)
    raw.close()
    expect(names).toEqual(['0001_initial'])
  })

  it('upgrades to the current schema losing nothing (its export is unchanged)', async () => {
    const file = copy()
    const status = await placemat(['db', 'status', '--db', file, '--json'])
    const s = JSON.parse(status.stdout)
    const pending = Object.keys(migrations).filter((m) => m !== '0001_initial')
    expect(s).toMatchObject({schema_version: '0001_initial', pending, integrity_ok: true})
    expect(status.code).toBe(pending.length ? 7 : 0)

    const up = await placemat(['db', 'upgrade', '--db', file, '--json'])
    expect(up.code, up.stderr).toBe(0)
    const r = JSON.parse(up.stdout)
    expect(r.applied).toEqual(pending)
    if (pending.length) expect(dumpDb(r.backup)).toBe(dumpDb(FIXTURE))

    const after = await placemat(['db', 'status', '--db', file, '--json'])
    expect(after.code, after.stderr).toBe(0)
    expect(JSON.parse(after.stdout)).toMatchObject({state: 'current', pending: []})

    const ex = await placemat(['export', '--db', file])
    expect(ex.code, ex.stderr).toBe(0)
    // Later schemas may export more; everything the first one had must still be there.
    expect(YAML.parse(ex.stdout)).toMatchObject(FIXTURE_EXPORT)

    // Placement's checks: the one pre-1.8 consumer is a warning, nothing fails.
    const check = await placemat(['db', 'check', '--db', file, '--json'])
    expect(check.code, check.stdout).toBe(8)
    const failing = JSON.parse(check.stdout).checks.filter((c: any) => c.result !== 'success')
    expect(failing.map((c: any) => [c.name, c.result])).toEqual([['Consumers missing project/user', 'warning']])
  })

  it("db upgrade finds the database as db status and upgrade check do: the data directory's, or placement.conf's", async () => {
    const home = path.dirname(copy())
    const env = {PLACEMAT_HOME: home}
    expect((await placemat(['db', 'status'], {env})).code).toBe(7)
    const up = await placemat(['db', 'upgrade', '--json'], {env})
    expect(up.code, up.stderr).toBe(0)
    expect(JSON.parse(up.stdout).file).toBe(path.join(home, 'placemat.db'))
    expect((await placemat(['db', 'status'], {env})).code).toBe(0)

    const file = copy()
    const conf = path.join(dir, `placement-${n}.conf`)
    fs.writeFileSync(conf, `[placement_database]\nconnection = sqlite:///${file}\n`)
    expect((await placemat(['upgrade', 'check', '--config-file', conf])).code).toBe(1)
    const byConf = await placemat(['db', 'upgrade', '--config-file', conf, '--json'])
    expect(byConf.code, byConf.stderr).toBe(0)
    expect(JSON.parse(byConf.stdout).file).toBe(file)
    expect((await placemat(['db', 'status', '--db', file])).code).toBe(0)
  })

  it('is what scripts/make-schema-0001-fixture.mjs writes (while 0001 is the newest schema)', async () => {
    if (Object.keys(migrations).length > 1) return // the script refuses then: the committed file is the record
    const out = path.join(dir, 'regen', 'schema-0001.db')
    const r = await script('scripts/make-schema-0001-fixture.mjs', [out])
    expect(r.code, r.stderr).toBe(0)
    expect(dumpDb(out)).toBe(dumpDb(FIXTURE))
    expect(YAML.parse(fs.readFileSync(out.replace(/\.db$/, '.yaml'), 'utf8'))).toEqual(FIXTURE_EXPORT)
  })
})

describe('the upgrade transaction (test-only migrations)', () => {
  /** The real migrations after the first, which the fixture also needs. */
  const real = Object.keys(migrations).filter((m) => m !== '0001_initial')
  const added: string[] = []
  const addMigration = (name: string, up: (db: any) => Promise<void>) => {
    ;(migrations as Record<string, any>)[name] = {up}
    added.push(name)
  }
  afterEach(() => {
    for (const m of added.splice(0)) delete (migrations as Record<string, any>)[m]
  })

  const exportOf = async (file: string) => {
    const client = new PlacementClient(await LocalTransport.open(file))
    try {
      return await exportSnapshot(new PlainBackend(client))
    } finally {
      await client.close()
    }
  }

  it('the daemon refuses a file with pending migrations and points at db upgrade', async () => {
    const file = copy()
    addMigration('9999_test_column', async (db) => {
      await db.schema.alterTable('consumers').addColumn('note', 'text').execute()
    })
    const err = await Store.open(file).catch((e) => e)
    expect(err).toBeInstanceOf(SchemaOutOfDateError)
    expect(err.message).toContain(`run \`placemat db upgrade --db ${file}\` first`)
    expect(await dbStatus(file)).toMatchObject({state: 'upgrade-needed', pending: [...real, '9999_test_column']})
    expect((await dbCheck(file))[0]).toMatchObject({name: 'Schema version', result: 'failure'})
  })

  it('a failing migration leaves the file exactly as it was', async () => {
    const file = copy()
    const before = dumpDb(file)
    addMigration('9998_test_ok_first', async (db) => {
      await db.schema.createTable('scratch').addColumn('id', 'integer').execute()
      await db.insertInto('scratch').values({id: 1}).execute()
    })
    addMigration('9999_test_fails', async (db) => {
      await db.schema.alterTable('consumers').addColumn('note', 'text').execute()
      throw new Error('boom')
    })
    const err = await dbUpgrade(file, {backup: false}).catch((e) => e)
    expect(err).toBeInstanceOf(Failure)
    expect(exitCodeOf(err)).toBe(1)
    expect(err.message).toMatch(/migration 9999_test_fails failed: boom; nothing was changed/)
    expect(dumpDb(file)).toBe(before)
    expect((await dbStatus(file)).pending).toEqual([...real, '9998_test_ok_first', '9999_test_fails'])
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.includes('backup'))).toEqual([])
  })

  it('a good migration runs after a backup and loses nothing', async () => {
    const file = copy()
    const before = dumpDb(file)
    addMigration('9999_test_column', async (db) => {
      await db.schema
        .alterTable('consumers')
        .addColumn('note', 'text', (c: any) => c.notNull().defaultTo(''))
        .execute()
    })
    const r = await dbUpgrade(file, {backup: true})
    expect(r).toMatchObject({from: '0001_initial', to: '9999_test_column', applied: [...real, '9999_test_column']})
    expect(r.backup).toMatch(/placemat\.db\.backup-0001_initial-\d{8}T\d{6}$/)
    expect(dumpDb(r.backup!)).toBe(before)
    expect((await dbStatus(file)).state).toBe('current')
    expect(await exportOf(file)).toMatchObject(FIXTURE_EXPORT)
    // Nothing left to do the second time.
    expect(await dbUpgrade(file, {backup: true})).toMatchObject({applied: [], backup: null})
    // An older placemat (without that migration) sees a newer file and will not touch it.
    delete (migrations as Record<string, any>)['9999_test_column']
    expect(await dbStatus(file)).toMatchObject({state: 'newer', unknown: ['9999_test_column']})
    await expect(dbUpgrade(file, {backup: false})).rejects.toMatchObject({kind: 'error', message: expect.stringMatching(/newer placemat/)})
  })

  it('refuses while a daemon serves the file', async () => {
    const file = copy()
    addMigration('9999_test_column', async (db) => {
      await db.schema.alterTable('consumers').addColumn('note', 'text').execute()
    })
    // The pid record a daemon writes beside its database, naming a live process (the test runner's).
    fs.writeFileSync(daemonFiles(file).pid, JSON.stringify({pid: process.ppid, url: 'http://127.0.0.1:1', db: file}))
    await expect(dbUpgrade(file, {backup: false})).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringMatching(/a daemon serves/),
    })
    expect((await dbStatus(file)).pending).toEqual([...real, '9999_test_column'])
  })

  it('a record naming the upgrading process itself is no daemon (a killed container left pid 1 on the volume)', async () => {
    const file = copy()
    addMigration('9999_test_column', async (db) => {
      await db.schema.alterTable('consumers').addColumn('note', 'text').execute()
    })
    fs.writeFileSync(daemonFiles(file).pid, JSON.stringify({pid: process.pid, url: 'http://127.0.0.1:1', db: file}))
    expect((await dbStatus(file)).daemon).toBeNull()
    expect(await dbUpgrade(file, {backup: false})).toMatchObject({to: '9999_test_column'})
  })
})

describe('placemat db check', () => {
  it('finds broken trees, dangling rows and overcommit; exit 9', async () => {
    const file = copy()
    const raw = new SQLite(file)
    raw.exec(`
      update resource_providers set root_uuid = '' where name = 'cn1_numa1';
      update resource_providers set parent_uuid = 'ffffffff-0000-4000-8000-000000000000' where name = 'cn2';
      insert into allocations values ('99999999-0000-4000-8000-000000000001', 'c0000002-0000-4000-8000-000000000001', 'VCPU', 100);
      insert into allocations values ('11111111-0000-4000-8000-000000000001', 'c0000002-0000-4000-8000-000000000001', 'DISK_GB', 5);
    `)
    raw.close()
    const r = await placemat(['db', 'check', '--db', file, '--json'])
    expect(r.code, r.stderr).toBe(9)
    const by = Object.fromEntries(JSON.parse(r.stdout).checks.map((c: any) => [c.name, c]))
    expect(by['Missing Root Provider IDs']).toMatchObject({
      result: 'failure',
      details: [expect.stringContaining('cn1_numa1) has no root provider id')],
    })
    expect(by['Provider trees'].details).toEqual([
      expect.stringContaining('cn2): parent ffffffff-0000-4000-8000-000000000000 does not exist'),
    ])
    expect(by['Incomplete Consumers']).toMatchObject({
      result: 'warning',
      details: [expect.stringContaining('99999999-0000-4000-8000-000000000001')],
    })
    expect(by['Allocations without inventory'].details).toEqual([expect.stringContaining('5 DISK_GB allocated on cn2')])
    expect(by['Allocations over capacity']).toMatchObject({
      result: 'warning',
      details: [expect.stringMatching(/^VCPU on cn2 .*: 107 allocated, capacity 32$/), expect.any(String)],
    })

    const text = await placemat(['db', 'check', '--db', file])
    expect(text.code).toBe(9)
    expect(text.stdout).toMatch(/^Missing Root Provider IDs +FAILURE$/m)
  })

  it('a clean file passes every check; a missing file is exit 3', async () => {
    const file = path.join(dir, 'clean.db')
    expect((await script('scripts/setup-vgpu-fixture.mjs', ['--db', file])).code).toBe(0)
    const r = await placemat(['db', 'check', '--db', file])
    expect(r.code, r.stdout).toBe(0)
    expect(
      r.stdout
        .trim()
        .split('\n')
        .every((l) => l.endsWith('SUCCESS')),
    ).toBe(true)
    const missing = await placemat(['db', 'status', '--db', path.join(dir, 'nope.db')])
    expect(missing.code).toBe(3)
    expect(missing.stderr).toBe(`placemat: no database file at ${path.join(dir, 'nope.db')}\n`)
  })
})

describe("expand and contract: from placemat 0.1.0's schema while a node serves", () => {
  /** A fresh copy of the fixture migrated to placemat 0.1.0's schema (the baseline), as that release left it. */
  const atBaseline = async () => {
    const file = copy()
    const raw = new SQLite(file)
    const db = new Kysely<any>({dialect: new SqliteDialect({database: raw})})
    const {error} = await new Migrator({db, provider: {getMigrations: async () => migrations}}).migrateTo(BASELINE)
    await db.destroy()
    if (error) throw error
    return file
  }
  const node = (url: string) => ({
    release: RELEASE,
    schemaFrom: SCHEMA_RANGE.from,
    schemaTo: SCHEMA_RANGE.to,
    host: os.hostname(),
    pid: process.pid,
    url,
    startedAt: Date.now(),
  })

  it('--expand runs while a daemon of the release before serves; --contract waits until none is left', async () => {
    const file = await atBaseline()
    const refused = await Store.open(file).catch((e) => e)
    expect(refused).toBeInstanceOf(SchemaOutOfDateError)
    expect(refused.message).toContain(`run \`placemat db upgrade --expand --db ${file}\` first`)
    // A daemon of 0.1.0 (its pid record, naming a live process: this one's parent), never registered.
    fs.writeFileSync(daemonFiles(file).pid, JSON.stringify({pid: process.ppid, url: 'http://127.0.0.1:1', db: file}))
    await expect(dbUpgrade(file, {backup: false})).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringContaining('or run `placemat db upgrade --expand` while it serves'),
    })

    const expanded = await dbUpgrade(file, {backup: true, phase: 'expand'})
    expect(expanded).toMatchObject({applied: ['0012_nodes', '0013_keyed_check_v2'], pending: ['0014_retire_keyed_check_v1']})
    expect(expanded.backup).toMatch(/backup-0011_change_images-/)
    const status = await dbStatus(file)
    expect(status).toMatchObject({serves: true, pending_expand: [], pending_contract: ['0014_retire_keyed_check_v1'], min_release: null})
    expect(status.nodes.unregistered).toEqual([{where: os.hostname(), pid: process.ppid, url: 'http://127.0.0.1:1'}])
    // Nothing more to expand.
    expect(await dbUpgrade(file, {backup: false, phase: 'expand'})).toMatchObject({applied: []})

    const contract = await dbUpgrade(file, {backup: false, phase: 'contract'}).catch((e) => e)
    expect(contract).toMatchObject({kind: 'conflict'})
    expect(exitCodeOf(contract)).toBe(4)
    expect(contract.message).toContain(`refusing to contract ${file}: 1 node(s) of a release before placemat ${RELEASE} serve it`)
    expect(contract.message).toContain(
      `release before ${RELEASE} (not registered) on ${os.hostname()}, pid ${process.ppid}, http://127.0.0.1:1`,
    )
    expect((await dbStatus(file)).pending_contract).toEqual(['0014_retire_keyed_check_v1'])

    // This release serves it before its contract, and once registered under its pid record is no obstacle.
    const store = await Store.open(file)
    try {
      const counter = () => {
        const raw = new SQLite(file, {readonly: true})
        try {
          return (raw.prepare("select value from placemat_meta where key = 'change_counter'").get() as {value: string}).value
        } finally {
          raw.close()
        }
      }
      const before = counter()
      // Registered as the daemon its pid record names.
      await store.join({...node('http://127.0.0.1:1'), pid: process.ppid})
      await store.beat()
      // Beats are outside the journal: the counter other nodes follow does not move.
      expect(counter()).toBe(before)
      expect((await dbStatus(file)).nodes).toMatchObject({registered: [{release: RELEASE, pid: process.ppid}], unregistered: []})
      const contracted = await dbUpgrade(file, {backup: false, phase: 'contract'})
      expect(contracted).toMatchObject({applied: ['0014_retire_keyed_check_v1'], pending: []})
      expect(await dbStatus(file)).toMatchObject({
        state: 'current',
        serves: true,
        min_release: {release: RELEASE, migration: '0014_retire_keyed_check_v1'},
      })
      await store.beat()
      expect(store.schemaRefusal).toBeNull()
    } finally {
      await store.close()
    }
    // A node that stops removes itself; one that died ages out 30 s after its last beat.
    expect((await dbStatus(file)).nodes.registered).toEqual([])
    const raw = new SQLite(file)
    const row = (id: string, beat: number) =>
      raw
        .prepare(
          'insert into placemat_nodes (id, release, schema_from, schema_to, host, pid, url, started_at, beat_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(id, RELEASE, 'a', 'b', 'h', 1, 'u', beat - 60_000, beat)
    row('dead', Date.now() - 31_000)
    row('alive', Date.now() - 1000)
    raw.close()
    expect((await dbStatus(file)).nodes.registered.map((n) => n.id)).toEqual(['alive'])
  })

  it('--expand refuses a database older than the baseline (its migrations are not made for nodes serving)', async () => {
    await expect(dbUpgrade(copy(), {backup: false, phase: 'expand'})).rejects.toMatchObject({
      message: expect.stringContaining("is older than placemat 0.1.0's schema"),
    })
  })

  it("a running node sees a newer release's contract at its heartbeat; a node of this release will not start on it", async () => {
    const file = copy()
    await dbUpgrade(file, {backup: false})
    const store = await Store.open(file)
    try {
      await store.join(node('http://127.0.0.1:2'))
      expect(store.schemaRefusal).toBeNull()
      const raw = new SQLite(file)
      raw
        .prepare("update placemat_meta set value = ? where key = 'min_release'")
        .run(JSON.stringify({release: '0.3.0', migration: '0015_later'}))
      raw.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('0015_later', new Date().toISOString())
      raw.close()
      const refusal = `database ${file} was contracted by placemat 0.3.0 (0015_later): it needs placemat 0.3.0 or later; this is placemat ${RELEASE}`
      await store.beat()
      expect(store.schemaRefusal).toBe(refusal)
      const again = await Store.open(file).catch((e) => e)
      expect(again).toBeInstanceOf(SchemaOutOfDateError)
      expect(again.message).toBe(refusal)
    } finally {
      await store.close()
    }
  })
})
