/**
 * Reads every table into the State at start (and when this process fell behind the change
 * journal, see journal.ts): one table
 * after another, a page of rows at a time (on SQLite as arrays of values, no object per row),
 * with each distinct inventory, trait set and aggregate set kept once however many providers
 * share it. A million providers load in seconds, in a fraction of the memory a row object per
 * row alive at once would take.
 */
import {holdLoaded, nextIdsAfterLoad} from '../core/state/load.js'
import type {Kysely} from 'kysely'
import {newProvider, type Inventory, type Provider, type State, type TopologyLevel} from '../core/state/state.js'
import type {Session} from './backends.js'
import {aggregateNameOf, groupOf, movedOf} from './state-patch.js'
import type {Database} from './schema.js'

/**
 * Groups consecutive rows of one provider (a provider's rows are written together, so they are
 * nearly always adjacent) and hands each group to `flush`.
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

/**
 * Loads every table into `s` (already cleared) through `session`, inside the caller's snapshot;
 * `db` compiles the statements. Returns the next provider seq.
 */
export async function loadTables(session: Session, db: Kysely<Database>, s: State): Promise<number> {
  const [nodes, groups, members, classes, traits, moved, names] = await session.run([
    db.selectFrom('topology_nodes').selectAll().compile(),
    db.selectFrom('placement_groups').selectAll().compile(),
    db.selectFrom('placement_group_members').selectAll().orderBy('group_name').orderBy('seq').compile(),
    db.selectFrom('resource_classes').selectAll().orderBy('id').compile(),
    db.selectFrom('traits').selectAll().orderBy('id').compile(),
    db.selectFrom('moved_consumers').selectAll().compile(),
    db.selectFrom('aggregate_names').selectAll().compile(),
  ])
  for (const r of moved) s.moved.set(r.uuid as string, movedOf(r))
  for (const r of names) s.aggregateNames.set(r.uuid as string, aggregateNameOf(r))
  for (const r of nodes) {
    const uuid = r.uuid as string
    s.topology.set(uuid, {
      uuid,
      name: r.name as string,
      level: r.level as TopologyLevel,
      parent: (r.parent_uuid as string | null) ?? null,
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    })
  }
  const membersOf = new Map<string, string[]>()
  for (const m of members) {
    const list = membersOf.get(m.group_name as string) ?? []
    list.push(m.consumer_uuid as string)
    membersOf.set(m.group_name as string, list)
  }
  for (const r of groups) s.groups.set(r.name as string, groupOf(r, membersOf.get(r.name as string) ?? []))
  const named = (r: (typeof classes)[number]) => ({
    id: Number(r.id),
    name: r.name as string,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  })
  for (const c of classes) s.classes.set(c.name as string, named(c))
  for (const t of traits) s.traits.set(t.name as string, named(t))
  nextIdsAfterLoad(s)
  const nextSeq = await loadProviders(session, s)
  await loadConsumers(session, s)
  // Built here without the State's mutation methods: its sums are added up anew when asked.
  s.listener.forgetAll()
  return nextSeq
}

async function loadProviders(session: Session, s: State): Promise<number> {
  let nextSeq = 1
  // Read in storage order, which is seq order (both grow with each insert); if a table ever
  // says otherwise, the providers are put in seq order afterwards.
  let inSeqOrder = true
  const seqs: number[] = []
  const columns = ['uuid', 'name', 'generation', 'parent_uuid', 'root_uuid', 'created_at', 'updated_at', 'seq', 'disabled_reason']
  for await (const page of session.pages('resource_providers', columns, 'seq', [
    'uuid',
    'name',
    'parent_uuid',
    'root_uuid',
    'disabled_reason',
  ])) {
    for (const r of page) {
      // One string per uuid: a name, root or parent equal to a uuid already read is that string.
      const uuid = r[0] as string
      const name = r[1] as string
      const parent = r[3] as string | null
      const root = r[4] as string
      const p = newProvider(uuid, name === uuid ? uuid : name, null, r[5] as number)
      p.generation = r[2] as number
      p.parent = parent === null ? null : (s.providers.get(parent)?.uuid ?? parent)
      p.root = root === uuid ? uuid : (s.providers.get(root)?.uuid ?? root)
      p.updatedAt = r[6] as number
      if (r[8] !== null && r[8] !== undefined) p.disabledReason = r[8] as string
      s.providers.set(uuid, p)
      s.providerByName.set(p.name, p)
      const seq = Number(r[7])
      p.seq = seq
      if (seq < nextSeq) inSeqOrder = false
      seqs.push(seq)
      nextSeq = Math.max(nextSeq, seq + 1)
    }
  }
  if (!inSeqOrder) {
    const all = [...s.providers.values()].map((p, k) => ({p, seq: seqs[k]})).sort((a, b) => a.seq - b.seq)
    s.providers.clear()
    for (const {p} of all) s.providers.set(p.uuid, p)
  }
  for (const p of s.providers.values()) if (p.parent !== null) s.adopt(s.providers.get(p.parent), p.uuid)

  // A provider's rows are mostly written in the order providers are made: look a few providers
  // ahead in that order before asking the map (string compares instead of a hash and a probe).
  const order = [...s.providers.values()]
  let next = 0
  const find = (uuid: string): Provider | undefined => {
    for (let k = next; k < next + 8 && k < order.length; k++) {
      if (order[k].uuid === uuid) {
        next = k + 1
        return order[k]
      }
    }
    return s.providers.get(uuid)
  }
  const rewind = () => {
    next = 0
  }
  const shared = s.shared
  const inventories = new ByProvider<string | Inventory>((uuid, items) => {
    const p = find(uuid)
    if (!p) return
    // items: class, record, class, record...
    const all = p.inventories.size ? [...[...p.inventories].flat(), ...items] : items
    p.inventories = shared.inventorySet(all)
  })
  const inventoryColumns = ['provider_uuid', 'resource_class', 'total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio']
  for await (const page of session.pages('inventories', inventoryColumns, 'rowid')) {
    for (const r of page) {
      const inv = shared.recordOf(r[2] as number, r[3] as number, r[4] as number, r[5] as number, r[6] as number, r[7] as number)
      const rc = r[1] as string
      const uuid = r[0] as string
      inventories.add(uuid, s.classes.get(rc)?.name ?? rc)
      inventories.add(uuid, inv)
    }
  }
  inventories.end()
  rewind()

  const traits = new ByProvider<string>((uuid, items) => {
    const p = find(uuid)
    if (!p) return
    const all = p.traits.size ? [...p.traits, ...items] : items
    p.traits = shared.traits(all)
  })
  for await (const page of session.pages('provider_traits', ['provider_uuid', 'trait'], 'rowid')) {
    for (const r of page) traits.add(r[0] as string, s.traits.get(r[1] as string)?.name ?? (r[1] as string))
  }
  traits.end()
  rewind()

  const aggregateUuids = new Map<string, string>()
  const recent: string[] = []
  const aggregates = new ByProvider<string>((uuid, items) => {
    const p = find(uuid)
    if (!p) return
    const all = p.aggregates.size ? [...p.aggregates, ...items] : items
    p.aggregates = shared.aggregates(all)
    s.listMember(p)
  })
  for await (const page of session.pages('provider_aggregates', ['provider_uuid', 'aggregate_uuid'], 'rowid', ['aggregate_uuid'])) {
    for (const r of page) {
      // One string per aggregate uuid, however many members it has; the few most used are
      // found by comparing, not hashing.
      const agg = r[1] as string
      let same = recent.find((a) => a === agg)
      if (same === undefined) {
        same = aggregateUuids.get(agg)
        if (same === undefined) aggregateUuids.set(agg, (same = agg))
        if (recent.length < 8) recent.push(same)
      }
      aggregates.add(r[0] as string, same)
    }
  }
  aggregates.end()
  return nextSeq
}

async function loadConsumers(session: Session, s: State): Promise<void> {
  const columns = ['uuid', 'project_id', 'user_id', 'consumer_type', 'generation', 'created_at', 'updated_at']
  for await (const page of session.pages('consumers', columns, 'rowid', ['uuid', 'project_id', 'user_id', 'consumer_type'])) {
    for (const r of page) {
      const uuid = r[0] as string
      s.consumers.set(uuid, {
        uuid,
        project: r[1] as string,
        user: r[2] as string,
        type: r[3] as string | null,
        generation: r[4] as number,
        createdAt: r[5] as number,
        updatedAt: r[6] as number,
        allocations: new Map(),
      })
    }
  }
  for await (const page of session.pages('allocations', ['consumer_uuid', 'provider_uuid', 'resource_class', 'used'], 'rowid')) {
    for (const r of page) {
      const c = s.consumers.get(r[0] as string)
      const p = s.providers.get(r[1] as string)
      if (!c || !p) continue
      holdLoaded(c, p, s.classes.get(r[2] as string)?.name ?? (r[2] as string), r[3] as number)
    }
  }
}
