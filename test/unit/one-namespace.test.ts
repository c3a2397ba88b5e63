/**
 * One namespace for every name placemat turns into a uuid, as docs/cli/topology.md and
 * docs/cli/apply.md document it
 * (Python: uuid.uuid5(uuid.UUID("3f554320-88f4-4a12-8780-e844d459fa6f"), "rack:rack-1a-01")),
 * and the migration that moves racks, rows and rooms stored under the old one.
 */
import SQLite from 'better-sqlite3'
import {Kysely, SqliteDialect} from 'kysely'
import {describe, expect, it} from 'vitest'
import {legacyNodeUuid, nodeUuid} from '../../src/core/topology.js'
import {NAMES_NAMESPACE, aggregateUuid, uuid5} from '../../src/core/uuids.js'
import {migrations} from '../../src/store/schema.js'

describe('one namespace', () => {
  it('computes a rack, an aggregate and a provider the documented way', () => {
    // The values Python's uuid.uuid5 gives for these names in placemat's namespace.
    expect(NAMES_NAMESPACE).toBe('3f554320-88f4-4a12-8780-e844d459fa6f')
    expect(nodeUuid('rack', 'rack-1a-01')).toBe('098ed887-85a6-5862-a2d8-2bdcc6300327')
    expect(aggregateUuid('rack-b')).toBe('0f997139-a757-5933-847b-15cddf145a6f')
    expect(nodeUuid('row', 'r1')).toBe(uuid5('row:r1', NAMES_NAMESPACE))
  })

  it('migration 0004 moves stored racks, rows and rooms, their memberships and parents, and bumps the members', async () => {
    const db = new Kysely<any>({dialect: new SqliteDialect({database: new SQLite(':memory:')})})
    for (const name of ['0001_initial', '0002_topology', '0003_provider_order']) await migrations[name].up(db)
    const [rack, row] = [legacyNodeUuid('rack', 'k1'), legacyNodeUuid('row', 'r1')]
    const now = Date.now()
    await db
      .insertInto('topology_nodes')
      .values([
        {uuid: row, name: 'r1', level: 'row', parent_uuid: null, created_at: now, updated_at: now},
        {uuid: rack, name: 'k1', level: 'rack', parent_uuid: row, created_at: now, updated_at: now},
      ])
      .execute()
    const host = '00000000-0000-0000-0000-000000000001'
    await db
      .insertInto('resource_providers')
      .values({uuid: host, name: 'cn1', generation: 5, parent_uuid: null, root_uuid: host, created_at: now, updated_at: now, seq: 1})
      .execute()
    await db
      .insertInto('provider_aggregates')
      .values([
        {provider_uuid: host, aggregate_uuid: rack},
        {provider_uuid: host, aggregate_uuid: row},
        {provider_uuid: host, aggregate_uuid: '11111111-1111-1111-1111-111111111111'},
      ])
      .execute()

    await migrations['0004_one_namespace'].up(db)

    const nodes = await db.selectFrom('topology_nodes').select(['uuid', 'parent_uuid', 'name']).orderBy('name').execute()
    expect(nodes).toEqual([
      {uuid: nodeUuid('rack', 'k1'), parent_uuid: nodeUuid('row', 'r1'), name: 'k1'},
      {uuid: nodeUuid('row', 'r1'), parent_uuid: null, name: 'r1'},
    ])
    const aggs = (await db.selectFrom('provider_aggregates').select('aggregate_uuid').execute()).map((r) => r.aggregate_uuid).sort()
    expect(aggs).toEqual([nodeUuid('rack', 'k1'), nodeUuid('row', 'r1'), '11111111-1111-1111-1111-111111111111'].sort())
    expect((await db.selectFrom('resource_providers').select('generation').executeTakeFirst())?.generation).toBe(6)
    await db.destroy()
  })
})
