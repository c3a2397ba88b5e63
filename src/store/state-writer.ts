/**
 * The statements that write what a transaction changed (the mirror of state-loader.ts): a few
 * statements per kind of row (multi-row inserts, deletes by lists of keys), so that a batch of
 * many providers costs statements by the thousand rows, not by the row. They are only compiled
 * here; the session sends them (on PostgreSQL together, in as few round trips as their size
 * allows).
 */
import type {CompiledQuery, Insertable, Kysely} from 'kysely'
import type {AggregateName} from '../core/aggregate-names.js'
import type {Group} from '../core/groups.js'
import type {Consumer, MovedConsumer, Provider, State, TopologyNode} from '../core/state/state.js'
import {PART, type Changes} from '../core/state/changes.js'
import type {Database} from './schema.js'
import {statementText, type StatementText} from './statement-text.js'
import type {ImageRowKind} from './journal-keys.js'

/** Providers (or consumers) whose rows are built together. */
const CHUNK = 5000

export class StateWriter {
  private readonly text: StatementText

  constructor(
    db: Kysely<Database>,
    /** The seq of the next provider row inserted (creation order, across processes). */
    public nextSeq = 1,
  ) {
    this.text = statementText(db)
  }

  /** Every statement that writes `ch`, as `s` now holds it. */
  *statements(s: State, ch: Changes): Generator<CompiledQuery> {
    const t = this.text
    const deleted = [...ch.deletedProviders]
    yield* t.deleteWhereIn('resource_providers', 'uuid', deleted)
    for (const table of ['inventories', 'provider_traits', 'provider_aggregates', 'allocations'] as const) {
      yield* t.deleteWhereIn(table, 'provider_uuid', deleted)
    }
    const gone = [...ch.deletedConsumers]
    yield* t.deleteWhereIn('consumers', 'uuid', gone)
    yield* t.deleteWhereIn('allocations', 'consumer_uuid', gone)
    yield* t.deleteWhereIn('resource_classes', 'name', [...ch.deletedClasses])
    yield* t.deleteWhereIn('traits', 'name', [...ch.deletedTraits])
    yield* t.deleteWhereIn('provider_traits', 'trait', [...ch.deletedTraits])
    yield* t.insert('resource_classes', rowsOfPresent(ch.classes, s.classes, namedRow), {key: 'id', update: ['name', 'updated_at']})
    yield* t.insert('traits', rowsOfPresent(ch.traits, s.traits, namedRow), {key: 'id', update: ['name', 'updated_at']})
    // A chunk of providers at a time: rows for a million providers are never all in memory.
    for (const chunk of batches(ch.providers, CHUNK)) yield* this.providers(s, chunk)
    yield* t.deleteWhereIn('topology_nodes', 'uuid', [...ch.deletedTopologyNodes])
    yield* t.insert('topology_nodes', rowsOfPresent(ch.topologyNodes, s.topology, topologyNodeRow), {
      key: 'uuid',
      update: ['name', 'level', 'parent_uuid', 'updated_at'],
    })
    if (ch.topologyGeneration) yield t.setMeta('topology_generation', String(s.topologyGeneration))
    for (const chunk of batches(ch.consumers, CHUNK)) yield* this.consumers(s, chunk)
    yield* this.groups(s, ch)
    yield* this.moved(s, ch)
    yield* this.aggregateNames(s, ch)
  }

  /** The names set or removed: each deleted, then those the State holds written again (a name moved in one write stays unique). */
  private *aggregateNames(s: State, ch: Changes): Generator<CompiledQuery> {
    if (ch.aggregateNames.size === 0) return
    yield* this.text.deleteWhereIn('aggregate_names', 'uuid', [...ch.aggregateNames])
    const rows: Insertable<Database['aggregate_names']>[] = []
    for (const uuid of ch.aggregateNames) {
      const n = s.aggregateNames.get(uuid)
      if (n) rows.push(aggregateNameRow(n))
    }
    yield* this.text.insert('aggregate_names', rows)
  }

  /** The moved records set or removed: each deleted, then those the State holds written again. */
  private *moved(s: State, ch: Changes): Generator<CompiledQuery> {
    if (ch.moved.size === 0) return
    yield* this.text.deleteWhereIn('moved_consumers', 'uuid', [...ch.moved])
    const rows: Insertable<Database['moved_consumers']>[] = []
    for (const uuid of ch.moved) {
      const m = s.moved.get(uuid)
      if (m) rows.push(movedRow(m))
    }
    yield* this.text.insert('moved_consumers', rows)
  }

  /** A changed group's row and its whole member list (groups are small, and change whole). */
  private *groups(s: State, ch: Changes): Generator<CompiledQuery> {
    const names = [...ch.deletedGroups, ...ch.groups]
    if (names.length === 0) return
    yield* this.text.deleteWhereIn('placement_group_members', 'group_name', names)
    yield* this.text.deleteWhereIn('placement_groups', 'name', names)
    for (const name of ch.groups) {
      const g = s.groups.get(name)
      if (!g) continue
      yield* this.text.insert('placement_groups', [groupRow(g)])
      yield* this.text.insert('placement_group_members', groupMemberRows(g))
    }
  }

  /** The rows of these changed consumers and their allocations. */
  private *consumers(s: State, uuids: string[]): Generator<CompiledQuery> {
    const consumerRows: Insertable<Database['consumers']>[] = []
    const allocationRows: Insertable<Database['allocations']>[] = []
    for (const uuid of uuids) {
      const c = s.consumers.get(uuid)
      if (!c) continue
      consumerRows.push(consumerRow(c))
      allocationRows.push(...allocationRowsOf(c))
    }
    yield* this.text.insert('consumers', consumerRows, {
      key: 'uuid',
      update: ['project_id', 'user_id', 'consumer_type', 'generation', 'updated_at'],
    })
    yield* this.text.deleteWhereIn(
      'allocations',
      'consumer_uuid',
      consumerRows.map((c) => c.uuid as string),
    )
    yield* this.text.insert('allocations', allocationRows)
  }

  /** The rows of these changed providers. */
  private *providers(s: State, providers: [string, number][]): Generator<CompiledQuery> {
    const t = this.text
    const rows: Insertable<Database['resource_providers']>[] = []
    const parts = {inventories: [] as string[], traits: [] as string[], aggregates: [] as string[]}
    const inventoryRows: Insertable<Database['inventories']>[] = []
    const traitRows: Insertable<Database['provider_traits']>[] = []
    const aggregateRows: Insertable<Database['provider_aggregates']>[] = []
    for (const [uuid, changed] of providers) {
      const p = s.providers.get(uuid)
      if (!p) continue
      if (changed & PART.row) {
        // Numbered when first written; an update keeps the number the row has.
        if (changed & PART.created) p.seq = this.nextSeq++
        rows.push(providerRow(p))
      } else if (changed & PART.generation) {
        // The common case (every allocation write bumps its providers): two columns, no index.
        yield t.generation(uuid, p.generation, p.updatedAt)
      }
      if (changed & PART.inventories) {
        parts.inventories.push(uuid)
        inventoryRows.push(...inventoryRowsOf(p))
      }
      if (changed & PART.traits) {
        parts.traits.push(uuid)
        traitRows.push(...traitRowsOf(p))
      }
      if (changed & PART.aggregates) {
        parts.aggregates.push(uuid)
        aggregateRows.push(...aggregateRowsOf(p))
      }
    }
    // created_at and seq too: the same values for a provider that was there; a new one of a
    // deleted one's uuid (deleted and made again in one transaction) is new in these too.
    yield* t.insert('resource_providers', rows, {
      key: 'uuid',
      update: ['name', 'generation', 'parent_uuid', 'root_uuid', 'updated_at', 'created_at', 'seq', 'disabled_reason'],
    })
    yield* t.deleteWhereIn('inventories', 'provider_uuid', parts.inventories)
    yield* t.insert('inventories', inventoryRows)
    yield* t.deleteWhereIn('provider_traits', 'provider_uuid', parts.traits)
    yield* t.insert('provider_traits', traitRows)
    yield* t.deleteWhereIn('provider_aggregates', 'provider_uuid', parts.aggregates)
    yield* t.insert('provider_aggregates', aggregateRows)
  }
}

// Each record's rows, one home for the statements above and a transaction's image below.

const providerRow = (p: Provider): Insertable<Database['resource_providers']> => ({
  uuid: p.uuid,
  name: p.name,
  generation: p.generation,
  parent_uuid: p.parent,
  root_uuid: p.root,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
  seq: p.seq,
  disabled_reason: p.disabledReason ?? null,
})
const inventoryRowsOf = (p: Provider): Insertable<Database['inventories']>[] =>
  [...p.inventories].map(([rc, inv]) => ({provider_uuid: p.uuid, resource_class: rc, ...inv}))
const traitRowsOf = (p: Provider): Insertable<Database['provider_traits']>[] =>
  [...p.traits].map((trait) => ({provider_uuid: p.uuid, trait}))
const aggregateRowsOf = (p: Provider): Insertable<Database['provider_aggregates']>[] =>
  [...p.aggregates].map((aggregate_uuid) => ({provider_uuid: p.uuid, aggregate_uuid}))
const consumerRow = (c: Consumer): Insertable<Database['consumers']> => ({
  uuid: c.uuid,
  project_id: c.project,
  user_id: c.user,
  consumer_type: c.type,
  generation: c.generation,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
})
const allocationRowsOf = (c: Consumer): Insertable<Database['allocations']>[] =>
  [...c.allocations].flatMap(([provider_uuid, amounts]) =>
    [...amounts].map(([resource_class, used]) => ({consumer_uuid: c.uuid, provider_uuid, resource_class, used})),
  )
const namedRow = (r: {id: number; name: string; createdAt: number; updatedAt: number}) => ({
  id: r.id,
  name: r.name,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
})
const topologyNodeRow = (n: TopologyNode): Insertable<Database['topology_nodes']> => ({
  uuid: n.uuid,
  name: n.name,
  level: n.level,
  parent_uuid: n.parent,
  created_at: n.createdAt,
  updated_at: n.updatedAt,
})
const groupRow = (g: Group): Insertable<Database['placement_groups']> => ({
  name: g.name,
  policy: g.policy,
  level: g.level,
  max_per: g.maxPer ?? null,
  max_skew: g.maxSkew ?? null,
  soft: g.soft ? 1 : 0,
  generation: g.generation,
  created_at: g.createdAt,
  updated_at: g.updatedAt,
})
const groupMemberRows = (g: Group): Insertable<Database['placement_group_members']>[] =>
  [...g.members].map((consumer_uuid, seq) => ({group_name: g.name, consumer_uuid, seq}))
const movedRow = (m: MovedConsumer): Insertable<Database['moved_consumers']> => ({
  uuid: m.uuid,
  moved_to: m.movedTo,
  project_id: m.project,
  user_id: m.user,
  consumer_type: m.type,
  moved_at: m.movedAt,
})
const aggregateNameRow = (n: AggregateName): Insertable<Database['aggregate_names']> => ({
  uuid: n.uuid,
  name: n.name,
  updated_at: n.updatedAt,
})

/**
 * The rows a transaction that changed `ch` left, as `s` now holds them, in the shape a journal
 * window reads them (every row each key names, for the parts recorded): what another process needs
 * to apply the transaction without reading the tables. Call after the statements were made (they
 * number new providers).
 */
export function imageRows(s: State, ch: Changes): ImageRows {
  const out: ImageRows = {
    providers: [],
    inventories: [],
    traits: [],
    aggregates: [],
    consumers: [],
    allocations: [],
    classes: [],
    traitNames: [],
    topologyNodes: [],
    groups: [],
    groupMembers: [],
    moved: [],
    aggregateNames: [],
  }
  for (const [uuid, parts] of ch.providers) {
    const p = s.providers.get(uuid)
    if (!p) continue
    out.providers.push(providerRow(p))
    if (parts & PART.inventories) out.inventories.push(...inventoryRowsOf(p))
    if (parts & PART.traits) out.traits.push(...traitRowsOf(p))
    if (parts & PART.aggregates) out.aggregates.push(...aggregateRowsOf(p))
  }
  for (const uuid of new Set([...ch.consumers, ...ch.deletedConsumers, ...ch.moved])) {
    const c = s.consumers.get(uuid)
    if (c) {
      out.consumers.push(consumerRow(c))
      out.allocations.push(...allocationRowsOf(c))
    }
    const m = s.moved.get(uuid)
    if (m) out.moved.push(movedRow(m))
  }
  out.classes = rowsOfPresent(ch.classes, s.classes, namedRow)
  out.traitNames = rowsOfPresent(ch.traits, s.traits, namedRow)
  out.topologyNodes = rowsOfPresent(ch.topologyNodes, s.topology, topologyNodeRow)
  for (const name of ch.groups) {
    const g = s.groups.get(name)
    if (!g) continue
    out.groups.push(groupRow(g))
    out.groupMembers.push(...groupMemberRows(g))
  }
  out.aggregateNames = rowsOfPresent(ch.aggregateNames, s.aggregateNames, aggregateNameRow)
  return out
}

/** The rows of the records `keys` name that `have` still holds (those gone have none). */
function rowsOfPresent<T>(keys: Iterable<string>, have: ReadonlyMap<string, T>, toRow: (record: T) => object): object[] {
  const rows: object[] = []
  for (const key of keys) {
    const record = have.get(key)
    if (record) rows.push(toRow(record))
  }
  return rows
}

/** A transaction's rows by kind (see imageRows; journal.ts's Window holds the same lists). */
export type ImageRows = Record<ImageRowKind, object[]>

/** `items` in arrays of `size` (the last one shorter). */
export function* batches<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let batch: T[] = []
  for (const item of items) {
    batch.push(item)
    if (batch.length === size) {
      yield batch
      batch = []
    }
  }
  if (batch.length) yield batch
}
