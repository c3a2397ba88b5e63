import {Migrator, sql, type CompiledQuery, type MigrationProvider} from 'kysely'
import {Changes, State} from '../core/state.js'
import {keepIndexCurrent} from '../core/candidates/provider-index.js'
import {inAnyGroup} from '../core/group-writes.js'
import {loadTables} from './state-loader.js'
import {STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS} from '../core/standard.js'
import {describeTarget, isDatabaseUrl, openBackend, type Backend, type BackendOptions, type Row, type Session} from './backends.js'
import {DatabaseUnavailableError, asDatabaseError, databaseFault, describeCause, type DatabaseFault} from './database-faults.js'
import {MAX_PATCH_KEYS, aheadStatement, headStatement, imageWindows, invalidateStatements, keyedKeys, keyedRecordStatements, readAhead, windowsBefore, type Ahead, keysStatement, readHead, readKeys, readWindow, recordStatements, rowStatements, unsureKeys, type Head, type JournalRow, type Window} from './journal.js'
import {applyWindow} from './state-patch.js'
import {StateWriter, imageRows, type ImageRows} from './state-writer.js'
import {migrations, LATEST_MIGRATION} from './schema.js'

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

/** The database did not answer within --db-wait. */
export class DatabaseWaitError extends Error {
  constructor(
    readonly target: string,
    override readonly cause: unknown,
  ) {
    super(`database ${target} did not answer within the wait (${databaseFault(cause) ?? 'unavailable'}: ${describeCause(cause)})`)
    this.name = 'DatabaseWaitError'
  }
}

const staticMigrations: MigrationProvider = {getMigrations: async () => migrations}

export interface OpenOptions extends BackendOptions {
  /** Create the schema on a new file, or run pending migrations (default: true for new files only). */
  migrate?: boolean
  /**
   * Checkpoint the WAL from a worker thread instead of inside the commits of write requests
   * (for the daemon: short writes, long-lived process).
   */
  backgroundCheckpoint?: boolean
  /** Test hook: waits this long (ms) inside each write transaction that changed something, before COMMIT. */
  pauseInTransactionMs?: number
}

/** What a store tells its owner (the daemon's log and metrics) besides each write's timing. */
export interface StoreObserver {
  /** Another process's commits were applied: `keys` changed, in `seconds`. */
  caughtUp?(keys: number, seconds: number, from: 'images' | 'rows'): void
  /** The State was loaded whole again, and why. */
  reloaded?(reason: string, seconds: number): void
  /** A database call failed for a reason of the database's. */
  fault?(kind: DatabaseFault, err: unknown): void
  /** A connection was opened again after one was lost. */
  reconnected?(): void
  /** A write lost its connection during COMMIT: whether it committed is not known (the State follows the database). */
  commitUnknown?(err: unknown): void
  /**
   * A write made in one round trip found that another process had committed first (or was too
   * big for one round trip): it runs again under the lock.
   */
  writeRetried?(why: 'moved' | 'too-big'): void
}

/** What a store's health check says (see Store.health). */
export interface StoreHealth {
  status: 'ok' | 'catching-up' | 'starting' | DatabaseFault
  journal: {position: number; head: number}
}

/**
 * The persistent store: a database plus the in-memory State it keeps exact.
 *
 * Writes run `fn` on the State inside one database transaction that holds the database's write
 * lock before anything is read (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL), then
 * write exactly what `fn` changed and record its keys in the change journal (journal.ts). Other
 * processes' commits are noticed through a change mark (PRAGMA data_version; the change counter
 * on PostgreSQL) and applied from the journal: only the rows they changed are read again.
 */
export class Store {
  readonly state = new State()
  /** The journal position the State reflects. */
  private position = 0
  /** The change mark at which the State was last known current (-1: ask the database). */
  private seenMark = -1
  /**
   * PostgreSQL: the State holds every commit made before this time (performance.now()): the send
   * time of the last round trip that found the change counter at our position.
   */
  private currentAsOf = -Infinity
  /** The probe of the change counter in flight, which reads arriving before it was sent share. */
  private probe: {sentAt: number; counter: Promise<number>} | null = null
  /** PostgreSQL: when another node's commit was last applied (see OTHERS_WRITING_MS). */
  private othersWroteAt = -Infinity
  /** PostgreSQL: the last probe's head and images, while the State is still at their `from`. */
  private ahead: (Ahead & {from: number}) | null = null
  /** PostgreSQL: the share of recent writes tried in one round trip that another node overtook. */
  private overtakenRate = 0
  /** PostgreSQL: writes that took the lock first without trying, since the last try. */
  private lockedInARow = 0
  /** The exclusive turn running now (or the last one). */
  private running: Promise<unknown> = Promise.resolve()
  /**
   * Keys a failed write (or a rehearsal) left the State unsure of: read again from the database
   * with the next catch-up; 'all' when there are too many to name (the State is loaded again).
   */
  private suspect: JournalRow[] | 'all' | null = null
  private writer!: StateWriter
  private closed = false
  private tail: Promise<unknown> = Promise.resolve()
  private pendingCount = 0
  /** Writes waiting for their turn (see write). */
  private queue: QueuedWrite[] = []
  private drainScheduled = false
  /** A catch-up waiting for its turn, which readers arriving meanwhile share. */
  private queuedCatchUp: Promise<State> | null = null
  /** The newest journal position this process has seen in the database (health: how far behind it is). */
  private head = 0
  /**
   * Told after each write transaction how long it ran (seconds, from its turn in the queue to
   * COMMIT or ROLLBACK) and whether it committed. One observer per store (the daemon's metrics).
   */
  onWrite: ((seconds: number, ok: boolean) => void) | null = null
  observer: StoreObserver | null = null

  private backend!: Backend
  /** Set once the database answered and the State is loaded (see start). */
  private started = false
  /** True while the State is being loaded whole. */
  private loading = false
  /** True while the State holds what is not committed (a write between its turn and COMMIT, a load). */
  private dirty = false
  /** The fault the last write met, until a write commits again (a full disk shows only there). */
  private writeFault: DatabaseFault | null = null

  private constructor(
    /** The SQLite file or the PostgreSQL URL. */
    readonly file: string,
    private readonly options: OpenOptions,
  ) {
  }

  get db() {
    return this.backend.db
  }

  /** Whether the State is being loaded whole now (at start, or behind the journal). */
  get loadingNow(): boolean {
    return this.loading
  }

  /** Whether the database answered and the State is loaded (reads and writes are served). */
  get ready(): boolean {
    return this.started
  }

  get kind(): 'sqlite' | 'postgres' {
    return isDatabaseUrl(this.file) ? 'postgres' : 'sqlite'
  }

  /** Opens the database and loads the State; rejects as the first attempt fails. */
  static async open(file: string, options: OpenOptions = {}): Promise<Store> {
    const store = Store.create(file, options)
    await store.start()
    return store
  }

  /**
   * A store that is not open yet: reads and writes are refused with 503 ('starting') until
   * `start` has opened it (a daemon listens, and says it is starting, while its database is away).
   */
  static create(file: string, options: OpenOptions = {}): Store {
    return new Store(file, options)
  }

  /**
   * Opens the database, migrating and seeding it as told, and loads the State. With `retry`, a
   * database fault (unreachable, timed out, starting up) is tried again with backoff until the
   * database answers, `retry.waitMs` (if any) has passed, or `retry.signal` aborts.
   */
  async start(retry?: {waitMs?: number; signal?: AbortSignal; onRetry?: (err: unknown, delayMs: number) => void}): Promise<void> {
    const deadline = retry?.waitMs !== undefined ? Date.now() + retry.waitMs : Infinity
    for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
      try {
        await this.openOnce()
        return
      } catch (err) {
        const fault = databaseFault(err)
        if (!retry || !fault || retry.signal?.aborted) throw err
        const wait = Math.min(delay, deadline - Date.now())
        if (wait <= 0) throw new DatabaseWaitError(describeTarget(this.file), err)
        retry.onRetry?.(err, wait)
        await new Promise((r) => setTimeout(r, wait))
        if (retry.signal?.aborted) throw err
      }
    }
  }

  private async openOnce(): Promise<void> {
    const options = this.options
    const backend = await openBackend(this.file, options)
    this.backend = backend
    this.writer = new StateWriter(backend.db)
    backend.observer = {
      fault: (kind, err) => this.observer?.fault?.(kind, err),
      reconnect: () => this.observer?.reconnected?.(),
    }
    try {
      const pending = await this.pendingMigrations()
      if (pending.length > 0) {
        if (!(options.migrate ?? backend.isNew)) throw new SchemaOutOfDateError(describeTarget(this.file), pending)
        await this.migrate()
      }
      if (!options.readonly) await this.ensureStandard()
      await backend.session((s) => this.load(s, null))
      if (options.backgroundCheckpoint && !options.readonly) backend.serve()
      this.started = true
    } catch (err) {
      await backend.close().catch(() => undefined)
      throw err
    }
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

  /** Loads the State whole again from the database (a check that memory and the database agree). */
  reload(): Promise<void> {
    return this.exclusive(() => this.backend.session((s) => this.load(s, 'asked')))
  }

  /**
   * Inserts any standard resource class or trait the database lacks (a newer placemat's); others
   * then load everything again, as after any write made outside the journal.
   */
  private async ensureStandard(): Promise<void> {
    const db = this.db
    await this.backend.session(async (s) => {
      const opening = this.backend.beginWrite()
      const [classRows, traitRows, headRows] = (
        await s.run([
          ...opening,
          db.selectFrom('resource_classes').select('name').compile(),
          db.selectFrom('traits').select(['name', 'id']).compile(),
          headStatement(db),
        ])
      ).slice(opening.length)
      const classes = new Set(classRows.map((r) => r.name))
      const traits = new Set(traitRows.map((r) => r.name))
      const missingClasses = STANDARD_RESOURCE_CLASSES.map((name, id) => ({id, name})).filter((c) => !classes.has(c.name))
      const missingTraits = STANDARD_TRAITS.filter((t) => !traits.has(t))
      if (!missingClasses.length && !missingTraits.length) {
        await s.run([sql`commit`.compile(db)])
        return
      }
      const now = Date.now()
      const writes: CompiledQuery[] = missingClasses.map((c) => db.insertInto('resource_classes').values({...c, created_at: now, updated_at: now}).compile())
      let id = traitRows.reduce((m, r) => Math.max(m, Number(r.id)), 0) + 1
      for (const name of missingTraits) writes.push(db.insertInto('traits').values({id: id++, name, created_at: now, updated_at: now}).compile())
      const head = readHead(headRows)
      await s.run([...writes, ...invalidateStatements(db, head.counter + 1), sql`commit`.compile(db)])
    })
  }

  /**
   * Loads the State whole from one consistent snapshot: a read snapshot of its own, or (`inWrite`)
   * the write transaction already open on `s`, whose lock keeps every other writer out.
   */
  private async load(s: Session, reason: string | null, inWrite = false): Promise<void> {
    this.loading = true
    const wasDirty = this.dirty
    this.dirty = true
    try {
      await this.loadWhole(s, reason, inWrite)
    } finally {
      this.loading = false
      this.dirty = wasDirty
    }
  }

  private async loadWhole(s: Session, reason: string | null, inWrite: boolean): Promise<void> {
    const t0 = performance.now()
    const db = this.db
    const [head] = (await s.run([...(inWrite ? [] : this.backend.beginRead()), headStatement(db)])).slice(inWrite ? 0 : -1)
    const st = this.state
    st.providers.clear()
    st.providerByName.clear()
    st.consumers.clear()
    st.classes.clear()
    st.traits.clear()
    st.aggregateMembers.clear()
    st.topology.clear()
    st.groups.clear()
    st.moved.clear()
    st.aggregateNames.clear()
    st.reshapedAll()
    // Until it is whole, the State is not what any position says.
    this.position = -1
    this.seenMark = -1
    this.writer.nextSeq = await loadTables(s, db, st)
    if (!inWrite) await s.run([sql`commit`.compile(db)])
    const h = readHead(head)
    st.topologyGeneration = h.topologyGeneration
    st.version += 1
    this.position = h.counter
    this.head = Math.max(this.head, h.counter)
    this.suspect = null
    if (reason !== null) {
      this.observer?.reloaded?.(reason, (performance.now() - t0) / 1000)
    }
  }

  /**
   * Makes the State what the window says (or loads it whole when the window is out of reach),
   * with the keys a failed write left unsure read again in the same snapshot.
   */
  private async apply(s: Session, w: Window, inWrite: boolean): Promise<void> {
    this.head = Math.max(this.head, w.head.counter)
    if (w.head.counter === this.position && !this.suspect) return
    if (this.position < w.head.floor || w.large || this.suspect === 'all') {
      const reason =
        this.suspect === 'all'
          ? 'a failed write or a rehearsal touched too much to read again'
          : this.position < w.head.floor
            ? `fell behind the journal (at ${this.position}, pruned to ${w.head.floor})`
            : `more than ${MAX_PATCH_KEYS} changes to apply`
      return this.load(s, reason, inWrite)
    }
    const t0 = performance.now()
    const maxSeq = applyWindow(this.state, w, this.writer.nextSeq)
    this.writer.nextSeq = Math.max(this.writer.nextSeq, maxSeq + 1)
    this.position = w.head.counter
    this.suspect = null
    this.state.version += 1
    keepIndexCurrent(this.state)
    this.observer?.caughtUp?.(w.keys.length, (performance.now() - t0) / 1000, 'rows')
  }

  /**
   * PostgreSQL: how a write records its rows for the other nodes (its image), taken from the
   * State once the write has run. SQLite's followers read rows from the file at no round trip.
   */
  private image(): ((ch: Changes) => ImageRows) | null {
    return this.kind === 'postgres' ? (ch) => imageRows(this.state, ch) : null
  }

  /**
   * PostgreSQL: catches up from the images of the transactions since our position, in one round
   * trip and one snapshot: the head with the images (aheadStatement), and the rows of the keys a
   * failed or overtaken write left unsure, read again. False when an image is missing (a large
   * change, a pruned journal, a node far behind) or everything is unsure: the caller reads the
   * window's rows instead.
   */
  private async followImages(): Promise<boolean> {
    if (!this.canFollowImages()) return false
    // What the last probe read from this position, if nothing was applied since: no round trip.
    if (!this.unsure().length && this.ahead?.from === this.position) {
      const ahead = this.ahead
      this.ahead = null
      return this.applyAhead(ahead, [], [], [])
    }
    this.ahead = null
    return this.backend.session((s) => this.readAndApplyAhead(s, this.backend.beginRead(), [sql`commit`.compile(this.db)]))
  }

  private canFollowImages(): boolean {
    return this.kind === 'postgres' && this.suspect !== 'all' && this.position >= 0
  }

  /**
   * `opening` (sent and emptied), the head with the images since our position and the unsure
   * keys' rows, then `closing`, in one round trip; applied as applyAhead does.
   */
  private async readAndApplyAhead(s: Session, opening: CompiledQuery[], closing: CompiledQuery[]): Promise<boolean> {
    const unsure = this.unsure()
    const again = rowStatements(this.db, unsure, 'ctid')
    const results = await s.run([...opening, aheadStatement(this.db, this.position), ...again.map(([, q]) => q), ...closing])
    const sent = opening.length
    opening.length = 0
    const ahead = readAhead(results[sent])
    this.head = Math.max(this.head, ahead.head.counter)
    return this.applyAhead(ahead, unsure, again, results.slice(sent + 1, sent + 1 + again.length))
  }

  /**
   * Applies what aheadStatement read (the images since our position), then the rows read in the
   * same snapshot for the unsure keys; false, changing nothing, when the images are not whole.
   */
  private applyAhead(ahead: Ahead, unsure: JournalRow[], again: ReturnType<typeof rowStatements>, rows: Row[][]): boolean {
    const {head, images} = ahead
    const windows = imageWindows(head, this.position, images)
    if (!windows) return false
    if (windows.length === 0 && unsure.length === 0) return true
    this.applyImages(windows)
    this.position = head.counter
    if (unsure.length) {
      const t0 = performance.now()
      this.writer.nextSeq = Math.max(this.writer.nextSeq, applyWindow(this.state, readWindow(head, {keys: unsure, large: false}, again, rows), this.writer.nextSeq) + 1)
      this.suspect = null
      this.observer?.caughtUp?.(unsure.length, (performance.now() - t0) / 1000, 'rows')
    }
    this.state.version += 1
    keepIndexCurrent(this.state)
    return true
  }

  /**
   * PostgreSQL, in a write: BEGIN and the lock (`opening`, emptied once sent), then what others
   * committed since our position from their images, with the unsure keys' rows, in that one round
   * trip (nobody commits while we hold the lock). False when that cannot do: the caller reads the
   * window's keys and rows.
   */
  private followUnderLock(s: Session, opening: CompiledQuery[]): Promise<boolean> {
    return this.canFollowImages() ? this.readAndApplyAhead(s, opening, []) : Promise.resolve(false)
  }

  /** Applies other processes' transactions from their images, in order. */
  private applyImages(windows: Window[]): void {
    if (windows.length === 0) return
    const t0 = performance.now()
    this.othersWroteAt = t0
    let keys = 0
    try {
      for (const w of windows) {
        this.writer.nextSeq = Math.max(this.writer.nextSeq, applyWindow(this.state, w, this.writer.nextSeq) + 1)
        keys += w.keys.length
      }
    } catch (err) {
      // Half applied: what the State holds is not what any position says.
      this.suspect = 'all'
      throw err
    }
    this.observer?.caughtUp?.(keys, (performance.now() - t0) / 1000, 'images')
  }

  /** The statement that reads the journal's keys after our position (none while the State is not whole). */
  private keysStatement(): CompiledQuery {
    return keysStatement(this.db, this.position < 0 ? Number.MAX_SAFE_INTEGER : this.position)
  }

  /**
   * Reads the rows that the keys after our position (and the keys a failed write left unsure)
   * name, on `s` inside the transaction it has open, then `close`, and applies them: one round
   * trip, and none when nothing is to be read.
   */
  private async applySince(s: Session, head: Head, keyRows: Row[], inWrite: boolean, close: CompiledQuery[]): Promise<void> {
    const journal = readKeys(keyRows)
    const keys = {keys: [...this.unsure(), ...journal.keys], large: journal.large}
    const patching = !(journal.large || this.position < head.floor || this.suspect === 'all')
    const statements = patching ? rowStatements(this.db, keys.keys, this.kind === 'postgres' ? 'ctid' : 'rowid') : []
    const results = statements.length || close.length ? await s.run([...statements.map(([, q]) => q), ...close]) : []
    await this.apply(s, readWindow(head, keys, statements, results), inWrite)
  }

  private unsure(): JournalRow[] {
    return Array.isArray(this.suspect) ? this.suspect : []
  }

  /**
   * Runs writes and catch-ups one at a time, first come first served. (kysely's own connection
   * lock wakes every waiter on each release; with many requests in flight that churn shows.)
   */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.pendingCount++
    const run = this.tail.then(() => {
      const turn = fn()
      this.running = turn
      return turn
    })
    const done = () => {
      this.pendingCount--
    }
    this.tail = run.then(done, done)
    return run
  }

  /**
   * Makes the State current with what other processes committed. Call before serving a read.
   * Rejects with a 503 (DatabaseUnavailableError) when the database cannot say.
   */
  refresh(): Promise<State> {
    if (!this.started) return Promise.reject(new DatabaseUnavailableError('starting'))
    if (this.kind === 'postgres') return this.currentFor(performance.now())
    // The State holds a write not yet committed, or is being loaded, or is unsure of something:
    // wait for our turn. Otherwise it is what the database held at seenMark, writes of ours queued
    // or not: if nobody committed since, it is current, no waiting.
    if (this.dirty || this.suspect || this.seenMark < 0) return this.catchUp()
    let mark: number
    try {
      mark = this.backend.changeMark() as number
    } catch (err) {
      return Promise.reject(asDatabaseError(err))
    }
    return mark === this.seenMark ? Promise.resolve(this.state) : this.catchUp()
  }

  /**
   * PostgreSQL: the State once it holds every commit made before `arrived` (read-your-writes across
   * nodes). A round trip sent after `arrived` that found the counter at or below our position
   * proves it: a probe of the counter, shared by the reads that arrived before it was sent, or a
   * write of ours. Reads arriving while our write is in flight wait for it, and a write sent after
   * them answers for them without a probe.
   */
  private async currentFor(arrived: number): Promise<State> {
    let need: number | null = null
    for (;;) {
      if (this.suspect || this.seenMark < 0) return this.catchUp()
      if (this.dirty) {
        await this.turnEnd()
        continue
      }
      if (this.currentAsOf >= arrived || (need !== null && this.position >= need)) return this.state
      if (need !== null) return this.catchUp(true)
      need = await this.counterSince(arrived)
    }
  }

  /**
   * PostgreSQL: the head and the images after our position, in one round trip. Kept (this.ahead)
   * until the State moves, so that the catch-up it shows is needed reads nothing more.
   */
  private async readAhead(): Promise<Ahead & {from: number}> {
    const from = this.position
    const [rows] = await this.backend.session((s) => s.run([aheadStatement(this.db, from < 0 ? Number.MAX_SAFE_INTEGER : from)]))
    const ahead = {...readAhead(rows), from}
    this.head = Math.max(this.head, ahead.head.counter)
    if (ahead.head.counter > from && from === this.position) this.ahead = ahead
    return ahead
  }

  /** The change counter as read by a round trip sent at `arrived` or later (one shared by all who wait). */
  private counterSince(arrived: number): Promise<number> {
    const probe = this.probe
    if (probe && probe.sentAt >= arrived) return probe.counter
    const sentAt = performance.now()
    const counter = Promise.resolve()
      .then(() => (this.kind === 'postgres' ? this.readAhead().then((a) => a.head.counter) : this.backend.changeMark()))
      .then(
        (m) => {
          if (this.probe?.counter === counter) this.probe = null
          this.head = Math.max(this.head, m)
          if (m <= this.position && !this.suspect) this.currentAsOf = Math.max(this.currentAsOf, sentAt)
          return m
        },
        (err) => {
          if (this.probe?.counter === counter) this.probe = null
          throw asDatabaseError(err)
        },
      )
    this.probe = {sentAt, counter}
    return counter
  }

  /** Settles when the turn now running (a write, a catch-up, a load) has ended. */
  private turnEnd(): Promise<void> {
    return this.running.then(
      () => undefined,
      () => undefined,
    )
  }

  /**
   * Waits for our writes in flight (the State may hold one not yet committed), and applies what
   * other processes committed since.
   */
  private catchUp(moved = false): Promise<State> {
    // Readers that arrive while a catch-up waits for its turn share it: it has not read the
    // database yet, so what it reads is newer than their arrival (read-your-writes holds).
    if (this.queuedCatchUp) return this.queuedCatchUp
    const turn = this.exclusive(() => {
      if (this.queuedCatchUp === turn) this.queuedCatchUp = null
      return this.sync(moved)
    })
    this.queuedCatchUp = turn
    return turn
  }

  /**
   * catchUp's work, for a caller that already has its turn. `moved`: the caller saw the mark move
   * (PostgreSQL: no need to ask again before reading the window); else the mark is asked first,
   * and the window read only when it moved (after waiting for our own writes, it mostly has not).
   */
  private async sync(moved = false): Promise<State> {
    try {
      // PostgreSQL asks the head with the images (followImages), in the same round trip.
      const markBefore = moved || this.kind === 'postgres' ? -1 : await this.backend.changeMark()
      if (markBefore !== -1 && markBefore === this.seenMark && !this.suspect) return this.state
      const sentAt = performance.now()
      if (await this.followImages()) {
        this.seenMark = this.position
        this.currentAsOf = Math.max(this.currentAsOf, sentAt)
        return this.state
      }
      await this.backend.session(async (s) => {
        // One snapshot: the head and the keys after our position, then the rows they name.
        const opening = this.backend.beginRead()
        const [headRows, keyRows] = (await s.run([...opening, headStatement(this.db), this.keysStatement()])).slice(opening.length)
        await this.applySince(s, readHead(headRows), keyRows, false, [sql`commit`.compile(this.db)])
      })
      // PostgreSQL's mark is the counter itself; SQLite's moves with every commit of another connection.
      this.seenMark = this.backend.kind === 'postgres' ? this.position : markBefore
      if (!this.suspect) this.currentAsOf = Math.max(this.currentAsOf, sentAt)
      return this.state
    } catch (err) {
      throw asDatabaseError(err)
    }
  }

  /** Serves a read from the current State without waiting on a database round trip when nothing changed. */
  read<T>(fn: (state: State) => T): Promise<T> {
    return this.refresh().then(fn)
  }

  /**
   * Runs `fn` against the State inside one write transaction and persists what it changed.
   * If `fn` throws, nothing of it is written; if it had already changed the State, what it
   * touched is read again from the database, so memory never holds what the database does not.
   *
   * Writes that arrive while another is being committed are committed together, each in its
   * turn against the State the ones before it left, in one transaction with one fsync (group
   * commit): none is acknowledged before all are on disk, and a refusal of one (its `fn`
   * throwing before it changed anything) does not touch the others.
   */
  write<T>(fn: (state: State, now: number) => T, options: WriteOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'))
    if (!this.started) return Promise.reject(new DatabaseUnavailableError('starting'))
    return new Promise<T>((resolve, reject) => {
      this.queue.push({fn, resolve: resolve as (v: unknown) => void, reject, started: performance.now(), selfContained: options.selfContained ?? false})
      if (!this.drainScheduled) {
        this.drainScheduled = true
        void this.exclusive(() => this.drain())
      }
    })
  }

  /**
   * Runs `fn` against the State as a write would, and writes nothing: what it touched is read
   * again before the next read or write. For a dry run in a process that has the file to itself
   * (the CLI's --db), where trying a plan on a copy of a million providers would double the memory.
   */
  rehearse<T>(fn: (state: State, now: number) => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'))
    return this.exclusive(async () => {
      const changes = new Changes()
      this.state.changes = changes
      try {
        return fn(this.state, Date.now())
      } finally {
        this.state.changes = null
        this.distrust(changes)
      }
    })
  }

  /** Marks what `changes` touched as unsure: the next catch-up reads it again. */
  private distrust(changes: Changes): void {
    if (changes.empty) return
    this.seenMark = -1
    if (this.suspect === 'all') return
    const keys = [...(this.suspect ?? []), ...unsureKeys(changes)]
    this.suspect = keys.length > MAX_PATCH_KEYS ? 'all' : keys
  }

  /** Commits the writes waiting, a group at a time; every write is settled, whatever fails. */
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
    const outcome = await this.writeGroup(group)
    if (outcome === 'retry-alone') {
      // A write changed the State and then threw: nothing was committed; each write is tried
      // again on its own.
      for (const w of group) await this.writeGroup([w])
    }
  }

  /**
   * One transaction for `group`. Settles each write, or (a group of several where one write threw
   * after changing the State) settles none and asks for them to be run one by one.
   */
  private async writeGroup(group: QueuedWrite[]): Promise<'settled' | 'retry-alone'> {
    if (this.kind === 'postgres' && !this.options.pauseInTransactionMs) {
      // What other nodes committed is read before, not under, the lock: the lock is what every
      // node's writes wait on, round trips under it are what would cap the cloud. But a try that
      // another node overtakes costs its round trips and the catch-up after it: while most tries
      // are overtaken (nodes writing at once), writes take the lock first, and one in
      // PROBE_EVERY tries again.
      const attempts = this.overtakenRate < 0.2 ? 2 : this.overtakenRate < 0.5 || ++this.lockedInARow >= PROBE_EVERY ? 1 : 0
      for (let attempt = 0; attempt < attempts; attempt++) {
        this.lockedInARow = 0
        try {
          // What other nodes committed before the group's first write arrived is asked first, in
          // the round trip reads share, with the images to catch up from: a try then meets only
          // what commits while it is on its way, instead of every commit since our last question.
          // (While others write: a node writing alone is overtaken by nobody, and saves the question.
          // Not for allocation writes, which others' commits overtake only when they touched the
          // same consumers or providers: the question would cost every write a round trip to spare
          // the few overtaken ones.)
          if (attempt === 0 && !allSelfContained(group) && this.currentAsOf < group[0].started && performance.now() - this.othersWroteAt < OTHERS_WRITING_MS) {
            await this.counterSince(group[0].started)
          }
          if (!this.currentAsFarAsKnown()) await this.sync(true)
        } catch (err) {
          return this.fail(group, {outcomes: [], all: new Changes(), threw: null}, err, false)
        }
        const outcome = await this.writeAtPosition(group)
        this.overtakenRate += ((outcome === 'moved' ? 1 : 0) - this.overtakenRate) * OVERTAKEN_WEIGHT
        if (outcome !== 'moved') return outcome
      }
    }
    return this.writeLocked(group)
  }

  /** Whether the State holds all the database held when the change mark was last asked. */
  private currentAsFarAsKnown(): boolean {
    return this.position >= 0 && this.seenMark === this.position && this.head <= this.position && !this.suspect && !this.dirty
  }

  /**
   * PostgreSQL, with the State current as far as this process knows: the group runs against it
   * before any round trip, and its rows go in one round trip that commits only if nobody
   * committed since, so the write lock is held for the server's work alone, never across the
   * network. 'moved': somebody had; nothing was written, what the group touched is read again,
   * and the group runs again (see writeGroup).
   */
  private async writeAtPosition(group: QueuedWrite[]): Promise<'settled' | 'retry-alone' | 'moved'> {
    const base = this.position
    const run = this.runGroup(group, Date.now())
    let committing = false
    try {
      if (run.threw) throw run.threw.error
      if (run.all.empty) {
        // Refusals and no-ops decided on a State that may be behind: they stand if nobody
        // committed since (one round trip, no lock).
        const sentAt = performance.now()
        // With the images since: when it moved, the try again catches up from them.
        const mark = (await this.readAhead()).head.counter
        this.dirty = false
        this.head = Math.max(this.head, mark)
        if (mark === base) {
          this.currentAsOf = Math.max(this.currentAsOf, sentAt)
          return this.succeed(group, run)
        }
        this.observer?.writeRetried?.('moved')
        return 'moved'
      }
      // A write that depends only on what it changes (allocations) needs only those to stand
      // still; others' commits since, touching other consumers and providers, are applied after it.
      const keys = allSelfContained(group) ? keyedKeys(run.all) : null
      const keyed = keys !== null && !inAnyGroup(this.state, run.all)
      const record = keyed ? keyedRecordStatements(this.db, run.all, keys, base, this.image()!) : recordStatements(this.db, run.all, base + 1, this.image())
      const statements = concat(this.writer.statements(this.state, run.all), record)
      let sentAt = 0
      const outcome = await this.backend.session((s): Promise<Row[] | 'committed' | 'moved' | 'too-big'> => {
        committing = true
        sentAt = performance.now()
        return keyed ? s.commitKeyed!(base, keys, statements) : s.commitIfAt!(base, statements)
      })
      if (outcome === 'moved' || outcome === 'too-big') {
        this.distrust(run.all)
        this.dirty = false
        this.observer?.writeRetried?.(outcome)
        return 'moved'
      }
      this.position = base + 1
      if (Array.isArray(outcome)) {
        try {
          const {windows, seq} = windowsBefore(outcome, base, this.state.topologyGeneration)
          this.applyImages(windows)
          this.position = seq
        } catch {
          // Committed all the same: the write is answered as such, and the State, holding it but
          // not what others committed before it, is loaded again before it serves anything.
          this.suspect = 'all'
        }
      }
      this.seenMark = this.position
      this.head = Math.max(this.head, this.position)
      this.currentAsOf = Math.max(this.currentAsOf, sentAt)
      return this.succeed(group, run)
    } catch (err) {
      return this.fail(group, run, err, committing)
    }
  }

  /**
   * The group in a transaction that takes the write lock first: BEGIN, the lock and what others
   * committed since our position in one round trip; the rows those name only when there are any;
   * the group's rows, the journal and COMMIT in the last.
   */
  private async writeLocked(group: QueuedWrite[]): Promise<'settled' | 'retry-alone'> {
    let run: GroupRun = {outcomes: [], all: new Changes(), threw: null}
    let committing = false
    try {
      this.backend.checkWritable()
      await this.backend.session(async (s) => {
        const db = this.db
        const opening = this.backend.beginWrite()
        const sentAt = performance.now()
        if (!(await this.followUnderLock(s, opening))) {
          const [headRows, keyRows] = (await s.run([...opening, headStatement(db), this.keysStatement()])).slice(opening.length)
          opening.length = 0
          const head = readHead(headRows)
          if (head.counter !== this.position || this.suspect) await this.applySince(s, head, keyRows, true, [])
        }
        // Current at the head: reads need not wait until our write begins to change the State.
        if (this.kind === 'postgres') {
          this.seenMark = this.position
          this.currentAsOf = Math.max(this.currentAsOf, sentAt)
        }
        // SQLite: nobody can commit while we hold the lock, so the mark now is the one we are current at.
        else this.seenMark = this.backend.changeMark() as number
        run = this.runGroup(group, Date.now())
        if (run.threw) throw run.threw.error
        if (run.all.empty) {
          await s.run([sql`commit`.compile(db)])
          return
        }
        const seq = this.position + 1
        if (this.options.pauseInTransactionMs) {
          await s.run(this.writer.statements(this.state, run.all))
          process.stderr.write('placemat-test: paused in transaction\n')
          await new Promise((r) => setTimeout(r, this.options.pauseInTransactionMs))
          committing = true
          await s.run([...recordStatements(db, run.all, seq, this.image()), sql`commit`.compile(db)])
        } else {
          // One more round trip (more for a big batch): the rows, the journal, the counter, COMMIT.
          committing = true
          await s.run(concat(this.writer.statements(this.state, run.all), recordStatements(db, run.all, seq, this.image()), [sql`commit`.compile(db)]))
        }
        this.position = seq
        if (this.kind === 'postgres') this.seenMark = seq
        this.head = Math.max(this.head, seq)
      })
    } catch (err) {
      return this.fail(group, run, err, committing)
    }
    this.dirty = false
    return this.succeed(group, run)
  }

  /** Runs the group's writes against the State in turn, each seeing what the ones before it did. */
  private runGroup(group: QueuedWrite[], now: number): GroupRun {
    const run: GroupRun = {outcomes: [], all: new Changes(), threw: null}
    this.dirty = true
    for (const w of group) {
      const changes = new Changes()
      this.state.changes = changes
      try {
        run.outcomes.push({ok: true, value: w.fn(this.state, now)})
      } catch (error) {
        if (!changes.empty) {
          // The State holds part of it: the whole group is undone.
          run.all.absorb(changes)
          run.threw = {error}
          return run
        }
        run.outcomes.push({ok: false, error})
      } finally {
        this.state.changes = null
      }
      run.all.absorb(changes)
    }
    return run
  }

  /** The group committed (or changed nothing): its writes are answered. */
  private succeed(group: QueuedWrite[], run: GroupRun): 'settled' {
    this.writeFault = null
    this.dirty = false
    if (!run.all.empty) {
      this.state.version += 1
      // The provider index follows the write now, touching what it changed, so the next
      // query does not wait for it.
      keepIndexCurrent(this.state)
    }
    group.forEach((w, k) => this.settle(w, run.outcomes[k]))
    return 'settled'
  }

  /**
   * The group failed (a write threw after changing the State, the database refused, or a fault):
   * nothing of it is kept. Memory may hold what the database does not, so what the group touched
   * is read again, now if the database answers, else before the next read or write.
   */
  private async fail(group: QueuedWrite[], run: GroupRun, err: unknown, committing: boolean): Promise<'settled' | 'retry-alone'> {
    const thrownByWrite = run.threw !== null
    this.distrust(run.all)
    this.dirty = false // what the group touched is unsure now (refresh waits for it to be read again)
    const fault = databaseFault(err)
    // A refusal: the database answers, read back now. A fault: not now (it would wait on the
    // database again before this group is answered); the next read or write does.
    if (!fault && !run.all.empty) await this.sync().catch(() => undefined)
    if (thrownByWrite && group.length > 1) return 'retry-alone'
    if (fault) this.writeFault = fault
    if (fault === 'replaced') this.observer?.fault?.(fault, err)
    // Only a connection lost while COMMIT may have been on its way leaves the outcome unknown; a
    // statement refused (read-only, disk full) ended the transaction before it.
    if (committing && fault === 'unavailable' && this.kind === 'postgres') this.observer?.commitUnknown?.(err)
    const error = thrownByWrite ? err : asDatabaseError(err)
    for (const w of group) this.settle(w, {ok: false, error})
    // Writes that queued meanwhile would each wait out the same fault: they are answered now.
    if (fault) for (const w of this.queue.splice(0)) this.settle(w, {ok: false, error})
    return 'settled'
  }

  private settle(w: QueuedWrite, outcome: Outcome): void {
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
   * Whether this store can serve, for a load balancer's probe: the database asked a trivial
   * question (on PostgreSQL, whether it takes writes) within `timeoutMs`, without queueing behind
   * the store's writes; where the State stands in the journal. Never throws.
   */
  async health(timeoutMs = 2000): Promise<StoreHealth> {
    const journal = {position: this.position, head: Math.max(this.head, this.position)}
    if (!this.started) return {status: 'starting', journal}
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), {code: 'ETIMEDOUT'})), timeoutMs)
      timer.unref()
    })
    try {
      this.backend.checkWritable()
      const ask =
        this.kind === 'postgres'
          ? sql<{ro: string}>`select current_setting('transaction_read_only') as ro`.execute(this.db)
          : sql<{ro: string}>`select 'off' as ro`.execute(this.db)
      const r = await Promise.race([ask, timeout])
      if (r.rows[0]?.ro === 'on') return {status: 'read-only', journal}
    } catch (err) {
      return {status: databaseFault(err) ?? 'unavailable', journal}
    } finally {
      clearTimeout(timer)
    }
    if (this.writeFault) return {status: this.writeFault, journal}
    if (this.loading || journal.head > journal.position) return {status: 'catching-up', journal}
    return {status: 'ok', journal}
  }

  /** Rejects when the database does not answer within `timeoutMs` or cannot serve (see health). */
  async ping(timeoutMs = 2000): Promise<void> {
    const h = await this.health(timeoutMs)
    if (h.status !== 'ok' && h.status !== 'catching-up') throw new DatabaseUnavailableError(h.status)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    // Writes already accepted finish first (each is answered within the database timeouts).
    while (this.pendingCount > 0) await this.tail
    if (this.started) await this.backend.close()
  }
}

function* concat<T>(...parts: Iterable<T>[]): Generator<T> {
  for (const p of parts) yield* p
}

type Outcome = {ok: true; value: unknown} | {ok: false; error: unknown}

/** What a group's writes did to the State: each one's outcome, and all they changed. */
interface GroupRun {
  outcomes: Outcome[]
  all: Changes
  /** A write threw after changing the State. */
  threw: {error: unknown} | null
}

/** A write waiting in the store's queue. */
interface QueuedWrite {
  fn: (state: State, now: number) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  started: number
  selfContained: boolean
}

export interface WriteOptions {
  /**
   * What the write decides depends only on the records it changes (Placement's allocation
   * writes: a consumer's generation, its providers' inventories and usages). On PostgreSQL it then
   * commits unless another node changed one of those since (see Backend.commitKeyed), instead of
   * unless another node committed anything.
   */
  selfContained?: boolean
}

/** Whether every write of `group` depends only on what it changes (allocation writes: see keyedKeys). */
const allSelfContained = (group: readonly QueuedWrite[]): boolean => group.every((w) => w.selfContained)

/**
 * PostgreSQL: for this long after another node's commit was applied, a write asks what others
 * committed before it is tried (a node writing alone saves the question).
 */
const OTHERS_WRITING_MS = 1000

/** PostgreSQL: how much each try in one round trip counts in the rate of those overtaken. */
const OVERTAKEN_WEIGHT = 0.1

/** PostgreSQL: while tries are mostly overtaken, one write in this many tries again anyway. */
const PROBE_EVERY = 16

/** Writes committed together at most. */
const MAX_GROUP = 64

