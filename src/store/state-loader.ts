/**
 * Reads every table into the State at start (and after another process's commit): one table
 * after another, rows streamed (SQLite) so that they die young, and each distinct inventory,
 * trait set and aggregate set kept once however many providers have it. A million providers
 * load in seconds, in a fraction of the memory a row object per row alive at once would take.
 */
import {sql, type Kysely, type Selectable, type Transaction} from 'kysely'
import {newProvider, type Consumer, type Inventory, type State, type TopologyLevel} from '../core/state.js'
import {Interner, SharedMap, SharedSet, ownMap, ownSet} from '../core/shared-collections.js'
import type {Database} from './schema.js'

type Db = Kysely<Database> | Transaction<Database>

const PAGE = 20_000

/** The order rows are read in: providers by seq, classes and traits by id, the rest as stored. */
const ORDER: Partial<Record<keyof Database, string>> = {resource_providers: 'seq', resource_classes: 'id', traits: 'id'}

/**
 * The rows of `table`, a page at a time on SQLite (keyed by seq or rowid, so a page costs the
 * same at the end of the table as at its start), all at once elsewhere.
 */
async function* pagesOf<T extends keyof Database>(db: Db, table: T, paged: boolean): AsyncGenerator<Selectable<Database[T]>[]> {
  type Row = Selectable<Database[T]>
  const order = ORDER[table]
  if (!paged) {
    const q = db.selectFrom(table as keyof Database).selectAll()
    yield (await (order ? q.orderBy(sql.ref(order)) : q).execute()) as unknown as Row[]
    return
  }
  const key = sql.ref(order ?? 'rowid')
  let last = -Infinity
  for (;;) {
    const page = (await db
      .selectFrom(table as keyof Database)
      .selectAll()
      .select(key.as('_key'))
      .where(key, '>', last)
      .orderBy(key)
      .limit(PAGE)
      .execute()) as unknown as (Row & {_key: number})[]
    yield page
    if (page.length < PAGE) return
    last = Number(page[page.length - 1]._key)
  }
}

/**
 * Groups consecutive rows of one provider (rows of a provider are written together, so they
 * are nearly always adjacent) and hands each group to `flush`.
 */
class ByProvider<T> {
  private uuid: string | null = null
  private items: T[] = []
  constructor(private readonly flush: (uuid: string, items: T[]) => void) {}
  add(uuid: string, item: T): void {
    if (uuid !== this.uuid) this.end()
    this.uuid = uuid
    this.items.push(item)
  }
  end(): void {
    if (this.uuid !== null && this.items.length) this.flush(this.uuid, this.items)
    this.uuid = null
    this.items = []
  }
}

/** Loads every table into `s` (already cleared); returns the next provider seq. */
export async function loadTables(db: Db, s: State, stream: boolean): Promise<number> {
  for await (const page of pagesOf(db, 'topology_nodes', stream)) {
    for (const r of page) {
      s.topology.set(r.uuid, {
        uuid: r.uuid,
        name: r.name,
        level: r.level as TopologyLevel,
        parent: r.parent_uuid,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      })
    }
  }
  const meta = await db.selectFrom('placemat_meta').selectAll().where('key', '=', 'topology_generation').execute()
  s.topologyGeneration = Number(meta[0]?.value ?? 0)
  let nextClass = 10000
  for await (const page of pagesOf(db, 'resource_classes', stream)) {
    for (const c of page) {
      s.classes.set(c.name, {id: c.id, name: c.name, createdAt: c.created_at, updatedAt: c.updated_at})
      nextClass = Math.max(nextClass, c.id + 1)
    }
  }
  let nextTrait = 1
  for await (const page of pagesOf(db, 'traits', stream)) {
    for (const t of page) {
      s.traits.set(t.name, {id: t.id, name: t.name, createdAt: t.created_at, updatedAt: t.updated_at})
      nextTrait = Math.max(nextTrait, t.id + 1)
    }
  }
  s.setNextIds(nextClass, nextTrait)

  let nextSeq = 1
  for await (const page of pagesOf(db, 'resource_providers', stream)) {
    for (const r of page) {
      // One string per uuid: a name, root or parent equal to a uuid already read is that string.
      const uuid = r.uuid
      const p = newProvider(uuid, r.name === uuid ? uuid : r.name, null, r.created_at)
      p.generation = r.generation
      p.parent = r.parent_uuid === null ? null : (s.providers.get(r.parent_uuid)?.uuid ?? r.parent_uuid)
      p.root = r.root_uuid === uuid ? uuid : (s.providers.get(r.root_uuid)?.uuid ?? r.root_uuid)
      p.updatedAt = r.updated_at
      s.providers.set(uuid, p)
      s.providerByName.set(p.name, p)
      nextSeq = Number(r.seq) + 1
    }
  }
  for (const p of s.providers.values()) {
    const parent = p.parent === null ? undefined : s.providers.get(p.parent)
    if (!parent) continue
    parent.children = ownSet(parent.children)
    parent.children.add(p.uuid)
  }

  const records = new Interner<Inventory>()
  const inventorySets = new Interner<Map<string, Inventory>>()
  const inventories = new ByProvider<[string, Inventory]>((uuid, items) => {
    const p = s.providers.get(uuid)
    if (!p) return
    const all = p.inventories.size ? [...p.inventories, ...items] : items
    const key = all.map(([rc, v]) => `${rc}:${recordKey(v)}`).join('|')
    p.inventories = inventorySets.of(key, () => new SharedMap(all))
  })
  for await (const page of pagesOf(db, 'inventories', stream)) {
    for (const r of page) {
      const key = `${r.total},${r.reserved},${r.min_unit},${r.max_unit},${r.step_size},${r.allocation_ratio}`
      const inv = records.of(key, () => ({
        total: r.total,
        reserved: r.reserved,
        min_unit: r.min_unit,
        max_unit: r.max_unit,
        step_size: r.step_size,
        allocation_ratio: r.allocation_ratio,
      }))
      inventories.add(r.provider_uuid, [s.classes.get(r.resource_class)?.name ?? r.resource_class, inv])
    }
  }
  inventories.end()

  const names = new Interner<Set<string>>()
  const traits = new ByProvider<string>((uuid, items) => {
    const p = s.providers.get(uuid)
    if (!p) return
    const all = p.traits.size ? [...p.traits, ...items] : items
    p.traits = names.of('t|' + all.join('|'), () => new SharedSet(all))
  })
  for await (const page of pagesOf(db, 'provider_traits', stream)) {
    for (const r of page) {
      traits.add(r.provider_uuid, s.traits.get(r.trait)?.name ?? r.trait)
    }
  }
  traits.end()

  const aggregateNames = new Interner<string>()
  const aggregates = new ByProvider<string>((uuid, items) => {
    const p = s.providers.get(uuid)
    if (!p) return
    const all = p.aggregates.size ? [...p.aggregates, ...items] : items
    p.aggregates = names.of('a|' + all.join('|'), () => new SharedSet(all))
    for (const agg of items) {
      let members = s.aggregateMembers.get(agg)
      if (!members) s.aggregateMembers.set(agg, (members = new Set()))
      members.add(p.uuid)
    }
  })
  for await (const page of pagesOf(db, 'provider_aggregates', stream)) {
    for (const r of page) {
      aggregates.add(r.provider_uuid, aggregateNames.of(r.aggregate_uuid, () => r.aggregate_uuid))
    }
  }
  aggregates.end()

  for await (const page of pagesOf(db, 'consumers', stream)) {
    for (const r of page) {
      const c: Consumer = {
        uuid: r.uuid,
        project: r.project_id,
        user: r.user_id,
        type: r.consumer_type,
        generation: r.generation,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        allocations: new Map(),
      }
      s.consumers.set(c.uuid, c)
    }
  }
  for await (const page of pagesOf(db, 'allocations', stream)) {
    for (const r of page) {
      const c = s.consumers.get(r.consumer_uuid)
      const p = s.providers.get(r.provider_uuid)
      if (!c || !p) continue
      let amounts = c.allocations.get(p.uuid)
      if (!amounts) {
        c.allocations.set(p.uuid, (amounts = new Map()))
        p.allocations = ownMap(p.allocations)
        p.allocations.set(c.uuid, amounts)
      }
      const rc = s.classes.get(r.resource_class)?.name ?? r.resource_class
      amounts.set(rc, r.used)
      p.usages = ownMap(p.usages)
      p.usages.set(rc, (p.usages.get(rc) ?? 0) + r.used)
    }
  }
  return nextSeq
}

const recordKey = (v: Inventory) => `${v.total},${v.reserved},${v.min_unit},${v.max_unit},${v.step_size},${v.allocation_ratio}`

