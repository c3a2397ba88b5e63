import {Kysely, Migrator, sql, type Insertable, type Transaction, type MigrationProvider} from 'kysely'
import {Changes, PART, State} from '../core/state.js'
import {keepIndexCurrent} from '../core/candidates/provider-index.js'
import {loadTables} from './state-loader.js'
import {STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS} from '../core/standard.js'
import {MAX_STATEMENT_PARAMETERS, describeTarget, openBackend, rowsPerStatement, type Backend, type Durability} from './backends.js'
import {migrations, LATEST_MIGRATION, type Database} from './schema.js'

export class SchemaOutOfDateError extends Error {
  constructor(
    readonly file: string,
    readonly pending: string[],
  ) {
    super(
      `database ${file} has schema migrations pending (${pending.join(', ')}); ` +
        `run \`placemat db upgrade --db ${file}\` first`,
    )
    this.name = 'SchemaOutOfDateError'
  }
}

/**
 * Test-only hook: with PLACEMAT_TEST_PAUSE_IN_TX=MS set, a write that changed something
 * waits MS milliseconds after its rows are written and before COMMIT, saying so on stderr,
 * so a test can kill the process in the middle of a transaction.
 */
const TEST_PAUSE_MS = Number(process.env.PLACEMAT_TEST_PAUSE_IN_TX) || 0

async function testPauseInTransaction(changes: Changes): Promise<void> {
  const ms = TEST_PAUSE_MS
  if (!ms || changes.empty) return
  process.stderr.write('placemat-test: paused in transaction\n')
  await new Promise((r) => setTimeout(r, ms))
}

const staticMigrations: MigrationProvider = {getMigrations: async () => migrations}

export interface OpenOptions {
  /** Create the schema on a new file, or run pending migrations (default: true for new files only). */
  migrate?: boolean
  readonly?: boolean
  /** How long a writer waits for another process's lock, ms. */
  busyTimeoutMs?: number
  /**
   * Checkpoint the WAL from a worker thread instead of inside the commits of write requests
   * (for the daemon: short writes, long-lived process).
   */
  backgroundCheckpoint?: boolean
  /** full (default): each COMMIT is on disk before it returns; see Durability. */
  durability?: Durability
}

/**
 * The persistent store: a kysely database plus the in-memory State it keeps exact.
 * Writes run `fn` on the State inside one database transaction that holds the database's
 * write lock before anything is read (BEGIN IMMEDIATE on SQLite, an advisory lock on
 * PostgreSQL), then write exactly what `fn` changed. Another process's commits are noticed
 * through a change mark (PRAGMA data_version; a counter row on PostgreSQL) and trigger a
 * reload before the next read or write.
 */
export class Store {
  readonly state = new State()
  private dataVersion = -1
  private closed = false
  private tail: Promise<unknown> = Promise.resolve()
  private pending = 0
  /** seq of the next provider row inserted. */
  private nextSeq = 1
  /** Writes waiting for their turn (see write). */
  private queue: QueuedWrite[] = []
  private drainScheduled = false
  /**
   * Told after each write transaction how long it ran (seconds, from its turn in the queue to
   * COMMIT or ROLLBACK) and whether it committed. One observer per store (the daemon's metrics).
   */
  onWrite: ((seconds: number, ok: boolean) => void) | null = null

  private constructor(
    /** The SQLite file or the PostgreSQL URL. */
    readonly file: string,
    private readonly backend: Backend,
  ) {}

  get db(): Kysely<Database> {
    return this.backend.db
  }

  static async open(file: string, options: OpenOptions = {}): Promise<Store> {
    const backend = await openBackend(file, options)
    const store = new Store(file, backend)
    try {
      const pending = await store.pendingMigrations()
      if (pending.length > 0) {
        if (!(options.migrate ?? backend.isNew)) throw new SchemaOutOfDateError(describeTarget(file), pending)
        await store.migrate()
      }
      if (!options.readonly) await store.ensureStandard()
      await store.reload()
      if (options.backgroundCheckpoint && !options.readonly) backend.serve()
    } catch (err) {
      await backend.close()
      throw err
    }
    return store
  }

  async pendingMigrations(): Promise<string[]> {
    const migrator = new Migrator({db: this.db, provider: staticMigrations})
    const all = await migrator.getMigrations()
    return all.filter((m) => !m.executedAt).map((m) => m.name)
  }

  async migrate(): Promise<string[]> {
    const migrator = new Migrator({db: this.db, provider: staticMigrations})
    const {error, results} = await migrator.migrateToLatest()
    if (error) throw error
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
  }

  get schemaVersion(): string {
    return LATEST_MIGRATION
  }

  /** Inserts any standard resource class or trait the database lacks. */
  private async ensureStandard(): Promise<void> {
    const now = Date.now()
    await this.db.transaction().execute(async (trx) => {
      const classes = new Set((await trx.selectFrom('resource_classes').select('name').execute()).map((r) => r.name))
      const missingClasses = STANDARD_RESOURCE_CLASSES.map((name, id) => ({id, name})).filter((c) => !classes.has(c.name))
      for (const c of missingClasses) {
        await trx.insertInto('resource_classes').values({...c, created_at: now, updated_at: now}).execute()
      }
      const traits = new Set((await trx.selectFrom('traits').select('name').execute()).map((r) => r.name))
      const missingTraits = STANDARD_TRAITS.filter((t) => !traits.has(t))
      if (missingTraits.length > 0) {
        const maxId = (await trx.selectFrom('traits').select(sql<number>`coalesce(max(id), 0)`.as('m')).executeTakeFirst())?.m ?? 0
        let id = maxId + 1
        for (const name of missingTraits) {
          await trx.insertInto('traits').values({id: id++, name, created_at: now, updated_at: now}).execute()
        }
      }
    })
  }

  /** Rebuilds the State from the database (at open, or with the queue to ourselves: see catchUp). */
  private async reload(): Promise<void> {
    await this.db.connection().execute((conn) => this.loadSnapshot(conn))
  }

  /** Loads the State from one consistent snapshot and remembers the change mark it reflects. */
  private async loadSnapshot(conn: Kysely<Database>): Promise<void> {
    await this.backend.beginRead(conn)
    try {
      // Read before the rows: a commit in between only makes the mark stale (one more reload).
      const mark = await this.backend.changeMark(conn)
      await this.loadInto(conn)
      await sql`commit`.execute(conn)
      this.dataVersion = mark
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => undefined)
      throw err
    }
  }

  private async loadInto(db: Kysely<Database> | Transaction<Database>): Promise<void> {
    const s = this.state
    s.providers.clear()
    s.providerByName.clear()
    s.consumers.clear()
    s.classes.clear()
    s.traits.clear()
    s.aggregateMembers.clear()
    s.topology.clear()
    s.groups.clear()
    s.reshapedAll()
    this.nextSeq = await loadTables(db, s, this.backend.rowArrays)
    s.version += 1
  }

  /**
   * Runs writes and reloads one at a time, first come first served. (kysely's own connection
   * lock wakes every waiter on each release; with many requests in flight that churn shows.)
   */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.pending++
    const run = this.tail.then(fn)
    const done = () => {
      this.pending--
    }
    this.tail = run.then(done, done)
    return run
  }

  /** Makes the State current with what other processes committed. Call before serving a read. */
  refresh(): Promise<State> {
    if (this.pending === 0) {
      // Nothing of ours in flight and nobody else committed: the State is current, no waiting.
      const mark = this.backend.changeMark()
      if (typeof mark === 'number') {
        if (mark === this.dataVersion) return Promise.resolve(this.state)
      } else {
        return mark.then((m) => (m === this.dataVersion && this.pending === 0 ? this.state : this.catchUp()))
      }
    }
    return this.catchUp()
  }

  /**
   * Waits for our writes in flight (the State may hold one not yet committed), and reloads if
   * another process committed.
   */
  private catchUp(): Promise<State> {
    return this.exclusive(async () => {
      if ((await this.backend.changeMark()) !== this.dataVersion) await this.reload()
      return this.state
    })
  }

  /** Serves a read from the current State without waiting on a database round trip when nothing changed. */
  read<T>(fn: (state: State) => T): Promise<T> {
    return this.refresh().then(fn)
  }

  /**
   * Runs `fn` against the State inside one write transaction and persists what it changed.
   * If `fn` throws, nothing of it is written; if it had already changed the State, the State is
   * reloaded from the database so memory never holds what the file does not.
   *
   * Writes that arrive while another is being committed are committed together, each in its
   * turn against the State the ones before it left, in one transaction with one fsync (group
   * commit): none is acknowledged before all are on disk, and a refusal of one (its `fn`
   * throwing before it changed anything) does not touch the others.
   */
  write<T>(fn: (state: State, now: number) => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'))
    return new Promise<T>((resolve, reject) => {
      this.queue.push({fn, resolve: resolve as (v: unknown) => void, reject, started: performance.now()})
      if (!this.drainScheduled) {
        this.drainScheduled = true
        void this.exclusive(() => this.drain())
      }
    })
  }

  /**
   * Runs `fn` against the State as a write would, and writes nothing: the State is then stale
   * and is read again before the next read or write. For a dry run in a process that has the
   * file to itself (the CLI's --db), where trying a plan on a copy of a million providers
   * would double the memory.
   */
  rehearse<T>(fn: (state: State, now: number) => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'))
    return this.exclusive(async () => {
      this.state.changes = new Changes()
      try {
        return fn(this.state, Date.now())
      } finally {
        this.state.changes = null
        this.dataVersion = -1
      }
    })
  }

  /** Commits the writes waiting, a group at a time. */
  private async drain(): Promise<void> {
    // Let requests already received join this group before it starts.
    await new Promise((r) => setImmediate(r))
    this.drainScheduled = false
    const group = this.queue.splice(0, MAX_GROUP)
    if (this.queue.length) {
      this.drainScheduled = true
      void this.exclusive(() => this.drain())
    }
    if (group.length === 0) return
    if (!(await this.writeGroup(group))) {
      // The group failed as a whole (a write changed the State and then threw, or the database
      // refused): nothing was committed; each write is tried again on its own.
      for (const w of group) await this.writeGroup([w])
    }
  }

  /**
   * One transaction for `group`; settles each write and returns true, or returns false (having
   * settled nothing) when a group of several failed as a whole and must be run one by one.
   */
  private writeGroup(group: QueuedWrite[]): Promise<boolean> {
    return this.db.connection().execute(async (conn) => {
      const all = new Changes()
      const outcomes: Array<{ok: true; value: unknown} | {ok: false; error: unknown}> = []
      let mark: number
      try {
        mark = await this.backend.beginWrite(conn)
        if (mark !== this.dataVersion) {
          await this.loadInto(conn)
          this.dataVersion = mark
        }
        const now = Date.now()
        for (const w of group) {
          const changes = new Changes()
          this.state.changes = changes
          try {
            outcomes.push({ok: true, value: w.fn(this.state, now)})
          } catch (error) {
            if (!changes.empty) {
              all.absorb(changes) // the State holds part of it: the whole group is undone
              throw error
            }
            outcomes.push({ok: false, error})
          } finally {
            this.state.changes = null
          }
          all.absorb(changes)
        }
        if (!all.empty) await this.flush(conn, all)
        await testPauseInTransaction(all)
        mark = await this.backend.commitWrite(conn, mark, !all.empty)
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => undefined)
        if (!all.empty) {
          // Memory may hold what the database does not: load it again, and if even that fails
          // (the connection is gone), make sure the next request reloads before it reads.
          this.dataVersion = -1
          await this.loadSnapshot(conn).catch(() => undefined)
        }
        if (group.length > 1) return false
        this.settle(group[0], {ok: false, error: err})
        return true
      }
      this.dataVersion = mark
      if (!all.empty) {
        this.state.version += 1
        // The provider index follows the write now, touching what it changed, so the next
        // query does not wait for it.
        keepIndexCurrent(this.state)
      }
      group.forEach((w, k) => this.settle(w, outcomes[k]))
      return true
    })
  }

  private settle(w: QueuedWrite, outcome: {ok: true; value: unknown} | {ok: false; error: unknown}): void {
    const observer = this.onWrite
    if (observer) {
      try {
        observer((performance.now() - w.started) / 1000, outcome.ok)
      } catch {
        // an observer never changes a write's outcome
      }
    }
    if (outcome.ok) w.resolve(outcome.value)
    else w.reject(outcome.error)
  }

  /**
   * Writes what `ch` says changed, with a few statements per kind of row (multi-row inserts and
   * deletes by lists of keys), so that a batch of many providers costs statements by the
   * thousand rows, not by the row.
   */
  private async flush(db: Kysely<Database>, ch: Changes): Promise<void> {
    const s = this.state
    const deleted = [...ch.deletedProviders]
    await deleteWhereIn(db, 'resource_providers', 'uuid', deleted)
    for (const table of ['inventories', 'provider_traits', 'provider_aggregates', 'allocations'] as const) {
      await deleteWhereIn(db, table, 'provider_uuid', deleted)
    }
    const gone = [...ch.deletedConsumers]
    await deleteWhereIn(db, 'consumers', 'uuid', gone)
    await deleteWhereIn(db, 'allocations', 'consumer_uuid', gone)
    for (const name of ch.deletedClasses) await db.deleteFrom('resource_classes').where('name', '=', name).execute()
    for (const name of ch.deletedTraits) {
      await db.deleteFrom('traits').where('name', '=', name).execute()
      await db.deleteFrom('provider_traits').where('trait', '=', name).execute()
    }
    for (const name of ch.classes) {
      const c = s.classes.get(name)!
      await db
        .insertInto('resource_classes')
        .values({id: c.id, name: c.name, created_at: c.createdAt, updated_at: c.updatedAt})
        .onConflict((oc) => oc.column('id').doUpdateSet({name: c.name, updated_at: c.updatedAt}))
        .execute()
    }
    for (const name of ch.traits) {
      const t = s.traits.get(name)!
      await db
        .insertInto('traits')
        .values({id: t.id, name: t.name, created_at: t.createdAt, updated_at: t.updatedAt})
        .onConflict((oc) => oc.column('id').doUpdateSet({name: t.name, updated_at: t.updatedAt}))
        .execute()
    }
    // A chunk of providers at a time: rows for a million providers are never all in memory.
    for (const chunk of batches(ch.providers, FLUSH_CHUNK)) await this.flushProviders(db, chunk)
    for (const uuid of ch.deletedTopologyNodes) await db.deleteFrom('topology_nodes').where('uuid', '=', uuid).execute()
    for (const uuid of ch.topologyNodes) {
      const n = s.topology.get(uuid)
      if (!n) continue
      await db
        .insertInto('topology_nodes')
        .values({uuid, name: n.name, level: n.level, parent_uuid: n.parent, created_at: n.createdAt, updated_at: n.updatedAt})
        .onConflict((oc) => oc.column('uuid').doUpdateSet({name: n.name, level: n.level, parent_uuid: n.parent, updated_at: n.updatedAt}))
        .execute()
    }
    if (ch.topologyGeneration) {
      const value = String(s.topologyGeneration)
      await db
        .insertInto('placemat_meta')
        .values({key: 'topology_generation', value})
        .onConflict((oc) => oc.column('key').doUpdateSet({value}))
        .execute()
    }
    for (const chunk of batches(ch.consumers, FLUSH_CHUNK)) await this.flushConsumers(db, chunk)
    await this.flushGroups(db, ch)
  }

  /** A changed group's row and its whole member list (groups are small, and change whole). */
  private async flushGroups(db: Kysely<Database>, ch: Changes): Promise<void> {
    const names = [...ch.deletedGroups, ...ch.groups]
    if (names.length === 0) return
    await deleteWhereIn(db, 'placement_group_members', 'group_name', names)
    await deleteWhereIn(db, 'placement_groups', 'name', names)
    for (const name of ch.groups) {
      const g = this.state.groups.get(name)
      if (!g) continue
      await db
        .insertInto('placement_groups')
        .values({
          name,
          policy: g.policy,
          level: g.level,
          max_per: g.maxPer ?? null,
          max_skew: g.maxSkew ?? null,
          soft: g.soft ? 1 : 0,
          generation: g.generation,
          created_at: g.createdAt,
          updated_at: g.updatedAt,
        })
        .execute()
      const members = [...g.members].map((consumer_uuid, seq) => ({group_name: name, consumer_uuid, seq}))
      for (const rows of chunksOf(members)) await db.insertInto('placement_group_members').values(rows).execute()
    }
  }

  /** Writes the rows of these changed consumers and their allocations. */
  private async flushConsumers(db: Kysely<Database>, uuids: string[]): Promise<void> {
    const s = this.state
    const consumerRows: Insertable<Database['consumers']>[] = []
    const allocationRows: Insertable<Database['allocations']>[] = []
    for (const uuid of uuids) {
      const c = s.consumers.get(uuid)
      if (!c) continue
      consumerRows.push({
        uuid,
        project_id: c.project,
        user_id: c.user,
        consumer_type: c.type,
        generation: c.generation,
        created_at: c.createdAt,
        updated_at: c.updatedAt,
      })
      for (const [provider_uuid, amounts] of c.allocations) {
        for (const [resource_class, used] of amounts) allocationRows.push({consumer_uuid: uuid, provider_uuid, resource_class, used})
      }
    }
    for (const chunk of chunksOf(consumerRows)) {
      await db
        .insertInto('consumers')
        .values(chunk)
        .onConflict((oc) =>
          oc.column('uuid').doUpdateSet((eb) => ({
            project_id: eb.ref('excluded.project_id'),
            user_id: eb.ref('excluded.user_id'),
            consumer_type: eb.ref('excluded.consumer_type'),
            generation: eb.ref('excluded.generation'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute()
    }
    await deleteWhereIn(db, 'allocations', 'consumer_uuid', consumerRows.map((c) => c.uuid))
    await insertRows(db, 'allocations', allocationRows)
  }

  /** Writes the rows of these changed providers. */
  private async flushProviders(db: Kysely<Database>, providers: [string, number][]): Promise<void> {
    const s = this.state
    const rows: Insertable<Database['resource_providers']>[] = []
    const parts = {inventories: [] as string[], traits: [] as string[], aggregates: [] as string[]}
    const inventoryRows: Insertable<Database['inventories']>[] = []
    const traitRows: Insertable<Database['provider_traits']>[] = []
    const aggregateRows: Insertable<Database['provider_aggregates']>[] = []
    for (const [uuid, changed] of providers) {
      const p = s.providers.get(uuid)
      if (!p) continue
      if (changed & PART.row) {
        rows.push({
          uuid,
          name: p.name,
          generation: p.generation,
          parent_uuid: p.parent,
          root_uuid: p.root,
          created_at: p.createdAt,
          updated_at: p.updatedAt,
          seq: this.nextSeq++, // kept by an update: numbers may be skipped, never reordered
        })
      } else if (changed & PART.generation) {
        // The common case (every allocation write bumps its providers): two columns, no index.
        await db.updateTable('resource_providers').set({generation: p.generation, updated_at: p.updatedAt}).where('uuid', '=', uuid).execute()
      }
      if (changed & PART.inventories) {
        parts.inventories.push(uuid)
        for (const [rc, inv] of p.inventories) inventoryRows.push({provider_uuid: uuid, resource_class: rc, ...inv})
      }
      if (changed & PART.traits) {
        parts.traits.push(uuid)
        for (const trait of p.traits) traitRows.push({provider_uuid: uuid, trait})
      }
      if (changed & PART.aggregates) {
        parts.aggregates.push(uuid)
        for (const aggregate_uuid of p.aggregates) aggregateRows.push({provider_uuid: uuid, aggregate_uuid})
      }
    }
    for (const chunk of chunksOf(rows)) {
      await db
        .insertInto('resource_providers')
        .values(chunk)
        .onConflict((oc) =>
          oc.column('uuid').doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            generation: eb.ref('excluded.generation'),
            parent_uuid: eb.ref('excluded.parent_uuid'),
            root_uuid: eb.ref('excluded.root_uuid'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute()
    }
    await deleteWhereIn(db, 'inventories', 'provider_uuid', parts.inventories)
    await insertRows(db, 'inventories', inventoryRows)
    await deleteWhereIn(db, 'provider_traits', 'provider_uuid', parts.traits)
    await insertRows(db, 'provider_traits', traitRows)
    await deleteWhereIn(db, 'provider_aggregates', 'provider_uuid', parts.aggregates)
    await insertRows(db, 'provider_aggregates', aggregateRows)
  }

  /**
   * Asks the database a trivial question (select 1) through the store's own connection; rejects
   * when it fails or takes longer than `timeoutMs`. For health checks: it does not queue behind
   * the store's writes, though SQLite's single connection answers after the one in progress.
   */
  async ping(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
      timer.unref()
    })
    try {
      await Promise.race([sql`select 1`.execute(this.db), timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    // Writes already accepted finish first, including groups queued behind the one running.
    while (this.pending > 0) await this.tail
    await this.backend.close()
  }
}

/** A write waiting in the store's queue. */
interface QueuedWrite {
  fn: (state: State, now: number) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  started: number
}

/** Writes committed together at most. */
const MAX_GROUP = 64

/** Providers (or consumers) whose rows are built and written together. */
const FLUSH_CHUNK = 5000

/** `items` in arrays of `size` (the last one shorter). */
function* batches<T>(items: Iterable<T>, size: number): Generator<T[]> {
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

/** Rows in chunks that keep one multi-row statement under the parameter cap. */
function chunksOf<T extends object>(rows: T[]): Generator<T[]> {
  return batches(rows, rows.length ? rowsPerStatement(Object.keys(rows[0]).length) : 1)
}

async function insertRows<T extends 'inventories' | 'provider_traits' | 'provider_aggregates' | 'allocations'>(
  db: Kysely<Database>,
  table: T,
  rows: Insertable<Database[T]>[],
): Promise<void> {
  for (const chunk of chunksOf(rows)) await db.insertInto(table).values(chunk as any).execute()
}

/** Deletes the rows whose `column` is one of `keys`, a chunk of keys per statement. */
async function deleteWhereIn(db: Kysely<Database>, table: keyof Database, column: string, keys: string[]): Promise<void> {
  for (const chunk of batches(keys, MAX_STATEMENT_PARAMETERS)) {
    await db.deleteFrom(table).where(sql.ref(column), chunk.length === 1 ? '=' : 'in', chunk.length === 1 ? chunk[0] : chunk).execute()
  }
}
