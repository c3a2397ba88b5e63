/**
 * The way back: a placemat cloud (a State) written into an empty OpenStack Placement database
 * (its schema made by `placement-manage db sync`), generations and times included, in one
 * transaction, so that Placement started on it answers as placemat did. Rows are written as they
 * are made, in multi-row INSERTs of a few hundred: providers parents first (a child's row names
 * its parent's and root's ids), names (classes, traits, aggregates, projects) before the rows
 * that name them.
 */
import {sql, type Kysely} from 'kysely'
import type {Provider, State} from '../../core/state/state.js'
import {STANDARD_RESOURCE_CLASSES} from '../../core/standard.js'
import {beginSnapshot, openPlacement} from './connection.js'
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

export async function writePlacement(url: string, state: State): Promise<PlacementWriteResult> {
  const {db, url: target} = await openPlacement(url, {write: true})
  try {
    const version = await placementSchema(db)
    return await db.connection().execute(async (c) => {
      // MySQL would take an id of 0 (VCPU's) as "the next one".
      if (target.engine === 'mysql') await sql`set session sql_mode = concat(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')`.execute(c)
      await beginSnapshot(c, target.engine, true)
      try {
        const result = await writeAll(c, state)
        // Rows came with their ids: PostgreSQL's sequences must start after them (MySQL's
        // AUTO_INCREMENT and SQLite's rowids follow by themselves).
        if (target.engine === 'postgresql') {
          for (const table of [
            'resource_classes',
            'traits',
            'resource_providers',
            'inventories',
            'placement_aggregates',
            'projects',
            'users',
            'consumer_types',
            'consumers',
            'allocations',
          ]) {
            await sql
              .raw(
                `select setval(pg_get_serial_sequence('${table}', 'id'), coalesce((select max(id) from ${table}), 0) + 1, false) where pg_get_serial_sequence('${table}', 'id') is not null`,
              )
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

/** Rows of one table waiting for their INSERT. */
class Pending<T extends keyof PlacementTables> {
  rows: Array<PlacementTables[T]> = []
  constructor(readonly table: T) {}
  async flush(c: Kysely<PlacementTables>): Promise<void> {
    if (this.rows.length)
      await c
        .insertInto(this.table)
        .values(this.rows as any)
        .execute()
    this.rows = []
  }
}

/** Ids of names (classes, traits, projects, ...) already in a table, and rows for new ones, numbered after them. */
class Names<T extends 'resource_classes' | 'traits' | 'placement_aggregates' | 'projects' | 'users' | 'consumer_types'> {
  readonly ids = new Map<string, number>()
  private next: number
  readonly pending: Pending<T>

  constructor(
    table: T,
    rows: Array<{id: number; name: string}>,
    private readonly row: (id: number, name: string) => PlacementTables[T],
    first = 1,
  ) {
    this.pending = new Pending(table)
    for (const r of rows) this.ids.set(r.name, Number(r.id))
    this.next = Math.max(first, ...rows.map((r) => Number(r.id) + 1))
  }

  id(name: string): number {
    let id = this.ids.get(name)
    if (id === undefined) {
      id = this.next++
      this.add(id, name)
    }
    return id
  }

  add(id: number, name: string): void {
    this.ids.set(name, id)
    this.pending.rows.push(this.row(id, name))
  }
}

async function count(c: Kysely<PlacementTables>, table: 'resource_providers' | 'consumers'): Promise<number> {
  return Number((await c.selectFrom(table).select(sql<number>`count(*)`.as('n')).executeTakeFirst())?.n ?? 0)
}

/** Placement's DATETIME of an epoch-milliseconds time. */
const datetime = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')

async function writeAll(c: Kysely<PlacementTables>, state: State): Promise<Omit<PlacementWriteResult, 'placement_schema'>> {
  const held = await count(c, 'resource_providers')
  const consumersHeld = await count(c, 'consumers')
  if (held || consumersHeld) {
    throw new PlacementNotEmptyError(
      `it already holds ${held} providers and ${consumersHeld} consumers: the way back writes only into an empty Placement database (made by \`placement-manage db sync\`)`,
    )
  }
  const stamp = datetime(Date.now())
  const stamped = {created_at: stamp, updated_at: stamp}

  // Classes: the standard ones with os-resource-classes' ids (as Placement's own start-up gives
  // them), custom ones from 10000; the other names numbered after what their table holds.
  const classes = new Names(
    'resource_classes',
    await c.selectFrom('resource_classes').select(['id', 'name']).execute(),
    (id, name) => ({...stamped, id, name}),
    FIRST_CUSTOM_CLASS_ID,
  )
  STANDARD_RESOURCE_CLASSES.forEach((name, id) => classes.ids.has(name) || classes.add(id, name))
  const traits = new Names('traits', await c.selectFrom('traits').select(['id', 'name']).execute(), (id, name) => ({...stamped, id, name}))
  const aggregateRows = (await c.selectFrom('placement_aggregates').select(['id', 'uuid']).execute()).filter((r) => r.uuid !== null)
  const aggregates = new Names(
    'placement_aggregates',
    aggregateRows.map((r) => ({id: r.id, name: r.uuid!})),
    (id, uuid) => ({...stamped, id, uuid}),
  )
  const projects = new Names(
    'projects',
    await c.selectFrom('projects').select(['id', 'external_id as name']).execute(),
    (id, external_id) => ({...stamped, id, external_id}),
  )
  const users = new Names('users', await c.selectFrom('users').select(['id', 'external_id as name']).execute(), (id, external_id) => ({
    ...stamped,
    id,
    external_id,
  }))
  const types = new Names('consumer_types', await c.selectFrom('consumer_types').select(['id', 'name']).execute(), (id, name) => ({
    ...stamped,
    id,
    name,
  }))
  // Custom classes and traits are carried even when nothing uses them; standard traits are
  // Placement's own (its start-up adds those of its os-traits), but for those providers have.
  for (const name of state.classes.keys()) if (name.startsWith('CUSTOM_')) classes.id(name)
  for (const name of state.traits.keys()) if (name.startsWith('CUSTOM_')) traits.id(name)

  const providers = new Pending('resource_providers')
  const inventories = new Pending('inventories')
  const providerTraits = new Pending('resource_provider_traits')
  const providerAggregates = new Pending('resource_provider_aggregates')
  const consumers = new Pending('consumers')
  const allocations = new Pending('allocations')
  // Parents' rows before their children's (a child names its parent's id), names before the rows naming them.
  const order = [
    classes.pending,
    traits.pending,
    aggregates.pending,
    projects.pending,
    users.pending,
    types.pending,
    providers,
    inventories,
    providerTraits,
    providerAggregates,
    consumers,
    allocations,
  ]
  const flushIfFull = async () => {
    if (order.some((p) => p.rows.length >= CHUNK)) for (const p of order) await p.flush(c)
  }

  // Providers numbered parents first: each root, then its tree depth first.
  const ids = new Map<string, number>()
  let inventoryId = 0
  const write = async (p: Provider, root: number) => {
    const id = ids.size + 1
    ids.set(p.uuid, id)
    const times = {created_at: datetime(p.createdAt), updated_at: datetime(p.updatedAt)}
    providers.rows.push({
      ...times,
      id,
      uuid: p.uuid,
      name: p.name,
      generation: p.generation,
      root_provider_id: root || id,
      parent_provider_id: p.parent === null ? null : ids.get(p.parent)!,
    })
    for (const [rc, inv] of p.inventories) {
      inventories.rows.push({...times, id: ++inventoryId, resource_provider_id: id, resource_class_id: classes.id(rc), ...inv})
    }
    for (const t of p.traits) providerTraits.rows.push({...stamped, trait_id: traits.id(t), resource_provider_id: id})
    for (const a of p.aggregates) providerAggregates.rows.push({...stamped, resource_provider_id: id, aggregate_id: aggregates.id(a)})
    await flushIfFull()
    for (const child of p.children) await write(state.providers.get(child)!, root || id)
  }
  for (const p of state.providers.values()) if (p.parent === null || !state.providers.has(p.parent)) await write(p, 0)

  let consumerId = 0
  let allocationId = 0
  for (const consumer of state.consumers.values()) {
    const times = {created_at: datetime(consumer.createdAt), updated_at: datetime(consumer.updatedAt)}
    consumers.rows.push({
      ...times,
      id: ++consumerId,
      uuid: consumer.uuid,
      project_id: projects.id(consumer.project),
      user_id: users.id(consumer.user),
      generation: consumer.generation,
      consumer_type_id: consumer.type ? types.id(consumer.type) : null,
    })
    for (const [rp, amounts] of consumer.allocations) {
      for (const [rc, used] of amounts) {
        allocations.rows.push({
          ...times,
          id: ++allocationId,
          resource_provider_id: ids.get(rp)!,
          consumer_id: consumer.uuid,
          resource_class_id: classes.id(rc),
          used,
        })
      }
    }
    await flushIfFull()
  }
  for (const p of order) await p.flush(c)
  return {providers: ids.size, consumers: consumerId, allocations: allocationId}
}
