/**
 * A running Placement's cloud read straight from its database, in one read-only transaction
 * that sees one consistent state, as the items of a snapshot (what `placemat import` writes):
 * custom classes, traits, then providers and consumers page by page (a few thousand rows at a
 * time, by primary key), so memory holds one page, whatever the size of the cloud.
 */
import {sql, type Kysely} from 'kysely'
import type {SnapshotConsumer, SnapshotItem, SnapshotProvider} from '../../core/snapshot-format.js'
import {withDefaults} from '../../core/placement/inventories.js'
import {STANDARD_TRAITS} from '../../core/standard.js'
import {beginSnapshot, openPlacement, type PlacementEngine} from './connection.js'
import {SUPPORTED_SCHEMAS, type PlacementTables} from './schema.js'

const PAGE = 2000
const STANDARD = new Set(STANDARD_TRAITS)

/** Placement's database is not one placemat reads (no schema, another version of it, inconsistent rows); the message leaves the URL to the caller to name. */
export class PlacementSchemaError extends Error {}

export interface PlacementSource {
  /** The release whose schema the database has. */
  release: string
  items: AsyncGenerator<SnapshotItem>
}

/** The schema version (alembic head) of Placement's database, or why it is not one. */
export async function placementSchema(db: Kysely<PlacementTables>): Promise<string> {
  let rows: Array<{version_num: string}>
  try {
    rows = await db.selectFrom('alembic_version').select('version_num').execute()
  } catch {
    throw new PlacementSchemaError(
      'it has no alembic_version table: not an OpenStack Placement database (or one never made by `placement-manage db sync`)',
    )
  }
  const version = rows[0]?.version_num
  if (!version || !(version in SUPPORTED_SCHEMAS)) {
    const known = Object.entries(SUPPORTED_SCHEMAS)
      .map(([v, r]) => `${v} (${r})`)
      .join(', ')
    throw new PlacementSchemaError(`its schema version is ${version ?? 'empty'}; placemat reads Placement's ${known}`)
  }
  return version
}

/**
 * The cloud in Placement's database at `url`, read in one consistent read-only transaction.
 * Throws PlacementSchemaError before the first item when it is not a database placemat reads.
 */
export async function readPlacement(url: string): Promise<PlacementSource> {
  const {db, url: target} = await openPlacement(url, {write: false})
  try {
    const version = await placementSchema(db)
    return {release: SUPPORTED_SCHEMAS[version], items: itemsOf(db, target.engine)}
  } catch (err) {
    await db.destroy()
    throw err
  }
}

async function* itemsOf(db: Kysely<PlacementTables>, engine: PlacementEngine): AsyncGenerator<SnapshotItem> {
  // kysely lends a connection to a callback: the callback waits until the last page is read,
  // so that one connection, and one transaction, serves every page.
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let lent!: (c: Kysely<PlacementTables>) => void
  const connection = new Promise<Kysely<PlacementTables>>((r) => (lent = r))
  const done = db.connection().execute(async (c) => {
    lent(c)
    await held
  })
  try {
    const c = await Promise.race([connection, done.then(() => Promise.reject(new Error("the connection to Placement's database closed")))])
    await beginSnapshot(c, engine, false)
    yield* pageItems(c)
    await sql`rollback`.execute(c)
  } finally {
    release()
    await done.catch(() => undefined)
    await db.destroy()
  }
}

/** The items, read page by page on `c` inside its transaction. */
async function* pageItems(c: Kysely<PlacementTables>): AsyncGenerator<SnapshotItem> {
  // Allocations of no consumer record (before Placement's online data migrations made them):
  // refused before anything is read.
  const orphans = await c
    .selectFrom('allocations as a')
    .leftJoin('consumers as c', 'c.uuid', 'a.consumer_id')
    .select(sql<number>`count(*)`.as('n'))
    .where('c.id', 'is', null)
    .executeTakeFirst()
  if (Number(orphans?.n ?? 0) > 0) {
    throw new PlacementSchemaError(
      `${Number(orphans!.n)} allocations have no consumer record: run Placement's \`placement-manage db online_data_migrations\` first`,
    )
  }

  const classes = new Map<number, string>()
  for (const r of await c.selectFrom('resource_classes').select(['id', 'name']).orderBy('id').execute()) classes.set(Number(r.id), r.name)
  for (const [, name] of classes) if (name.startsWith('CUSTOM_')) yield {kind: 'resource_class', name}
  const traits = new Map<number, string>()
  for (const r of await c.selectFrom('traits').select(['id', 'name']).orderBy('id').execute()) traits.set(Number(r.id), r.name)
  // Standard traits are the target's own; others (custom, or of a newer os-traits) are carried.
  for (const [, name] of traits) if (!STANDARD.has(name)) yield {kind: 'trait', name}
  const className = (id: number) => classes.get(Number(id)) ?? missing(`resource class id ${id}`)

  let last = -1
  for (;;) {
    const rows = await c
      .selectFrom('resource_providers as p')
      .leftJoin('resource_providers as pp', 'pp.id', 'p.parent_provider_id')
      .select(['p.id', 'p.uuid', 'p.name', 'p.generation', 'pp.uuid as parent_uuid'])
      .where('p.id', '>', last)
      .orderBy('p.id')
      .limit(PAGE)
      .execute()
    if (!rows.length) break
    const lo = Number(rows[0].id)
    const hi = Number(rows[rows.length - 1].id)
    last = hi
    const byId = new Map<number, SnapshotProvider>()
    for (const r of rows) {
      byId.set(Number(r.id), {
        uuid: r.uuid,
        name: r.name ?? r.uuid,
        generation: Number(r.generation ?? 0),
        parent_provider_uuid: r.parent_uuid ?? null,
        inventories: {},
        traits: [],
        aggregates: [],
      })
    }
    const inventories = await c
      .selectFrom('inventories')
      .selectAll()
      .where('resource_provider_id', '>=', lo)
      .where('resource_provider_id', '<=', hi)
      .execute()
    for (const i of inventories) {
      const p = byId.get(Number(i.resource_provider_id))
      if (!p) continue
      p.inventories[className(i.resource_class_id)] = withDefaults({
        total: Number(i.total),
        reserved: Number(i.reserved),
        min_unit: Number(i.min_unit),
        max_unit: Number(i.max_unit),
        step_size: Number(i.step_size),
        allocation_ratio: Number(i.allocation_ratio),
      })
    }
    const providerTraits = await c
      .selectFrom('resource_provider_traits')
      .select(['resource_provider_id', 'trait_id'])
      .where('resource_provider_id', '>=', lo)
      .where('resource_provider_id', '<=', hi)
      .execute()
    for (const t of providerTraits)
      byId.get(Number(t.resource_provider_id))?.traits.push(traits.get(Number(t.trait_id)) ?? missing(`trait id ${t.trait_id}`))
    const aggregates = await c
      .selectFrom('resource_provider_aggregates as rpa')
      .innerJoin('placement_aggregates as pa', 'pa.id', 'rpa.aggregate_id')
      .select(['rpa.resource_provider_id', 'pa.uuid'])
      .where('rpa.resource_provider_id', '>=', lo)
      .where('rpa.resource_provider_id', '<=', hi)
      .execute()
    for (const a of aggregates) if (a.uuid) byId.get(Number(a.resource_provider_id))?.aggregates.push(a.uuid)
    for (const p of byId.values()) yield {kind: 'provider', provider: p}
  }

  last = -1
  for (;;) {
    const rows = await c
      .selectFrom('consumers as c')
      .innerJoin('projects as pr', 'pr.id', 'c.project_id')
      .innerJoin('users as u', 'u.id', 'c.user_id')
      .leftJoin('consumer_types as ct', 'ct.id', 'c.consumer_type_id')
      .select(['c.id', 'c.uuid', 'c.generation', 'pr.external_id as project', 'u.external_id as user', 'ct.name as type'])
      .where('c.id', '>', last)
      .orderBy('c.id')
      .limit(PAGE)
      .execute()
    if (!rows.length) break
    last = Number(rows[rows.length - 1].id)
    const byUuid = new Map<string, SnapshotConsumer>()
    for (const r of rows) {
      byUuid.set(r.uuid, {
        uuid: r.uuid,
        project_id: r.project,
        user_id: r.user,
        consumer_type: r.type ?? null,
        generation: Number(r.generation),
        allocations: {},
      })
    }
    const allocations = await c
      .selectFrom('allocations as a')
      .innerJoin('resource_providers as rp', 'rp.id', 'a.resource_provider_id')
      .select(['a.consumer_id', 'rp.uuid', 'a.resource_class_id', 'a.used'])
      .where('a.consumer_id', 'in', [...byUuid.keys()])
      .execute()
    for (const a of allocations) {
      const consumer = byUuid.get(a.consumer_id)
      if (!consumer) continue
      const on = (consumer.allocations[a.uuid] ??= {})
      on[className(a.resource_class_id)] = Number(a.used)
    }
    for (const consumer of byUuid.values()) yield {kind: 'consumer', consumer}
  }
}

function missing(what: string): never {
  throw new PlacementSchemaError(`it names a ${what} it does not hold: the database is inconsistent`)
}
