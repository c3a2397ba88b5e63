/**
 * The Galera test cluster itself (test/helpers/galera.ts; skipped, saying so, where MariaDB's
 * Galera is not installed): three nodes replicate a write made on any of them, a node killed and
 * started again catches up (IST), and two nodes killed take the quorum away from the third until
 * they are back.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {galeraAvailable, startGalera, type TestGalera} from '../helpers/galera.js'

if (!galeraAvailable) console.warn('galera-cluster.test.ts: no mariadb-server, galera-4 and rsync here: skipped')

describe.skipIf(!galeraAvailable)('a three-node Galera cluster', () => {
  let cluster: TestGalera

  beforeAll(async () => {
    cluster = await startGalera()
  }, 240000)

  afterAll(async () => {
    await cluster?.stopAll()
  }, 120000)

  it('replicates a write on one node to the others, and a node killed catches up', {timeout: 180000}, async () => {
    const urls = await cluster.database('galera_t')
    expect(urls).toEqual(cluster.nodes.map((n) => `mysql://root@127.0.0.1:${n.port}/galera_t`))
    await cluster.sql(0, 'create table galera_t.items (id int primary key, name varchar(40) not null)')
    await cluster.sql(1, "insert into galera_t.items values (1, 'one')")
    expect(await cluster.sql(2, 'set session wsrep_sync_wait=1; select id, name from galera_t.items')).toBe('1\tone\n')
    for (let i = 0; i < 3; i++) expect(await cluster.status(i)).toMatchObject({ready: true, clusterSize: 3, state: 'Synced', primary: true})

    await cluster.kill(2)
    await cluster.sql(0, "insert into galera_t.items values (2, 'two'), (3, 'three')")
    await cluster.restart(2)
    expect(await cluster.sql(2, 'set session wsrep_sync_wait=1; select count(*) from galera_t.items')).toBe('3\n')
    expect(await cluster.status(2)).toMatchObject({ready: true, clusterSize: 3, state: 'Synced'})
  })

  it('loses its quorum with two nodes of three killed, and regains it when they are back', {timeout: 180000}, async () => {
    await cluster.kill(1)
    await cluster.kill(2)
    let left = await cluster.status(0)
    for (let t = 0; left.primary && t < 120; t++) {
      await new Promise((r) => setTimeout(r, 250))
      left = await cluster.status(0)
    }
    expect(left).toMatchObject({ready: false, primary: false, clusterSize: 1})
    await expect(cluster.sql(0, 'select count(*) from galera_t.items')).rejects.toThrow(/WSREP has not yet prepared node/)

    await Promise.all([cluster.restart(1), cluster.restart(2)])
    for (let i = 0; i < 3; i++) expect(await cluster.status(i)).toMatchObject({ready: true, clusterSize: 3, primary: true})
    await cluster.sql(1, "insert into galera_t.items values (4, 'four')")
    expect(await cluster.sql(0, 'set session wsrep_sync_wait=1; select count(*) from galera_t.items')).toBe('4\n')
  })
})
