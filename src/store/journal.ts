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
import {CompiledQuery, sql, type Kysely} from 'kysely'
import {PART, type Changes} from '../core/state/changes.js'
import type {Row} from './backends.js'
import {PRIMARY_KEYS, type Database} from './schema.js'
import type {ImageRows} from './state-writer.js'
import {statementText} from './statement-text.js'

import {IMAGE_FORMAT, IMAGE_ROW_KINDS, KEY, knownKey, type ImageRowKind, type JournalRow} from './journal-keys.js'

export {IMAGE_FORMAT, KEY, knownKey, type JournalRow}

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

/** How many keys `ch` would record. */
function keyCount(ch: Changes): number {
  return (
    ch.providers.size +
    ch.deletedProviders.size +
    ch.consumers.size +
    ch.deletedConsumers.size +
    ch.classes.size +
    ch.deletedClasses.size +
    ch.traits.size +
    ch.deletedTraits.size +
    ch.topologyNodes.size +
    ch.deletedTopologyNodes.size +
    ch.groups.size +
    ch.deletedGroups.size +
    ch.moved.size +
    ch.aggregateNames.size +
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
  // A moved record is read again with its consumer's key.
  yield* plain(KEY.consumer, ch.moved)
  yield* plain(KEY.resourceClass, ch.classes)
  yield* plain(KEY.resourceClass, ch.deletedClasses)
  yield* plain(KEY.trait, ch.traits)
  yield* plain(KEY.trait, ch.deletedTraits)
  yield* plain(KEY.topologyNode, ch.topologyNodes)
  yield* plain(KEY.topologyNode, ch.deletedTopologyNodes)
  yield* plain(KEY.group, ch.groups)
  yield* plain(KEY.group, ch.deletedGroups)
  yield* plain(KEY.aggregateName, ch.aggregateNames)
  if (ch.topologyGeneration) yield {seq, kind: KEY.topologyGeneration, key: '', parts: 0}
}

const setMeta = (db: Kysely<Database>, key: string, value: number): CompiledQuery => statementText(db).setMeta(key, String(value))

/**
 * The statements that record `ch` as transaction `seq` (the counter's next value) and move the
 * counter, pruning the journal now and then. A change too large to journal moves the floor past
 * itself instead, so every other process loads again. With `image` (PostgreSQL, where reading
 * rows costs round trips and the server's work), a small change records its rows too: taken
 * when the statements are, so after the writer's (which number new providers).
 */
export function* recordStatements(
  db: Kysely<Database>,
  ch: Changes,
  seq: number,
  image: ((ch: Changes) => ImageRows) | null = null,
  recorded?: Recorded,
): Generator<CompiledQuery> {
  const count = keyCount(ch)
  if (count > MAX_JOURNALLED_KEYS) {
    yield setMeta(db, 'journal_floor', seq)
  } else {
    const text = statementText(db)
    const rows = [...rowsOf(ch, seq)]
    yield* text.insert('placemat_changes', rows)
    if (image && count <= IMAGE_MAX_KEYS) {
      const body = imageBody(rows, image(ch))
      if (body.length <= IMAGE_MAX_CHARS) {
        if (recorded) recorded.image = body
        yield text.insertOne('placemat_change_images', {seq, body, format: IMAGE_FORMAT})
      }
    }
  }
  if (seq % PRUNE_EVERY === 0 && seq > JOURNAL_KEEP) yield* pruneStatements(db, seq - JOURNAL_KEEP)
  yield setMeta(db, 'change_counter', seq)
}

/**
 * The keys a write's own check names when its outcome depends only on what it changes (see
 * Backend.commitKeyed): allocations only, consumers' and providers' generations, few enough that
 * its image is always recorded. Null for any other change, which needs the whole counter to
 * stand still.
 */
export function keyedKeys(ch: Changes): JournalRow[] | null {
  if (
    ch.deletedProviders.size ||
    ch.classes.size ||
    ch.deletedClasses.size ||
    ch.traits.size ||
    ch.deletedTraits.size ||
    ch.topologyNodes.size ||
    ch.deletedTopologyNodes.size ||
    ch.groups.size ||
    ch.deletedGroups.size ||
    ch.moved.size ||
    ch.aggregateNames.size ||
    ch.topologyGeneration
  ) {
    return null
  }
  if (keyCount(ch) > KEYED_MAX_KEYS) return null
  for (const parts of ch.providers.values()) if (parts !== PART.generation) return null
  return [...rowsOf(ch, 0)]
}

/** A keyed write changes at most this many keys (its image then stays well under IMAGE_MAX_CHARS). */
const KEYED_MAX_KEYS = 500

/**
 * recordStatements for a keyed write: the transaction's number is the counter's next value as
 * the server finds it under the lock (others may have committed since the writer's position), so
 * the counter moves first and the journal, the image and the pruning read it back.
 */
export function* keyedRecordStatements(
  db: Kysely<Database>,
  ch: Changes,
  keys: readonly JournalRow[],
  base: number,
  image: (ch: Changes) => ImageRows,
  recorded?: Recorded,
): Generator<CompiledQuery> {
  const text = statementText(db)
  const counter = text.integer('"value"')
  yield CompiledQuery.raw(`update placemat_meta set "value" = ${text.asText(`${counter} + 1`)} where "key" = 'change_counter'`)
  let seq = `(select ${counter} from placemat_meta where "key" = 'change_counter')`
  // MariaDB cannot read placemat_meta in the statement that updates it (the pruning's floor):
  // there the number is read once, into a session variable.
  if (!text.dialect.updateReadsItsTable) {
    yield CompiledQuery.raw(`set @placemat_seq = ${seq}`)
    seq = '@placemat_seq'
  }
  // At most KEYED_MAX_KEYS rows: one statement.
  if (keys.length) {
    yield text.text(
      `insert into placemat_changes (seq, kind, "key", parts) values ${keys.map(() => `(${seq}, ?, ?, ?)`).join(', ')}`,
      keys.flatMap((k) => [k.kind, k.key, k.parts]),
    )
  }
  const body = imageBody(keys, image(ch))
  if (recorded) recorded.image = body
  yield text.text(`insert into placemat_change_images (seq, body, format) values (${seq}, ?, ?)`, [body, IMAGE_FORMAT])
  // Pruning now and then: the number is the server's, so the writer's guess of it decides when,
  // and the floor is the server's number less JOURNAL_KEEP.
  if ((base + 1) % PRUNE_EVERY === 0) yield* pruneStatements(db, `(${seq} - ${JOURNAL_KEEP})`)
}

/**
 * The image a transaction's statements recorded (null: none, a change too large): a commit whose
 * answer was lost is found again by it (Commits.findLost), as no other transaction records the
 * same rows of the same keys.
 */
export interface Recorded {
  image: string | null
}

/** The transaction after `after` that recorded exactly `image`, under the write lock (so a commit still on its way has ended). */
export function imageStatement(db: Kysely<Database>, after: number, image: string): CompiledQuery {
  return db.selectFrom('placemat_change_images').select(['seq', 'body']).where('seq', '>', after).where('body', '=', image).compile()
}

/** An image as recorded: the transaction's keys (without their seq, the image row's own) and its rows. */
const imageBody = (keys: readonly JournalRow[], rows: ImageRows): string =>
  JSON.stringify({keys: keys.map((k) => [k.kind, k.key, k.parts]), rows})

/** The windows of a keyed write's answer (commitKeyed): the transactions others committed before it, after `position`. */
export function windowsBefore(images: Row[], position: number, topologyGeneration: number): {windows: Window[]; seq: number} {
  const seq = Number(images[images.length - 1].seq)
  const others = images.slice(0, -1).map((r) => ({seq: Number(r.seq), body: r.body, format: r.format}))
  const windows = imageWindows({counter: seq - 1, floor: 0, topologyGeneration}, position, others)
  if (!windows) throw new Error(`the images after ${position} are not whole (${others.map((r) => r.seq).join(', ')})`)
  return {windows, seq}
}

/** A transaction changing at most this many keys records its rows too (its image). */
export const IMAGE_MAX_KEYS = 2000

/** An image longer than this is not recorded (followers read the rows its keys name). */
const IMAGE_MAX_CHARS = 1 << 20

/** Images read by one catch-up at most; a node further behind reads the rows (one snapshot). */
const IMAGES_PER_CATCH_UP = 1000

/**
 * The head and the images recorded after `position`, in one statement and so one snapshot: every
 * transaction the head counts is among the images if it recorded one. Two index reads; the
 * second finds nothing when nothing changed. (PostgreSQL: the question a node asks before it
 * serves a read, answered with what it needs to catch up.)
 */
export function aheadStatement(db: Kysely<Database>, position: number): CompiledQuery {
  // concat, not a cast: a number as text in the same words on PostgreSQL and MariaDB.
  return sql`select ${sql.ref('key')}, ${sql.ref('value')}, null as body, null as format from placemat_meta where ${sql.ref('key')} in ('change_counter', 'journal_floor', 'topology_generation')
    union all
    select 'image', concat('', seq), body, format from (select seq, body, format from placemat_change_images where seq > ${position} order by seq limit ${IMAGES_PER_CATCH_UP}) i`.compile(
    db,
  )
}

/** What aheadStatement read: the head, and the images after the position in order. */
export interface Ahead {
  head: Head
  images: Row[]
}

export function readAhead(rows: Row[]): Ahead {
  const images = rows.filter((r) => r.key === 'image').map((r) => ({seq: Number(r.value), body: r.body, format: r.format}))
  images.sort((a, b) => a.seq - b.seq)
  return {head: readHead(rows.filter((r) => r.key !== 'image')), images}
}

/**
 * The windows of the transactions after `position` up to `head`, one per transaction, from their
 * images; null when one is missing (pruned, too large to record, or beyond this read) or is of a
 * shape this release does not know (another format, a field or a kind of row or key added since):
 * then the rows their keys name are read instead. `head` was read before `rows`, so every
 * transaction it counts is among them if it recorded one.
 */
export function imageWindows(head: Head, position: number, rows: Row[]): Window[] | null {
  if (head.floor > position || head.counter < position) return null
  const windows: Window[] = []
  for (const r of rows) {
    const seq = Number(r.seq)
    if (seq > head.counter) break
    if (seq !== position + windows.length + 1) return null
    const body = readImage(r)
    if (!body) return null
    windows.push({head, large: false, keys: body.keys.map(([kind, key, parts]) => ({seq, kind, key, parts})), ...body.rows})
  }
  return windows.length === head.counter - position ? windows : null
}

/** The kinds of row an image holds, as a set to ask. */
const IMAGE_ROW_KIND_SET: ReadonlySet<string> = new Set(IMAGE_ROW_KINDS)

/** An image's keys and rows, or null when it is not of a shape this release reads whole (see imageWindows). */
export function readImage(r: Row): {keys: Array<[string, string, number]>; rows: Record<keyof ImageRows, Row[]>} | null {
  if (r.format !== undefined && r.format !== null && Number(r.format) !== IMAGE_FORMAT) return null
  let body: unknown
  try {
    body = JSON.parse(String(r.body))
  } catch {
    return null
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null
  const {keys, rows, ...rest} = body as {keys?: unknown; rows?: unknown}
  if (Object.keys(rest).length || !Array.isArray(keys) || !rows || typeof rows !== 'object' || Array.isArray(rows)) return null
  for (const k of keys) {
    if (!Array.isArray(k) || k.length !== 3 || typeof k[0] !== 'string' || typeof k[1] !== 'string' || !knownKey({kind: k[0], parts: k[2]}))
      return null
  }
  const out = {} as Record<keyof ImageRows, Row[]>
  for (const kind of IMAGE_ROW_KINDS) (out as Record<string, Row[]>)[kind] = []
  for (const [kind, list] of Object.entries(rows)) {
    if (!IMAGE_ROW_KIND_SET.has(kind) || !Array.isArray(list)) return null
    ;(out as Record<string, Row[]>)[kind] = list as Row[]
  }
  return {keys: keys as Array<[string, string, number]>, rows: out}
}

/**
 * Drops the journal up to `floor` (a number, or an expression the server works out) and records
 * that processes behind it must load again.
 */
function pruneStatements(db: Kysely<Database>, floor: number | string): CompiledQuery[] {
  const text = statementText(db)
  const at = typeof floor === 'number' ? sql<number>`${floor}` : sql.raw<number>(floor)
  const value = sql.raw(text.integer('"value"'))
  return [
    sql`delete from placemat_changes where seq <= ${at}`.compile(db),
    sql`delete from placemat_change_images where seq <= ${at}`.compile(db),
    // Never lowers a floor a large change moved up.
    sql`update placemat_meta set ${sql.ref('value')} = ${typeof floor === 'number' ? String(floor) : sql.raw(text.asText(floor))} where ${sql.ref('key')} = 'journal_floor' and ${value} < ${at}`.compile(
      db,
    ),
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
  return statementText(db).text(`select "key", "value" from "placemat_meta" where "key" in (?, ?, ?)`, [
    'change_counter',
    'journal_floor',
    'topology_generation',
  ])
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
export interface Window extends Record<ImageRowKind, Row[]> {
  head: Head
  /** More than MAX_PATCH_KEYS keys were recorded since the position: none are read (a load is cheaper). */
  large: boolean
  /** A key of a kind (or part) this release does not know was recorded since: none are read, the State is loaded whole. */
  unknown?: boolean
  /** The keys recorded since the position, and those read again besides (see unsureKeys). */
  keys: JournalRow[]
}

/**
 * The keys recorded after `position`, in order, one more than MAX_PATCH_KEYS at most (then the
 * window is too large to patch). An index range from the position: nothing when nothing changed.
 */
export function keysStatement(db: Kysely<Database>, position: number): CompiledQuery {
  return statementText(db).text(`select "seq", "kind", "key", "parts" from "placemat_changes" where "seq" > ? order by "seq" limit ?`, [
    position,
    MAX_PATCH_KEYS + 1,
  ])
}

export function readKeys(rows: Row[]): {keys: JournalRow[]; large: boolean; unknown?: boolean} {
  if (rows.length > MAX_PATCH_KEYS) return {keys: [], large: true}
  const keys = rows.map((x) => ({seq: Number(x.seq), kind: String(x.kind), key: String(x.key), parts: Number(x.parts)}))
  // A newer release's key: what it names cannot be read as rows here, so nothing is patched.
  if (!keys.every(knownKey)) return {keys: [], large: false, unknown: true}
  return {keys, large: false}
}

/** Keys per statement when rows are read by key (a list of literals, so each plan is an index lookup). */
const KEYS_PER_STATEMENT = 5000

/**
 * The statements that read the rows `keys` name now, each tagged with the kind of row it reads;
 * none for a kind no key names. A provider's inventories, traits and aggregates and a consumer's
 * allocations come in storage order (`storageOrder`), the order a load reads them in.
 */
export function rowStatements(
  db: Kysely<Database>,
  keys: readonly JournalRow[],
  storageOrder: 'rowid' | 'ctid' | 'primary-key',
): Array<[ImageRowKind, CompiledQuery]> {
  const of = (kind: string, partBit = 0) => [
    ...new Set(keys.filter((k) => k.kind === kind && (!partBit || k.parts & partBit)).map((k) => k.key)),
  ]
  const text = statementText(db)
  const out: Array<[ImageRowKind, CompiledQuery]> = []
  const each = (kind: ImageRowKind, list: string[], table: keyof Database, column: string, orderBy: string[]) => {
    const order = storageOrder === 'primary-key' ? orderBy.flatMap((c) => (c === storageOrder ? PRIMARY_KEYS[table] : [c])) : orderBy
    for (let i = 0; i < list.length; i += KEYS_PER_STATEMENT)
      out.push([kind, text.selectWhereIn(table, column, list.slice(i, i + KEYS_PER_STATEMENT), order)])
  }
  const providers = of(KEY.provider)
  each('providers', providers, 'resource_providers', 'uuid', ['seq'])
  each('inventories', of(KEY.provider, PART.inventories), 'inventories', 'provider_uuid', [storageOrder])
  each('traits', of(KEY.provider, PART.traits), 'provider_traits', 'provider_uuid', [storageOrder])
  each('aggregates', of(KEY.provider, PART.aggregates), 'provider_aggregates', 'provider_uuid', [storageOrder])
  const consumers = of(KEY.consumer)
  each('consumers', consumers, 'consumers', 'uuid', [storageOrder])
  each('allocations', consumers, 'allocations', 'consumer_uuid', [storageOrder])
  each('moved', consumers, 'moved_consumers', 'uuid', [])
  each('classes', of(KEY.resourceClass), 'resource_classes', 'name', ['id'])
  each('traitNames', of(KEY.trait), 'traits', 'name', ['id'])
  each('topologyNodes', of(KEY.topologyNode), 'topology_nodes', 'uuid', [storageOrder])
  const groups = of(KEY.group)
  each('groups', groups, 'placement_groups', 'name', [storageOrder])
  each('groupMembers', groups, 'placement_group_members', 'group_name', ['group_name', 'seq'])
  each('aggregateNames', of(KEY.aggregateName), 'aggregate_names', 'uuid', [])
  return out
}

/** The window from its head, its keys and the answers to rowStatements (in their order). */
export function readWindow(
  head: Head,
  keys: {keys: JournalRow[]; large: boolean; unknown?: boolean},
  statements: Array<[ImageRowKind, CompiledQuery]>,
  results: Row[][],
): Window {
  const w = {head, large: keys.large, keys: keys.keys, ...(keys.unknown ? {unknown: true} : {})} as Window
  for (const kind of IMAGE_ROW_KINDS) w[kind] = []
  statements.forEach(([kind], i) => {
    for (const r of results[i]) w[kind].push(r)
  })
  return w
}

/** Every part of a provider: a key read again because a failed write may have changed any of it. */
const ALL_PARTS = PART.row | PART.generation | PART.inventories | PART.traits | PART.aggregates

/** The keys a failed write touched, to be read again (at position 0: they follow the journal's own). */
export function unsureKeys(ch: Changes): JournalRow[] {
  return [...rowsOf(ch, 0)].map((k) => (k.kind === KEY.provider ? {...k, parts: ALL_PARTS} : k))
}
