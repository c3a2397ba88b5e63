/**
 * Rows written in bulk into an empty database inside one transaction (`placemat import`):
 * rows are gathered per table and written as multi-row INSERTs of a few thousand rows, so a
 * million providers take a few thousand statements and memory holds one chunk per table.
 */
import {sql, type Insertable, type Kysely} from 'kysely'
import type {Inventory} from '../core/state/state.js'
import type {Database} from './schema.js'
import {rowsPerStatement} from './statement-limits.js'

/** What a database holds that an import must not overwrite. */
export interface Occupancy {
  providers: number
  consumers: number
  customClasses: number
  customTraits: number
  /** Racks, rows and rooms. */
  topologyNodes: number
  groups: number
  movedConsumers: number
  aggregateNames: number
}

export const isEmpty = (o: Occupancy) =>
  !o.providers &&
  !o.consumers &&
  !o.customClasses &&
  !o.customTraits &&
  !o.topologyNodes &&
  !o.groups &&
  !o.movedConsumers &&
  !o.aggregateNames

type BulkTable =
  | 'resource_classes'
  | 'traits'
  | 'resource_providers'
  | 'inventories'
  | 'provider_traits'
  | 'provider_aggregates'
  | 'consumers'
  | 'allocations'
  | 'topology_nodes'
  | 'placement_groups'
  | 'placement_group_members'
  | 'moved_consumers'
  | 'aggregate_names'

/** Rows of one table waiting for their INSERT. */
class PendingRows<T extends BulkTable> {
  private rows: Insertable<Database[T]>[] = []
  private readonly perChunk: number

  constructor(
    private readonly db: Kysely<Database>,
    private readonly table: T,
    columns: number,
  ) {
    this.perChunk = rowsPerStatement(columns)
  }

  push(row: Insertable<Database[T]>): void {
    this.rows.push(row)
  }

  get full(): boolean {
    return this.rows.length >= this.perChunk
  }

  async flush(): Promise<void> {
    if (!this.rows.length) return
    const rows = this.rows
    this.rows = []
    await this.db
      .insertInto(this.table)
      .values(rows as any)
      .execute()
  }
}

export interface ProviderRow {
  uuid: string
  name: string
  generation: number
  parent_uuid: string | null
  root_uuid: string
  /** Why the host is out of service (placemat's own). */
  disabled_reason?: string | null
}

export interface ConsumerRow {
  uuid: string
  project_id: string
  user_id: string
  consumer_type: string | null
  generation: number
}

export interface TopologyNodeRow {
  uuid: string
  name: string
  level: string
  parent_uuid: string | null
}

export interface GroupRow {
  name: string
  policy: string
  level: string
  max_per: number | null
  max_skew: number | null
  soft: boolean
  generation: number
  created_at: number
  updated_at: number
}

/** A host (a root provider) as an import wrote it: what judging placement groups needs. */
/** A provider as written, with what deciding whether it or its root is a host needs. */
export interface WrittenProvider {
  uuid: string
  name: string
  parent_uuid: string | null
  root_uuid: string
  traits: string[]
  aggregates: string[]
  inventories: Record<string, Inventory>
}

/** Keys per statement when rows are read back by key. */
const KEYS_PER_READ = 5000

/**
 * Writes into `db`, a connection inside a write transaction that the caller commits or rolls
 * back. Every row gets the same creation time; providers are numbered (seq) in the order added.
 */
export class BulkImport {
  private readonly classes: PendingRows<'resource_classes'>
  private readonly traits: PendingRows<'traits'>
  private readonly providers: PendingRows<'resource_providers'>
  private readonly inventories: PendingRows<'inventories'>
  private readonly providerTraits: PendingRows<'provider_traits'>
  private readonly providerAggregates: PendingRows<'provider_aggregates'>
  private readonly consumers: PendingRows<'consumers'>
  private readonly allocations: PendingRows<'allocations'>
  private readonly topologyNodes: PendingRows<'topology_nodes'>
  private readonly groups: PendingRows<'placement_groups'>
  private readonly groupMembers: PendingRows<'placement_group_members'>
  private readonly moved: PendingRows<'moved_consumers'>
  private readonly aggregateNames: PendingRows<'aggregate_names'>
  private readonly tables: PendingRows<BulkTable>[]
  private topologyGeneration: number | undefined
  private nextClassId = 0
  private nextTraitId = 0
  private nextSeq = 0

  private constructor(
    private readonly db: Kysely<Database>,
    private readonly now: number,
  ) {
    this.classes = new PendingRows(db, 'resource_classes', 4)
    this.traits = new PendingRows(db, 'traits', 4)
    this.providers = new PendingRows(db, 'resource_providers', 9)
    this.inventories = new PendingRows(db, 'inventories', 8)
    this.providerTraits = new PendingRows(db, 'provider_traits', 2)
    this.providerAggregates = new PendingRows(db, 'provider_aggregates', 2)
    this.consumers = new PendingRows(db, 'consumers', 7)
    this.allocations = new PendingRows(db, 'allocations', 4)
    this.topologyNodes = new PendingRows(db, 'topology_nodes', 6)
    this.groups = new PendingRows(db, 'placement_groups', 9)
    this.groupMembers = new PendingRows(db, 'placement_group_members', 3)
    this.moved = new PendingRows(db, 'moved_consumers', 6)
    this.aggregateNames = new PendingRows(db, 'aggregate_names', 3)
    this.tables = [
      this.classes,
      this.traits,
      this.providers,
      this.inventories,
      this.providerTraits,
      this.providerAggregates,
      this.consumers,
      this.allocations,
      this.topologyNodes,
      this.groups,
      this.groupMembers,
      this.moved,
      this.aggregateNames,
    ]
  }

  /** Starts an import on `db`; ids and numbers continue from what is there (custom classes from 10000, as the store does). */
  static async start(db: Kysely<Database>, now: number): Promise<BulkImport> {
    const b = new BulkImport(db, now)
    const max = async (table: 'resource_classes' | 'traits' | 'resource_providers', column: 'id' | 'seq') => {
      const row = await db
        .selectFrom(table)
        .select(sql<number | string | null>`max(${sql.ref(column)})`.as('m'))
        .executeTakeFirst()
      return row?.m === null || row?.m === undefined ? 0 : Number(row.m)
    }
    b.nextClassId = Math.max(10000, (await max('resource_classes', 'id')) + 1)
    b.nextTraitId = (await max('traits', 'id')) + 1
    b.nextSeq = (await max('resource_providers', 'seq')) + 1
    return b
  }

  /** What the database holds already, counted inside the transaction. */
  static async occupancy(db: Kysely<Database>): Promise<Occupancy> {
    const count = async (
      table:
        | 'resource_providers'
        | 'consumers'
        | 'resource_classes'
        | 'traits'
        | 'topology_nodes'
        | 'placement_groups'
        | 'moved_consumers'
        | 'aggregate_names',
      custom = false,
    ) => {
      const where = custom ? sql`where name like 'CUSTOM_%'` : sql``
      const r = await sql<{n: number | string}>`select count(*) as n from ${sql.table(table)} ${where}`.execute(db)
      return Number(r.rows[0]?.n ?? 0)
    }
    return {
      providers: await count('resource_providers'),
      consumers: await count('consumers'),
      customClasses: await count('resource_classes', true),
      customTraits: await count('traits', true),
      topologyNodes: await count('topology_nodes'),
      groups: await count('placement_groups'),
      movedConsumers: await count('moved_consumers'),
      aggregateNames: await count('aggregate_names'),
    }
  }

  /** The names of the classes and of the traits the database knows. */
  static async names(db: Kysely<Database>): Promise<{classes: Set<string>; traits: Set<string>}> {
    const classes = await db.selectFrom('resource_classes').select('name').execute()
    const traits = await db.selectFrom('traits').select('name').execute()
    return {classes: new Set(classes.map((r) => r.name)), traits: new Set(traits.map((r) => r.name))}
  }

  addClass(name: string): Promise<void> {
    this.classes.push({id: this.nextClassId++, name, created_at: this.now, updated_at: this.now})
    return this.flushFull()
  }

  addTrait(name: string): Promise<void> {
    this.traits.push({id: this.nextTraitId++, name, created_at: this.now, updated_at: this.now})
    return this.flushFull()
  }

  addProvider(row: ProviderRow, inventories: Record<string, Inventory>, traits: string[], aggregates: string[]): Promise<void> {
    // Every row with the same columns: one multi-row INSERT names them once.
    this.providers.push({
      ...row,
      disabled_reason: row.disabled_reason ?? null,
      created_at: this.now,
      updated_at: this.now,
      seq: this.nextSeq++,
    })
    for (const [resource_class, inv] of Object.entries(inventories))
      this.inventories.push({provider_uuid: row.uuid, resource_class, ...inv})
    for (const trait of traits) this.providerTraits.push({provider_uuid: row.uuid, trait})
    for (const aggregate_uuid of aggregates) this.providerAggregates.push({provider_uuid: row.uuid, aggregate_uuid})
    return this.flushFull()
  }

  addConsumer(row: ConsumerRow, allocations: Record<string, Record<string, number>>): Promise<void> {
    this.consumers.push({...row, created_at: this.now, updated_at: this.now})
    for (const [provider_uuid, amounts] of Object.entries(allocations)) {
      for (const [resource_class, used] of Object.entries(amounts))
        this.allocations.push({consumer_uuid: row.uuid, provider_uuid, resource_class, used})
    }
    return this.flushFull()
  }

  addTopologyNode(row: TopologyNodeRow): Promise<void> {
    this.topologyNodes.push({...row, created_at: this.now, updated_at: this.now})
    return this.flushFull()
  }

  /** The topology generation, written with the rest by finish(). */
  setTopologyGeneration(generation: number): void {
    this.topologyGeneration = generation
  }

  addGroup(row: GroupRow, members: string[]): Promise<void> {
    this.groups.push({...row, soft: row.soft ? 1 : 0})
    members.forEach((consumer_uuid, seq) => this.groupMembers.push({group_name: row.name, consumer_uuid, seq}))
    return this.flushFull()
  }

  addMoved(row: Insertable<Database['moved_consumers']>): Promise<void> {
    this.moved.push(row)
    return this.flushFull()
  }

  addAggregateName(uuid: string, name: string): Promise<void> {
    this.aggregateNames.push({uuid, name, updated_at: this.now})
    return this.flushFull()
  }

  /** Writes the tables that have a whole chunk gathered (most calls write nothing). */
  private async flushFull(): Promise<void> {
    for (const t of this.tables) if (t.full) await t.flush()
  }

  /** Writes what is still gathered; call before COMMIT. */
  async finish(): Promise<void> {
    for (const t of this.tables) await t.flush()
    if (this.topologyGeneration !== undefined) {
      const value = String(this.topologyGeneration)
      await this.db
        .insertInto('placemat_meta')
        .values({key: 'topology_generation', value})
        .onConflict((oc) => oc.column('key').doUpdateSet({value}))
        .execute()
    }
  }

  /** The providers each of these consumers has allocations on, as written (after finish()). */
  async allocationProviders(consumers: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>()
    for (let i = 0; i < consumers.length; i += KEYS_PER_READ) {
      const rows = await this.db
        .selectFrom('allocations')
        .select(['consumer_uuid', 'provider_uuid'])
        .distinct()
        .where('consumer_uuid', 'in', consumers.slice(i, i + KEYS_PER_READ))
        .execute()
      for (const r of rows) out.set(r.consumer_uuid, [...(out.get(r.consumer_uuid) ?? []), r.provider_uuid])
    }
    return out
  }

  /**
   * The whole provider trees of these roots, and with `everyHostWithInventory` those of every
   * root whose tree holds inventory, as written (after finish()): each provider's place in its
   * tree, traits (which say whether it shares), aggregates and inventories, so that what is a
   * host is decided as anywhere else.
   */
  async trees(roots: string[], everyHostWithInventory: boolean): Promise<WrittenProvider[]> {
    const wanted = new Set(roots)
    if (everyHostWithInventory) {
      const rows = await this.db
        .selectFrom('resource_providers as rp')
        .innerJoin('inventories as i', 'i.provider_uuid', 'rp.uuid')
        .select('rp.root_uuid')
        .distinct()
        .execute()
      for (const r of rows) wanted.add(r.root_uuid)
    }
    const out = new Map<string, WrittenProvider>()
    const list = [...wanted]
    for (let i = 0; i < list.length; i += KEYS_PER_READ) {
      const rows = await this.db
        .selectFrom('resource_providers')
        .select(['uuid', 'name', 'parent_uuid', 'root_uuid'])
        .where('root_uuid', 'in', list.slice(i, i + KEYS_PER_READ))
        .execute()
      for (const r of rows) out.set(r.uuid, {...r, traits: [], aggregates: [], inventories: {}})
    }
    const uuids = [...out.keys()]
    for (let i = 0; i < uuids.length; i += KEYS_PER_READ) {
      const chunk = uuids.slice(i, i + KEYS_PER_READ)
      for (const r of await this.db.selectFrom('provider_traits').selectAll().where('provider_uuid', 'in', chunk).execute()) {
        out.get(r.provider_uuid)?.traits.push(r.trait)
      }
      for (const r of await this.db.selectFrom('provider_aggregates').selectAll().where('provider_uuid', 'in', chunk).execute()) {
        out.get(r.provider_uuid)?.aggregates.push(r.aggregate_uuid)
      }
      for (const r of await this.db.selectFrom('inventories').selectAll().where('provider_uuid', 'in', chunk).execute()) {
        const {provider_uuid, resource_class, ...inv} = r
        const p = out.get(provider_uuid)
        if (p) p.inventories[resource_class] = inv
      }
    }
    return [...out.values()]
  }
}
