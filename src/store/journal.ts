/**
 * The change journal: every write transaction records, in the same transaction, the keys of what
 * it changed (providers with the parts that changed, consumers, classes, traits, racks/rows/rooms,
 * groups) under one sequence number, the value the change counter takes at its commit. Writers
 * hold the database's write lock from before they read the counter to their COMMIT, so sequence
 * numbers are given in commit order without gaps.
 *
 * A process that sees the counter move past its position reads the keys recorded since and the
 * current rows they name, in one snapshot (one round trip on PostgreSQL), and patches its State
 * (state-patch.ts). The journal is pruned to the last JOURNAL_KEEP transactions; a process
 * behind the floor, or one whose window is larger than it is worth patching, loads everything
 * again (the "expired" path of a watch).
 */
import {sql, type CompiledQuery, type Kysely} from 'kysely'
import {PART, type Changes} from '../core/state.js'
import {rowsPerStatement, type Row} from './backends.js'
import type {Database} from './schema.js'

/** Kinds of key in the journal. */
export const KEY = {
  provider: 'p',
  consumer: 'c',
  resourceClass: 'rc',
  trait: 't',
  topologyNode: 'tn',
  group: 'g',
  /** The topology generation (placemat_meta), with an empty key. */
  topologyGeneration: 'tg',
} as const

/** Transactions the journal keeps; a process further behind loads everything again. */
export const JOURNAL_KEEP = 50_000

/** Pruning runs with every PRUNE_EVERY-th transaction, in that transaction. */
const PRUNE_EVERY = 512

/**
 * A transaction that changes more keys than this records none: followers load everything again
 * (as costly as patching that much, and the journal stays small).
 */
export const MAX_JOURNALLED_KEYS = 100_000

/** A window larger than this (keys since a position) is caught up by a load, not a patch. */
export const MAX_PATCH_KEYS = 100_000

export interface JournalRow {
  seq: number
  kind: string
  key: string
  parts: number
}

/** How many keys `ch` would record. */
export function keyCount(ch: Changes): number {
  return (
    ch.providers.size + ch.deletedProviders.size + ch.consumers.size + ch.deletedConsumers.size + ch.classes.size + ch.deletedClasses.size +
    ch.traits.size + ch.deletedTraits.size + ch.topologyNodes.size + ch.deletedTopologyNodes.size + ch.groups.size + ch.deletedGroups.size +
    (ch.topologyGeneration ? 1 : 0)
  )
}

/** The journal rows of one transaction. */
function* rowsOf(ch: Changes, seq: number): Generator<JournalRow> {
  for (const [key, parts] of ch.providers) yield {seq, kind: KEY.provider, key, parts}
  for (const key of ch.deletedProviders) yield {seq, kind: KEY.provider, key, parts: 0}
  const plain = (kind: string, keys: Iterable<string>) => [...keys].map((key) => ({seq, kind, key, parts: 0}))
  yield* plain(KEY.consumer, ch.consumers)
  yield* plain(KEY.consumer, ch.deletedConsumers)
  yield* plain(KEY.resourceClass, ch.classes)
  yield* plain(KEY.resourceClass, ch.deletedClasses)
  yield* plain(KEY.trait, ch.traits)
  yield* plain(KEY.trait, ch.deletedTraits)
  yield* plain(KEY.topologyNode, ch.topologyNodes)
  yield* plain(KEY.topologyNode, ch.deletedTopologyNodes)
  yield* plain(KEY.group, ch.groups)
  yield* plain(KEY.group, ch.deletedGroups)
  if (ch.topologyGeneration) yield {seq, kind: KEY.topologyGeneration, key: '', parts: 0}
}

const setMeta = (db: Kysely<Database>, key: string, value: number): CompiledQuery =>
  db
    .insertInto('placemat_meta')
    .values({key, value: String(value)})
    .onConflict((oc) => oc.column('key').doUpdateSet({value: String(value)}))
    .compile()

/**
 * The statements that record `ch` as transaction `seq` (the counter's next value) and move the
 * counter, pruning the journal now and then. A change too large to journal moves the floor past
 * itself instead, so every other process loads again.
 */
export function recordStatements(db: Kysely<Database>, ch: Changes, seq: number): CompiledQuery[] {
  const out: CompiledQuery[] = []
  if (keyCount(ch) > MAX_JOURNALLED_KEYS) {
    out.push(setMeta(db, 'journal_floor', seq))
  } else {
    let chunk: JournalRow[] = []
    const perStatement = rowsPerStatement(4)
    for (const row of rowsOf(ch, seq)) {
      chunk.push(row)
      if (chunk.length === perStatement) {
        out.push(db.insertInto('placemat_changes').values(chunk).compile())
        chunk = []
      }
    }
    if (chunk.length) out.push(db.insertInto('placemat_changes').values(chunk).compile())
  }
  if (seq % PRUNE_EVERY === 0 && seq > JOURNAL_KEEP) out.push(...pruneStatements(db, seq - JOURNAL_KEEP))
  out.push(setMeta(db, 'change_counter', seq))
  return out
}

/** Drops the journal up to `floor` and records that processes behind it must load again. */
function pruneStatements(db: Kysely<Database>, floor: number): CompiledQuery[] {
  return [
    db.deleteFrom('placemat_changes').where('seq', '<=', floor).compile(),
    // Never lowers a floor a large change moved up.
    sql`update placemat_meta set value = ${String(floor)} where key = 'journal_floor' and cast(value as bigint) < ${floor}`.compile(db),
  ]
}

/**
 * For writes made outside the journal (an import, a repair): the counter moves and the floor
 * with it, so every other process loads again.
 */
export function invalidateStatements(db: Kysely<Database>, seq: number): CompiledQuery[] {
  return [setMeta(db, 'journal_floor', seq), setMeta(db, 'change_counter', seq)]
}

/**
 * Ends a write made outside the journal on `conn` (which holds the write lock: see
 * Backend.beginWrite): the counter and the floor move, so every other process loads again; COMMIT.
 */
export async function commitOutsideJournal(conn: Kysely<Database>): Promise<void> {
  const head = readHead((await conn.executeQuery(headStatement(conn))).rows as Row[])
  for (const q of invalidateStatements(conn, head.counter + 1)) await conn.executeQuery(q)
  await conn.executeQuery(sql`commit`.compile(conn))
}

/** The change counter, the journal's floor and the topology generation, as one statement. */
export function headStatement(db: Kysely<Database>): CompiledQuery {
  return db.selectFrom('placemat_meta').select(['key', 'value']).where('key', 'in', ['change_counter', 'journal_floor', 'topology_generation']).compile()
}

export interface Head {
  counter: number
  floor: number
  topologyGeneration: number
}

export function readHead(rows: Row[]): Head {
  const m = new Map(rows.map((r) => [String(r.key), Number(r.value)]))
  return {counter: m.get('change_counter') ?? 0, floor: m.get('journal_floor') ?? 0, topologyGeneration: m.get('topology_generation') ?? 0}
}

/** What changed since a position, read in one snapshot: the journal's keys and the rows they name now. */
export interface Window {
  head: Head
  /** Keys recorded since the position (more than MAX_PATCH_KEYS: none are read, see `size`). */
  size: number
  keys: JournalRow[]
  providers: Row[]
  inventories: Row[]
  traits: Row[]
  aggregates: Row[]
  consumers: Row[]
  allocations: Row[]
  classes: Row[]
  traitNames: Row[]
  topologyNodes: Row[]
  groups: Row[]
  groupMembers: Row[]
}

/**
 * The statements that read the window after `position`: the head, the count of keys, and (when
 * the count is small enough to patch) the keys and the rows they name. Every statement guards
 * itself with the count, so a huge window costs a count, not a huge answer.
 */
export function windowStatements(db: Kysely<Database>, position: number, storageOrder: 'rowid' | 'ctid', extra: readonly JournalRow[] = []): CompiledQuery[] {
  if (extra.length) return compileWindow(db, position, storageOrder, extra)
  // The common case (no extra keys) is compiled once, its position a parameter set here: it runs
  // before every write and every catch-up.
  const key = `${storageOrder}`
  let template = windowTemplates.get(db)?.get(key)
  if (!template) {
    template = compileWindow(db, POSITION_MARK, storageOrder, [])
    if (!windowTemplates.has(db)) windowTemplates.set(db, new Map())
    windowTemplates.get(db)!.set(key, template)
  }
  return template.map((q) => ({...q, parameters: q.parameters.map((v) => (v === POSITION_MARK ? position : v))}))
}

/** Stands for the position in the compiled window (no real position comes near it). */
const POSITION_MARK = -7_340_033

const windowTemplates = new WeakMap<Kysely<Database>, Map<string, CompiledQuery[]>>()

function compileWindow(db: Kysely<Database>, position: number, storageOrder: 'rowid' | 'ctid', extra: readonly JournalRow[]): CompiledQuery[] {
  // A provider's inventories, traits and aggregates, and a consumer's allocations, in the order a
  // load reads them (the order answers list them in).
  const stored = sql.ref(storageOrder)
  const small = sql<boolean>`(select count(*) from placemat_changes where seq > ${position}) <= ${sql.lit(MAX_PATCH_KEYS)}`
  const extraKeys = (kind: string, partBit: number) => extra.filter((k) => k.kind === kind && (!partBit || k.parts & partBit)).map((k) => k.key)
  /** `column` is a key of `kind` the journal names since the position (the window small enough), or one of `extra`. */
  const named = (column: string, kind: string, partBit = 0) => {
    let journal = db.selectFrom('placemat_changes').select('key').where('seq', '>', position).where('kind', '=', kind)
    if (partBit) journal = journal.where(sql<boolean>`(parts & ${sql.lit(partBit)}) <> 0`)
    const more = extraKeys(kind, partBit)
    return sql<boolean>`((${sql.ref(column)} in (${journal}) and ${small})${more.length ? sql` or ${sql.ref(column)} in (${sql.join(more)})` : sql``})`
  }
  return [
    headStatement(db),
    db.selectFrom('placemat_changes').select((eb) => eb.fn.countAll().as('n')).where('seq', '>', position).compile(),
    db.selectFrom('placemat_changes').select(['seq', 'kind', 'key', 'parts']).where('seq', '>', position).where(small).orderBy('seq').compile(),
    db.selectFrom('resource_providers').selectAll().where(named('uuid', KEY.provider)).orderBy('seq').compile(),
    db.selectFrom('inventories').selectAll().where(named('provider_uuid', KEY.provider, PART.inventories)).orderBy(stored).compile(),
    db.selectFrom('provider_traits').selectAll().where(named('provider_uuid', KEY.provider, PART.traits)).orderBy(stored).compile(),
    db.selectFrom('provider_aggregates').selectAll().where(named('provider_uuid', KEY.provider, PART.aggregates)).orderBy(stored).compile(),
    db.selectFrom('consumers').selectAll().where(named('uuid', KEY.consumer)).orderBy(stored).compile(),
    db.selectFrom('allocations').selectAll().where(named('consumer_uuid', KEY.consumer)).orderBy(stored).compile(),
    db.selectFrom('resource_classes').selectAll().where(named('name', KEY.resourceClass)).orderBy('id').compile(),
    db.selectFrom('traits').selectAll().where(named('name', KEY.trait)).orderBy('id').compile(),
    db.selectFrom('topology_nodes').selectAll().where(named('uuid', KEY.topologyNode)).orderBy(stored).compile(),
    db.selectFrom('placement_groups').selectAll().where(named('name', KEY.group)).orderBy(stored).compile(),
    db.selectFrom('placement_group_members').selectAll().where(named('group_name', KEY.group)).orderBy('group_name').orderBy('seq').compile(),
  ]
}

/** Every part of a provider: a key read again because a failed write may have changed any of it. */
const ALL_PARTS = PART.row | PART.generation | PART.inventories | PART.traits | PART.aggregates

/** The keys a failed write touched, to be read again (at position 0: they follow the journal's own). */
export function unsureKeys(ch: Changes): JournalRow[] {
  return [...rowsOf(ch, 0)].map((k) => (k.kind === KEY.provider ? {...k, parts: ALL_PARTS} : k))
}

/**
 * The window's answers, in the order of windowStatements (`skip` statements sent before them),
 * with `extra` (the keys read again besides the journal's) among its keys.
 */
export function readWindow(results: Row[][], skip = 0, extra: readonly JournalRow[] = []): Window {
  const r = results.slice(skip)
  return {
    head: readHead(r[0]),
    size: Number(r[1][0]?.n ?? 0),
    keys: [...extra, ...r[2].map((x) => ({seq: Number(x.seq), kind: String(x.kind), key: String(x.key), parts: Number(x.parts)}))],
    providers: r[3],
    inventories: r[4],
    traits: r[5],
    aggregates: r[6],
    consumers: r[7],
    allocations: r[8],
    classes: r[9],
    traitNames: r[10],
    topologyNodes: r[11],
    groups: r[12],
    groupMembers: r[13],
  }
}
