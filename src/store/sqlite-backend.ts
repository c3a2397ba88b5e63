/** The SQLite backend (see Backend in backends.ts). */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import {Kysely, SqliteDialect, sql, type CompiledQuery} from 'kysely'
import {DEFAULT_DATABASE_TIMEOUTS, type BackendOptions} from './backend-options.js'
import type {Backend, BackendObserver, Row, Session} from './backends.js'
import {SyncChoice} from './sync-choice.js'
import {BackgroundCheckpointer} from './checkpointer.js'
import {DatabaseUnavailableError, databaseFault} from './database-faults.js'
import type {Database} from './schema.js'
import {foreignDatabase} from './target.js'
import {DIALECTS, speaks} from './statement-text.js'
import {PROFILING, ranStatement} from './phase-profile.js'

/**
 * kysely prepares every statement anew; the same few statements run on every write, so
 * keep them prepared (better-sqlite3 runs each synchronously, so reuse is safe).
 */
/**
 * Rows read at a time when the State is loaded from SQLite: fewer than a server's page (PAGE),
 * as nothing is saved by larger ones here, and each page's rows then die young (300,000
 * inventories read in 278 ms at 2,000 to 5,000 rows a page, 323 ms at 20,000).
 */
const SQLITE_PAGE = 4000

class StatementCache {
  private readonly cache = new Map<string, SQLite.Statement>()
  constructor(private readonly raw: SQLite.Database) {}
  prepare(sqlText: string): SQLite.Statement {
    let stmt = this.cache.get(sqlText)
    if (!stmt) {
      stmt = this.raw.prepare(sqlText)
      if (this.cache.size > 500) this.cache.clear()
      this.cache.set(sqlText, stmt)
    }
    return stmt
  }

  /** The texts prepared, the most recently first made last. */
  texts(): string[] {
    return [...this.cache.keys()]
  }
}

/** A file's identity: the daemon notices when the path no longer names the file it has open. */
const identity = (file: string): string | null => {
  try {
    const st = fs.statSync(file)
    return `${st.dev}:${st.ino}`
  } catch {
    return null
  }
}

/** SQLite in WAL mode: one writer at a time (BEGIN IMMEDIATE), PRAGMA data_version for others' commits. */
export class SqliteBackend implements Backend {
  readonly kind = 'sqlite'
  readonly server = false
  readonly oneConnection = true
  /** A COMMIT of this process's own is never lost on its way: there is nothing to prove. */
  readonly provesUnkept = false
  readonly storageOrder = 'rowid'
  // One process writes at a time under SQLite's own lock: nothing to check.
  readonly checkedCommits = false
  observer: BackendObserver | null = null
  private checkpointer: BackgroundCheckpointer | null = null
  // Asked before every read and write: prepared once (db.pragma() prepares on every call).
  private readonly dataVersion: SQLite.Statement
  private readonly statements: StatementCache
  private readonly opened: string | null
  /** The WAL, when this process makes its commits durable itself (see serve). */
  private wal: number | null = null
  /** The WAL's sync running now, and the one queued after it that later commits share. */
  private syncing: Promise<void> | null = null
  private queued: Promise<void> | null = null
  /** Whether a commit alone syncs inline or in the thread pool, as measured here. */
  readonly syncChoice = new SyncChoice()

  private constructor(
    private readonly file: string,
    private readonly raw: SQLite.Database,
    readonly db: Kysely<Database>,
    readonly isNew: boolean,
    private readonly durability: BackendOptions['durability'],
  ) {
    this.dataVersion = raw.prepare('PRAGMA data_version').pluck()
    this.statements = new StatementCache(raw)
    this.opened = file === ':memory:' ? null : identity(file)
  }

  static async open(file: string, options: BackendOptions): Promise<SqliteBackend> {
    const isNew = file === ':memory:' || !fs.existsSync(file) || fs.statSync(file).size === 0
    // Another program's database is refused before anything (the WAL switch below) changes it.
    if (!isNew) {
      const probe = new SQLite(file, {readonly: true, fileMustExist: true})
      try {
        const foreign = foreignDatabase(
          file,
          probe.prepare("select name from sqlite_master where type = 'table'").pluck().all() as string[],
        )
        if (foreign) throw foreign
      } finally {
        probe.close()
      }
    }
    const made = file !== ':memory:' && !fs.existsSync(file)
    // The cloud is its owner's to read: a directory made for it and a new file are owner-only,
    // set before the switch to WAL below makes the -wal and -shm (SQLite gives them the file's mode).
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), {recursive: true, mode: 0o700})
    const raw = new SQLite(file, {readonly: options.readonly ?? false})
    if (made && !options.readonly) fs.chmodSync(file, 0o600)
    raw.pragma(`busy_timeout = ${options.busyTimeoutMs ?? options.timeouts?.lockMs ?? DEFAULT_DATABASE_TIMEOUTS.lockMs}`)
    if (!options.readonly) {
      raw.pragma('journal_mode = WAL')
      raw.pragma(`synchronous = ${options.durability === 'normal' ? 'NORMAL' : 'FULL'}`)
    }
    const cache = new StatementCache(raw)
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({database: {close: () => raw.close(), prepare: (s: string) => cache.prepare(s)}}),
    })
    speaks(db, DIALECTS.sqlite)
    return new SqliteBackend(file, raw, db, isNew, options.durability)
  }

  changeMark(): number {
    return this.dataVersion.get() as number
  }

  beginWrite(): CompiledQuery[] {
    return [sql`begin immediate`.compile(this.db)]
  }

  beginRead(): CompiledQuery[] {
    return [sql`begin`.compile(this.db)]
  }

  async tables(): Promise<string[]> {
    const r = await sql<{name: string}>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(this.db)
    return r.rows.map((row) => row.name)
  }

  /** Reads the whole file. */
  async integrity(): Promise<string[]> {
    return (await sql<{integrity_check: string}>`pragma integrity_check`.execute(this.db)).rows.map((r) => r.integrity_check)
  }

  async storage(): Promise<string> {
    return String((await sql<{journal_mode: string}>`pragma journal_mode`.execute(this.db)).rows[0]?.journal_mode)
  }

  /** A file this process writes is never read-only to it; asked all the same, so that health sees the file answer. */
  async readOnly(): Promise<boolean> {
    await sql`select 1`.execute(this.db)
    return false
  }

  checkWritable(): void {
    if (this.opened !== null && identity(this.file) !== this.opened) throw new DatabaseUnavailableError('replaced')
  }

  async session<T>(fn: (s: Session) => Promise<T>): Promise<T> {
    try {
      return await fn(this.sessionApi)
    } catch (err) {
      const fault = databaseFault(err)
      if (fault) this.observer?.fault(fault, err)
      // Whatever failed, the connection is left outside any transaction.
      try {
        if (this.raw.inTransaction) this.raw.exec('rollback')
      } catch {
        // SQLite rolled it back itself (an I/O error or a full disk may do so)
      }
      throw err
    }
  }

  private readonly sessionApi: Session = {
    run: async (statements) => {
      const out: Row[][] = []
      for (const q of statements) {
        const stmt = this.statements.prepare(q.sql)
        const params = q.parameters as unknown[]
        const t0 = PROFILING ? performance.now() : 0
        if (stmt.reader) out.push(stmt.all(...params) as Row[])
        else {
          stmt.run(...params)
          out.push([])
        }
        if (PROFILING) ranStatement(q.sql, params, performance.now() - t0)
      }
      return out
    },
    pages: (table, columns, key) => this.pages(table, columns, key),
  }

  // Creation order is storage order here (rowid), the cheapest key to page by; the loader puts
  // providers in seq order if a file ever says otherwise.
  private async *pages(table: keyof Database, columns: string[], _order: 'rowid' | 'seq'): AsyncGenerator<unknown[][]> {
    const key = 'rowid'
    let last = -Infinity
    for (;;) {
      const query = this.db
        .selectFrom(table)
        .select(columns.map((c) => sql.ref(c).as(c)))
        .select(sql.ref(key).as('_key'))
        .where(sql.ref(key), '>', last)
        .orderBy(sql.ref(key))
        .limit(SQLITE_PAGE)
        .compile()
      const page = this.raw
        .prepare(query.sql)
        .raw(true)
        .all(...(query.parameters as unknown[])) as unknown[][]
      yield page
      if (page.length < SQLITE_PAGE) return
      last = Number(page[page.length - 1][columns.length])
    }
  }

  serve(): void {
    if (this.file === ':memory:' || this.raw.readonly || this.checkpointer) return
    this.checkpointer = new BackgroundCheckpointer(this.file, () => this.copyRest())
    this.raw.pragma('wal_autocheckpoint = 16384')
    this.raw.pragma(`journal_size_limit = ${64 * 1024 * 1024}`)
    // Full durability without holding the event loop through each fsync: COMMIT writes the WAL
    // frames (synchronous NORMAL) and the write is answered once an fdatasync of the WAL, in
    // Node's thread pool, has put them on disk (durable()). Requests are served meanwhile, and
    // commits made meanwhile share the next sync. (SQLite's own FULL syncs inline, with fsync.)
    if (this.durability !== 'normal') {
      try {
        this.wal = fs.openSync(`${this.file}-wal`, 'r')
        this.raw.pragma('synchronous = NORMAL')
      } catch {
        this.wal = null // no WAL file to hold: SQLite keeps syncing each commit itself
      }
    }
  }

  /**
   * The frames written while the checkpointer copied (a few milliseconds' writes), copied here on
   * the event loop, so that the WAL is wholly copied and the next write starts it again from its
   * beginning (checkpointer.ts). Not inside a transaction (SQLite refuses it there); busy (the
   * worker copying again) is left to the next round.
   */
  private copyRest(): void {
    if (this.raw.inTransaction || !this.raw.open) return
    try {
      this.raw.pragma('wal_checkpoint(PASSIVE)')
    } catch {
      // locked or busy: the next round
    }
  }

  /** The statements this connection keeps prepared (see prepareAhead). */
  preparedTexts(): string[] {
    return this.statements.texts()
  }

  /**
   * Prepares `texts` now (those another connection to the same schema ran), so the first writes
   * do not compile them; a text this database cannot prepare is skipped. Answers how many were.
   */
  prepareAhead(texts: readonly string[]): number {
    let prepared = 0
    for (const text of texts) {
      try {
        this.statements.prepare(text)
        prepared++
      } catch {
        // not a statement for this database: its first use compiles it, or refuses it, as ever
      }
    }
    return prepared
  }

  /**
   * Resolves once what has been committed so far is on disk (at once unless serve() took that
   * on). `alone`: nobody is queued behind this commit, so its sync may run inline when that is
   * the cheaper here (sync-choice.ts).
   */
  durable(alone = false): Promise<void> {
    const wal = this.wal
    if (wal === null) return Promise.resolve()
    if (alone && !this.queued && !this.syncing) {
      const method = this.syncChoice.forCommitAlone()
      const t0 = performance.now()
      if (method === 'inline') {
        try {
          fs.fdatasyncSync(wal)
        } catch (err) {
          return Promise.reject(err)
        }
        this.syncChoice.timed('inline', performance.now() - t0)
        return Promise.resolve()
      }
      return this.poolSync(wal).then(() => this.syncChoice.timed('pool', performance.now() - t0))
    }
    return this.poolSync(wal)
  }

  /** The next fdatasync of the WAL in the thread pool, shared by every commit until it starts. */
  private poolSync(wal: number): Promise<void> {
    // A sync already running may have begun before this commit's frames were written: the
    // commit waits for the next one, which every commit until it starts shares.
    if (!this.queued) {
      const before = this.syncing ?? Promise.resolve()
      this.queued = before
        .catch(() => undefined)
        .then(() => {
          this.queued = null
          const sync = new Promise<void>((resolve, reject) => fs.fdatasync(wal, (err) => (err ? reject(err) : resolve())))
          this.syncing = sync
          return sync.finally(() => {
            if (this.syncing === sync) this.syncing = null
          })
        })
    }
    return this.queued
  }

  async close(): Promise<void> {
    await this.syncing?.catch(() => undefined)
    await this.queued?.catch(() => undefined)
    if (this.wal !== null) fs.closeSync(this.wal)
    this.wal = null
    await this.checkpointer?.stop()
    await this.db.destroy()
  }
}
