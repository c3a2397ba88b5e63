/**
 * A batch larger than one Galera write set may be (wsrep_max_ws_size): placemat's connections to
 * a Galera node replicate a transaction in fragments once it outgrows one (streaming
 * replication), so `import` and `apply` of a cloud commit whole however large, and every node
 * holds all of it. The cluster runs with a 4 MiB bound here, which a plain transaction of a few
 * MiB already breaks, so a cloud of 20,000 providers shows it in seconds.
 */
import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat, ROOT} from '../helpers/cli.js'
import {galeraAvailable, startGalera, type TestGalera} from '../helpers/galera.js'

if (!galeraAvailable) console.warn('galera-large-writes.test.ts: no mariadb-server, galera-4 and rsync here: skipped')

const MAX_WS_SIZE = 4 * 1024 * 1024
const PROVIDERS = 20_000

describe.skipIf(!galeraAvailable)('writes larger than a Galera write set', () => {
  let cluster: TestGalera
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-galera-large-'))
  beforeAll(async () => {
    cluster = await startGalera({maxWsSize: MAX_WS_SIZE})
  }, 180_000)
  afterAll(async () => {
    await cluster?.stopAll()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it('imports and applies a cloud of several write sets in one transaction each, on every node', {timeout: 240_000}, async () => {
    // The bound is real: a plain transaction of about 6 MiB is refused at COMMIT.
    await cluster.database('plain')
    await cluster.sql(0, 'create table plain.big (id int primary key, v varchar(200) not null)')
    await expect(cluster.sql(0, "insert into plain.big select seq, repeat('x', 100) from seq_1_to_60000")).rejects.toThrow()
    expect(await cluster.sql(1, 'set session wsrep_sync_wait = 1; select count(*) from plain.big')).toBe('0\n')

    const snapshot = path.join(dir, 'cloud.json')
    const applyFile = path.join(dir, 'apply.json')
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/gen-huge.mjs'), '--snapshot', snapshot, String(PROVIDERS)], {stdio: 'ignore'})
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/gen-huge.mjs'), '--apply', applyFile, String(PROVIDERS)], {stdio: 'ignore'})
    expect(fs.statSync(snapshot).size).toBeGreaterThan(4 * MAX_WS_SIZE)

    const imported = await cluster.database('imported')
    const init = await placemat(['db', 'init', '--db', imported[0]])
    expect(init.code, init.stderr).toBe(0)
    const imp = await placemat(['import', snapshot, '--db', imported[0]])
    expect(imp.code, imp.stderr).toBe(0)

    const applied = await cluster.database('applied')
    expect((await placemat(['db', 'init', '--db', applied[0]])).code).toBe(0)
    const app = await placemat(['apply', applyFile, '--db', applied[0]])
    expect(app.code, app.stderr).toBe(0)

    // Every node holds every provider and inventory, read on the nodes that did not write.
    for (const node of [1, 2]) {
      for (const db of ['imported', 'applied']) {
        const counts = await cluster.sql(
          node,
          `set session wsrep_sync_wait = 1; select (select count(*) from ${db}.resource_providers), (select count(*) from ${db}.inventories)`,
        )
        expect(counts, `${db} on node ${node}`).toBe(`${PROVIDERS}\t${PROVIDERS * 3}\n`)
      }
    }
    // And a daemon's view of them, through the command line on another node.
    const hosts = await placemat(['host', 'list', '--db', imported[2], '--json'])
    expect(hosts.code, hosts.stderr).toBe(0)
    expect(JSON.parse(hosts.stdout).hosts).toHaveLength(PROVIDERS)
  })
})
