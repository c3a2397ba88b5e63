import {randomUUID} from 'node:crypto'
import {State} from '../core/state/state.js'
import {Changes} from '../core/state/changes.js'
import {databaseKind, describeTarget, isDatabaseUrl, type Backend, type BackendObserver, type DatabaseKind} from './backends.js'
import {Commits} from './commits.js'
import {DatabaseUnavailableError, databaseFault} from './database-faults.js'
import {Follower} from './follower.js'
import {Freshness} from './freshness.js'
import {migrate, openDatabase, openWithRetry, pendingMigrations, type OpenOptions, type OpenRetry} from './open.js'
import {beatStatement, forgetStatement, leaveStatement, type NodeInfo} from './node-registry.js'
import {LATEST_MIGRATION} from './schema.js'
import {judgeSchema, readSchemaFacts, type SchemaVerdict} from './schema-contract.js'
import {STATE_IMAGE_KEY, parseStateImage, readStateImageText, writeStateImage} from './state-image-file.js'
import {StateWriter} from './state-writer.js'
import {statementText} from './statement-text.js'
import type {StoreHealth, StoreObserver, WriteOptions} from './store-types.js'
import {Turns} from './turns.js'
import {WriteQueue} from './write-queue.js'

export {DatabaseWaitError, SchemaOutOfDateError, type OpenOptions} from './open.js'
export type {StoreHealth, StoreObserver, WriteOptions} from './store-types.js'

/**
 * The persistent store: a database plus the in-memory State it keeps exact.
 *
 * Writes run `fn` on the State inside one database transaction that holds the database's write
 * lock before anything is read (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL, the
 * change counter's row on MariaDB), then write exactly what `fn` changed and record its keys in
 * the change journal (journal.ts). Other processes' commits are noticed through a change mark
 * (PRAGMA data_version; the change counter on a server) and applied from the journal: only the
 * rows they changed are read again.
 *
 * This class is the public face; the work is done by its parts:
 *   open.ts         opening, migrating and seeding the database
 *   follower.ts     the only mover of the State's journal position: loads, relists, applies
 *   freshness.ts    when the State may serve a read, and the catch-up when it may not
 *   write-queue.ts  writes waiting, grouped, and settled
 *   commits.ts      how a group commits (optimistic, keyed or locked), answered as an outcome
 *   turns.ts        one write, catch-up or load at a time
 */
export class Store {
  readonly state = new State()
  /**
   * Told after each write transaction how long it ran (seconds, from its turn in the queue to
   * COMMIT or ROLLBACK) and whether it committed. One observer per store (the daemon's metrics).
   */
  onWrite: ((seconds: number, ok: boolean) => void) | null = null
  observer: StoreObserver | null = null
  /**
   * Whether the daemon is serving other requests besides a write's (its HTTP layer says): the
   * write's sync then leaves the event loop to them instead of holding it (sync-choice.ts).
   */
  othersServed: (() => boolean) | null = null

  private readonly turns = new Turns()
  /** The State image's text, being read since create (imageText). */
  private imageRead: Promise<string | null> | null = null
  private backend!: Backend
  // The parts, made once the database is open (see wire).
  private follower: Follower | null = null
  private freshness!: Freshness
  private writes!: WriteQueue
  /** Set once the database answered and the State is loaded (see start). */
  private started = false
  private closed = false
  /** Whether this release serves the database's schema, as judged at start and at each beat. */
  private verdict: SchemaVerdict | null = null
  /** This node's row in placemat_nodes, once it joined (a daemon). */
  private membership: {id: string; info: NodeInfo} | null = null
  /** The beat in flight. */
  private beating: Promise<void> | null = null

  private constructor(
    /** The SQLite file or the server's URL (PostgreSQL, MariaDB). */
    readonly file: string,
    private readonly options: OpenOptions,
  ) {}

  get db() {
    return this.backend.db
  }

  /** How the State was loaded at start: from the image a clean stop left, or from the database's rows. */
  loaded: {from: 'image' | 'database'; seconds: number; position: number} | null = null

  /** Whether the State is being loaded whole now (at start, or behind the journal). */
  get loadingNow(): boolean {
    return this.follower?.loading ?? false
  }

  /** Whether the database answered and the State is loaded (reads and writes are served). */
  get ready(): boolean {
    return this.started
  }

  get kind(): DatabaseKind {
    return databaseKind(this.file)
  }

  get schemaVersion(): string {
    return LATEST_MIGRATION
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
    const store = new Store(file, options)
    // Read while the caller sets up the rest (a daemon builds its app meanwhile).
    const path = store.imagePath
    if (path) store.imageRead = readStateImageText(path)
    return store
  }

  /** The State image's text: read ahead at create for the first start, again for a later one. */
  private imageText(): Promise<string | null> {
    const path = this.imagePath
    const ahead = this.imageRead
    this.imageRead = null
    return ahead ?? (path ? readStateImageText(path) : Promise.resolve(null))
  }

  /**
   * Opens the database, migrating and seeding it as told, and loads the State. With `retry`, a
   * database fault (unreachable, timed out, starting up) is tried again with backoff until the
   * database answers, `retry.waitMs` (if any) has passed, or `retry.signal` aborts.
   */
  start(retry?: OpenRetry): Promise<void> {
    return openWithRetry(this.file, retry, async () => {
      const observer: BackendObserver = {
        fault: (kind, err) => this.observer?.fault?.(kind, err),
        reconnect: () => this.observer?.reconnected?.(),
        nodeChanged: (from, to) => this.observer?.nodeChanged?.(from, to),
        nodesSpread: (nodes) => this.observer?.nodesSpread?.(nodes),
      }
      await openDatabase(this.file, this.options, observer, async (backend, verdict) => {
        this.verdict = verdict
        this.wire(backend)
        const t0 = performance.now()
        const image = parseStateImage(await this.imageText())
        const from = await backend.session((s) =>
          image ? this.follower!.loadFromImage(s, image) : this.follower!.load(s, null).then(() => 'database' as const),
        )
        this.loaded = {from, seconds: (performance.now() - t0) / 1000, position: this.follower!.position}
      })
      this.started = true
    })
  }

  /** Makes the store's parts for `backend`, the one they share. */
  private wire(backend: Backend): void {
    this.backend = backend
    const writer = new StateWriter(backend.db)
    const follower = new Follower(this.state, backend, writer, this)
    const freshness = new Freshness(this.state, backend, follower, this.turns)
    const commits = new Commits(this.state, backend, writer, follower, freshness, this, this.options)
    this.follower = follower
    this.freshness = freshness
    this.writes = new WriteQueue(backend, follower, freshness, commits, this.turns, this)
  }

  /**
   * Null while this release serves the database's schema; else why not (a newer release's
   * contract ran since start), as judged at the last beat (see schema-contract.ts).
   */
  get schemaRefusal(): string | null {
    return this.verdict?.refusal ?? null
  }

  /** Registers this process as a node serving the database (placemat_nodes), and beats once. */
  async join(info: NodeInfo): Promise<void> {
    this.membership = {id: randomUUID(), info}
    await this.onOwnConnection(() => this.backend.session((s) => s.run([forgetStatement(this.db, Date.now())])))
    await this.beat()
  }

  /**
   * This node's beat, in one statement outside the journal (re-registering it if its row was
   * removed), and the schema judged again: a newer release's contract since start shows in
   * schemaRefusal. Rejects when the database does not answer (health says so on its own).
   */
  beat(): Promise<void> {
    if (!this.started || this.closed) return Promise.resolve()
    // One at a time: beats of a database that does not answer never pile up on its connections.
    this.beating ??= this.beatOnce().finally(() => (this.beating = null))
    return this.beating
  }

  private async beatOnce(): Promise<void> {
    await this.onOwnConnection(async () => {
      if (this.membership)
        await this.backend.session((s) => s.run([beatStatement(this.db, this.membership!.id, this.membership!.info, Date.now())]))
      const verdict = judgeSchema(await readSchemaFacts(this.db), describeTarget(this.file))
      const was = this.verdict?.refusal ?? null
      this.verdict = verdict
      if (verdict.refusal !== was) this.observer?.schemaJudged?.(verdict.refusal)
    })
  }

  /** Removes this node's row (a daemon stopping); never throws. */
  async leave(): Promise<void> {
    const m = this.membership
    if (!m || !this.started) return
    this.membership = null
    await this.onOwnConnection(() => this.backend.session((s) => s.run([leaveStatement(this.db, m.id)]))).catch(() => undefined)
  }

  /**
   * Runs `fn` where it cannot land inside a transaction of ours: SQLite has one connection, so
   * it waits for its turn; a server's pool gives it a connection of its own.
   */
  private onOwnConnection<T>(fn: () => Promise<T>): Promise<T> {
    return this.backend.oneConnection ? this.turns.exclusive(fn) : fn()
  }

  pendingMigrations(): Promise<string[]> {
    return pendingMigrations(this.db)
  }

  migrate(): Promise<string[]> {
    return migrate(this.db)
  }

  /** Loads the State whole again from the database (a check that memory and the database agree). */
  reload(): Promise<void> {
    return this.turns.exclusive(() => this.backend.session((s) => this.follower!.load(s, 'asked')))
  }

  /** The statement texts this store's connection keeps prepared (SQLite; none on a server). */
  preparedTexts(): string[] {
    return this.backend?.preparedTexts?.() ?? []
  }

  /** Prepares `texts` ahead of their first use (SQLite); answers how many were. */
  prepareAhead(texts: readonly string[]): number {
    return this.backend?.prepareAhead?.(texts) ?? 0
  }

  /**
   * Makes the State current with what other processes committed. Call before serving a read.
   * Rejects with a 503 (DatabaseUnavailableError) when the database cannot say.
   */
  refresh(): Promise<State> {
    if (!this.started) return Promise.reject(new DatabaseUnavailableError('starting'))
    return this.freshness.refresh()
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
    return this.writes.push(fn, options)
  }

  /**
   * Runs `fn` against the State as a write would, and writes nothing: what it touched is read
   * again before the next read or write. For a dry run in a process that has the file to itself
   * (the CLI's --db), where trying a plan on a copy of a million providers would double the memory.
   */
  rehearse<T>(fn: (state: State, now: number) => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'))
    return this.turns.exclusive(async () => {
      const changes = new Changes()
      this.state.changes = changes
      try {
        return fn(this.state, Date.now())
      } finally {
        this.state.changes = null
        this.follower?.distrust(changes)
      }
    })
  }

  /**
   * Whether this store can serve, for a load balancer's probe: the database asked a trivial
   * question (on a server, whether it takes writes) within `timeoutMs`, without queueing behind
   * the store's writes; where the State stands in the journal. Never throws.
   */
  async health(timeoutMs = 2000): Promise<StoreHealth> {
    const position = this.follower?.position ?? 0
    const journal = {position, head: Math.max(this.follower?.head ?? 0, position)}
    if (!this.started) return {status: 'starting', journal}
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), {code: 'ETIMEDOUT'})), timeoutMs)
      timer.unref()
    })
    try {
      this.backend.checkWritable()
      if (await Promise.race([this.backend.readOnly(), timeout])) return {status: 'read-only', journal}
    } catch (err) {
      return {status: databaseFault(err) ?? 'unavailable', journal}
    } finally {
      clearTimeout(timer)
    }
    if (this.writes.writeFault) return {status: this.writes.writeFault, journal}
    if (this.loadingNow || journal.head > journal.position) return {status: 'catching-up', journal}
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
    await this.turns.idle()
    await this.leave()
    if (this.started) await this.saveImage()
    if (this.started) await this.backend.close()
  }

  /**
   * Leaves the State's image for the next start (stateImage): the file first, then its token in
   * the database, so that a token there always names a file written whole. Never throws: without
   * an image the next start loads from the database.
   */
  private async saveImage(): Promise<void> {
    const path = this.options.saveStateImage ? this.imagePath : null
    if (!path) return
    const token = randomUUID()
    try {
      // Not for a file that is no longer at its path (deleted, replaced): no image of it is of use.
      this.backend.checkWritable()
      const image = this.follower?.stateImage()
      if (!image) return
      writeStateImage(path, token, image)
      await this.backend.session((s) => s.run([statementText(this.db).setMeta(STATE_IMAGE_KEY, token)]))
    } catch {
      // The token recorded, if any, is another's: the file is never read back.
    }
  }

  /**
   * Where this store keeps its State's image (SQLite files only). Asked at create, before a
   * backend is open: then the file's kind says whether it is a server.
   */
  private get imagePath(): string | null {
    return this.options.stateImage && !isDatabaseUrl(this.file) && this.file !== ':memory:' ? this.options.stateImage : null
  }
}
