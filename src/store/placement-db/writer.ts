/**
 * The way back: a placemat cloud written into an empty OpenStack Placement database (its schema
 * made by `placement-manage db sync`), generations included, in one transaction, so that
 * Placement started on it answers as placemat did. Rows are written in multi-row INSERTs of a
 * few hundred, providers parents first (a child's row names its parent's and root's ids).
 */
import {sql, type Kysely} from 'kysely'
import type {Snapshot} from '../../cli/services/state-export.js'
import {STANDARD_RESOURCE_CLASSES} from '../../core/standard.js'
import {beginSnapshot, maskPassword, openPlacement} from './connection.js'
import {placementSchema} from './reader.js'
import {FIRST_CUSTOM_CLASS_ID, SUPPORTED_SCHEMAS, type PlacementTables} from './schema.js'

/** Placement's database already holds a cloud: the way back writes only into an empty one. */
export class PlacementNotEmptyError extends Error {}

export interface PlacementWriteResult {
  placement_schema: string
  providers: number
  consumers: number
  allocations: number
}

const CHUNK = 300

/** Placement's DATETIME columns: UTC, as SQLAlchemy writes them. */
const now = () => new Date().toISOString().replace('T', ' ').replace(/\.\d+Z$/, '')

export async function writePlacement(url: string, snap: Snapshot): Promise<PlacementWriteResult> {
  const {db, url: target} = await openPlacement(url, {write: true})
  try {
    const version = await placementSchema(db)
    return await db.connection().execute(async (c) => {
      // MySQL would take an id of 0 (VCPU's) as "the next one".
      if (target.engine === 'mysql') await sql`set session sql_mode = concat(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')`.execute(c)
      await beginSnapshot(c, target.engine, true)
      try {
        const result = await writeAll(c, snap, url)
        // Rows came with their ids: PostgreSQL's sequences must start after them (MySQL's
        // AUTO_INCREMENT and SQLite's rowids follow by themselves).
        if (target.engine === 'postgresql') {
          for (const table of ['resource_classes', 'traits', 'resource_providers', 'inventories', 'placement_aggregates', 'projects', 'users', 'consumer_types', 'consumers', 'allocations']) {
            await sql
              .raw(`select setval(pg_get_serial_sequence('${table}', 'id'), coalesce((select max(id) from ${table}), 0) + 1, false) where pg_get_serial_sequence('${table}', 'id') is not null`)
              .execute(c)
          }
        }
        await sql`commit`.execute(c)
        return {placement_schema: SUPPORTED_SCHEMAS[version], ...result}
      } catch (err) {
        await sql`rollback`.execute(c).catch(() => undefined)
        throw err
      }
    })
  } finally {
    await db.destroy()
  }
}

async function insertChunks<T extends keyof PlacementTables>(c: Kysely<PlacementTables>, table: T, rows: Array<PlacementTables[T]>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await c.insertInto(table).values(rows.slice(i, i + CHUNK) as any).execute()
}

/** Ids of names (classes, traits, projects, ...) already in a table, and new ones given out after them. */
class Names {
  readonly ids = new Map<string, number>()
  private next: number
  readonly added: Array<{id: number; name: string}> = []

  constructor(rows: Array<{id: number; name: string}>, first = 1) {
    for (const r of rows) this.ids.set(r.name, Number(r.id))
    this.next = Math.max(first, ...rows.map((r) => Number(r.id) + 1))
  }

  id(name: string): number {
    let id = this.ids.get(name)
    if (id === undefined) {
      id = this.next++
      this.ids.set(name, id)
      this.added.push({id, name})
    }
    return id
  }
}

async function writeAll(c: Kysely<PlacementTables>, snap: Snapshot, url: string): Promise<Omit<PlacementWriteResult, 'placement_schema'>> {
  const held = Number((await c.selectFrom('resource_providers').select(sql<number>`count(*)`.as('n')).executeTakeFirst())?.n ?? 0)
  const consumersHeld = Number((await c.selectFrom('consumers').select(sql<number>`count(*)`.as('n')).executeTakeFirst())?.n ?? 0)
  if (held || consumersHeld) {
    throw new PlacementNotEmptyError(
      `${maskPassword(url)} already holds ${held} providers and ${consumersHeld} consumers: the way back writes only into an empty Placement database (made by \`placement-manage db sync\`)`,
    )
  }
  const stamp = now()
  const stamped = {created_at: stamp, updated_at: stamp}

  // Classes: the standard ones with os-resource-classes' ids (as Placement's own start-up gives
  // them), custom ones from 10000; traits and the rest numbered after what the table holds.
  const classRows = await c.selectFrom('resource_classes').select(['id', 'name']).execute()
  const classes = new Names(classRows, FIRST_CUSTOM_CLASS_ID)
  const standard = STANDARD_RESOURCE_CLASSES.map((name, id) => ({id, name})).filter((r) => !classes.ids.has(r.name))
  for (const r of standard) classes.ids.set(r.name, r.id)
  const traits = new Names(await c.selectFrom('traits').select(['id', 'name']).execute())
  const aggregates = new Names((await c.selectFrom('placement_aggregates').select(['id', 'uuid as name']).execute()).filter((r) => r.name !== null) as Array<{id: number; name: string}>)
  const projects = new Names(await c.selectFrom('projects').select(['id', 'external_id as name']).execute())
  const users = new Names(await c.selectFrom('users').select(['id', 'external_id as name']).execute())
  const types = new Names(await c.selectFrom('consumer_types').select(['id', 'name']).execute())
  for (const rc of snap.resource_classes) classes.id(rc)
  for (const t of snap.traits) traits.id(t)

  // Providers, parents first (the snapshot's order), numbered in that order.
  const providerIds = new Map<string, number>()
  const rootIds = new Map<string, number>()
  const providerRows: Array<PlacementTables['resource_providers']> = []
  const inventoryRows: Array<PlacementTables['inventories']> = []
  const traitRows: Array<PlacementTables['resource_provider_traits']> = []
  const aggregateRows: Array<PlacementTables['resource_provider_aggregates']> = []
  for (const p of snap.providers) {
    const id = providerIds.size + 1
    providerIds.set(p.uuid, id)
    const parent = p.parent_provider_uuid === null ? null : providerIds.get(p.parent_provider_uuid)
    if (parent === undefined) throw new Error(`provider ${p.uuid} comes before its parent ${p.parent_provider_uuid}`)
    const root = parent === null ? id : rootIds.get(p.parent_provider_uuid!)!
    rootIds.set(p.uuid, root)
    providerRows.push({...stamped, id, uuid: p.uuid, name: p.name, generation: p.generation, root_provider_id: root, parent_provider_id: parent})
    for (const [rc, inv] of Object.entries(p.inventories)) {
      inventoryRows.push({
        ...stamped,
        id: inventoryRows.length + 1,
        resource_provider_id: id,
        resource_class_id: classes.id(rc),
        total: inv.total,
        reserved: inv.reserved,
        min_unit: inv.min_unit,
        max_unit: inv.max_unit,
        step_size: inv.step_size,
        allocation_ratio: inv.allocation_ratio,
      })
    }
    for (const t of p.traits) traitRows.push({...stamped, trait_id: traits.id(t), resource_provider_id: id})
    for (const a of p.aggregates) aggregateRows.push({...stamped, resource_provider_id: id, aggregate_id: aggregates.id(a)})
  }
  const consumerRows: Array<PlacementTables['consumers']> = []
  const allocationRows: Array<PlacementTables['allocations']> = []
  for (const consumer of snap.consumers) {
    consumerRows.push({
      ...stamped,
      id: consumerRows.length + 1,
      uuid: consumer.uuid,
      project_id: projects.id(consumer.project_id),
      user_id: users.id(consumer.user_id),
      generation: consumer.generation,
      consumer_type_id: consumer.consumer_type ? types.id(consumer.consumer_type) : null,
    })
    for (const [rp, amounts] of Object.entries(consumer.allocations)) {
      const provider = providerIds.get(rp)
      if (provider === undefined) throw new Error(`consumer ${consumer.uuid} has allocations on ${rp}, which is not in the cloud`)
      for (const [rc, used] of Object.entries(amounts)) {
        allocationRows.push({...stamped, id: allocationRows.length + 1, resource_provider_id: provider, consumer_id: consumer.uuid, resource_class_id: classes.id(rc), used})
      }
    }
  }

  await insertChunks(c, 'resource_classes', [...standard, ...classes.added].map((r) => ({...stamped, ...r})))
  await insertChunks(c, 'traits', traits.added.map((r) => ({...stamped, ...r})))
  await insertChunks(c, 'placement_aggregates', aggregates.added.map((r) => ({...stamped, id: r.id, uuid: r.name})))
  await insertChunks(c, 'projects', projects.added.map((r) => ({...stamped, id: r.id, external_id: r.name})))
  await insertChunks(c, 'users', users.added.map((r) => ({...stamped, id: r.id, external_id: r.name})))
  await insertChunks(c, 'consumer_types', types.added.map((r) => ({...stamped, ...r})))
  await insertChunks(c, 'resource_providers', providerRows)
  await insertChunks(c, 'inventories', inventoryRows)
  await insertChunks(c, 'resource_provider_traits', traitRows)
  await insertChunks(c, 'resource_provider_aggregates', aggregateRows)
  await insertChunks(c, 'consumers', consumerRows)
  await insertChunks(c, 'allocations', allocationRows)
  return {providers: providerRows.length, consumers: consumerRows.length, allocations: allocationRows.length}
}
