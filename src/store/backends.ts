import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import {Kysely, PostgresDialect, SqliteDialect, sql, type CompiledQuery} from 'kysely'
import pg from 'pg'
import {BackgroundCheckpointer} from './checkpointer.js'
import type {Database} from './schema.js'

export {describeTarget, isDatabaseUrl, resolveTarget} from './target.js'
import {isDatabaseUrl} from './target.js'

type Conn = Kysely<Database>

/**
 * What the store needs of a database besides kysely's queries: a database-wide write lock,
 * a cheap mark that moves when another process commits, and consistent reads.
 */
export interface Backend {
  readonly kind: 'sqlite' | 'postgres'
  readonly db: Kysely<Database>
  /** True when no schema exists yet (a new file or an empty database). */
  readonly isNew: boolean
  /** Moves when another connection commits (SQLite's data_version; a counter row on PostgreSQL). */
  changeMark(conn?: Conn): number | Promise<number>
  /**
   * BEGIN, holding the database-wide write lock before anything is read; returns the change
   * mark, which holds until COMMIT (no other process can commit meanwhile).
   */
  beginWrite(conn: Conn): Promise<number>
  /** COMMIT; a write that changed something tells other processes. Returns the mark after it. */
  commitWrite(conn: Conn, mark: number, changed: boolean): Promise<number>
  /** BEGIN a read transaction that sees one snapshot. */
  beginRead(conn: Conn): Promise<void>
  /**
   * Runs a SELECT and returns its rows as arrays of column values, without an object per row
   * (for reading whole tables at start); undefined where the driver has no such mode.
   */
  readonly rowArrays?: (query: CompiledQuery) => unknown[][]
  /** For a long-lived server: move per-commit upkeep off the request path. */
  serve(): void
  close(): Promise<void>
}

/** Both backends cap the parameters of one statement (SQLite 32,766): multi-row writes stay under it. */
export const MAX_STATEMENT_PARAMETERS = 30_000

/** Rows of `columns` values that one multi-row statement can take. */
export const rowsPerStatement = (columns: number) => Math.max(1, Math.floor(MAX_STATEMENT_PARAMETERS / columns))

/**
 * When a commit is on disk. full (the default): every COMMIT is fsynced before it is
 * acknowledged, so a power loss or kernel crash loses no acknowledged write. normal: SQLite
 * fsyncs the WAL only at checkpoints; a process crash loses nothing, but a power loss can lose
 * the last commits (a scheduler told 204 may then double-book). PostgreSQL follows its server's
 * synchronous_commit; normal turns it off for placemat's sessions, with the same trade.
 */
export type Durability = 'full' | 'normal'

export interface BackendOptions {
  readonly?: boolean
  busyTimeoutMs?: number
  durability?: Durability
}

export async function openBackend(target: string, options: BackendOptions): Promise<Backend> {
  return isDatabaseUrl(target) ? PostgresBackend.open(target, options) : SqliteBackend.open(target, options)
}

/**
 * kysely prepares every statement anew; the same few statements run on every write, so
 * keep them prepared (better-sqlite3 runs each synchronously, so reuse is safe).
 */
function withStatementCache(raw: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>()
  return {
    close: () => raw.close(),
    prepare(sqlText: string) {
      let stmt = cache.get(sqlText)
      if (!stmt) {
        stmt = raw.prepare(sqlText)
        if (cache.size > 500) cache.clear()
        cache.set(sqlText, stmt)
      }
      return stmt
    },
  }
}

/** SQLite in WAL mode: one writer at a time (BEGIN IMMEDIATE), PRAGMA data_version for others' commits. */
class SqliteBackend implements Backend {
  readonly kind = 'sqlite'
  private checkpointer: BackgroundCheckpointer | null = null
  // Asked before every read and write: prepared once (db.pragma() prepares on every call).
  private readonly dataVersion: SQLite.Statement

  private constructor(
    private readonly file: string,
    private readonly raw: SQLite.Database,
    readonly db: Kysely<Database>,
    readonly isNew: boolean,
  ) {
    this.dataVersion = raw.prepare('PRAGMA data_version').pluck()
  }

  static async open(file: string, options: BackendOptions): Promise<SqliteBackend> {
    const isNew = file === ':memory:' || !fs.existsSync(file) || fs.statSync(file).size === 0
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), {recursive: true})
    const raw = new SQLite(file, {readonly: options.readonly ?? false})
    raw.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10000}`)
    if (!options.readonly) {
      raw.pragma('journal_mode = WAL')
      raw.pragma(`synchronous = ${options.durability === 'normal' ? 'NORMAL' : 'FULL'}`)
    }
    const db = new Kysely<Database>({dialect: new SqliteDialect({database: withStatementCache(raw)})})
    return new SqliteBackend(file, raw, db, isNew)
  }

  changeMark(): number {
    return this.dataVersion.get() as number
  }

  readonly rowArrays = (query: CompiledQuery): unknown[][] =>
    this.raw
      .prepare(query.sql)
      .raw(true)
      .all(...(query.parameters as unknown[])) as unknown[][]

  async beginWrite(conn: Conn): Promise<number> {
    await sql`begin immediate`.execute(conn)
    return this.changeMark()
  }

  // Our own commits do not move data_version.
  async commitWrite(conn: Conn, mark: number): Promise<number> {
    await sql`commit`.execute(conn)
    return mark
  }

  async beginRead(conn: Conn): Promise<void> {
    await sql`begin`.execute(conn)
  }

  serve(): void {
    if (this.file === ':memory:' || this.raw.readonly || this.checkpointer) return
    this.checkpointer = new BackgroundCheckpointer(this.file)
    this.raw.pragma('wal_autocheckpoint = 16384')
    this.raw.pragma(`journal_size_limit = ${64 * 1024 * 1024}`)
  }

  async close(): Promise<void> {
    await this.checkpointer?.stop()
    await this.db.destroy()
  }
}

// Any constant will do: every placemat writer of the database takes this lock.
const WRITE_LOCK_KEY = 0x706c6d74

/**
 * PostgreSQL: writers serialize on a transaction-level advisory lock and bump a counter row
 * (placemat_meta change_counter) that readers compare with what they loaded.
 */
class PostgresBackend implements Backend {
  readonly kind = 'postgres'

  private constructor(
    readonly db: Kysely<Database>,
    readonly isNew: boolean,
  ) {}

  static async open(url: string, options: BackendOptions = {}): Promise<PostgresBackend> {
    const pool = new pg.Pool({
      connectionString: url,
      max: 4,
      ...(options.durability === 'normal' ? {options: '-c synchronous_commit=off'} : {}),
      // Epoch-millisecond times are bigint columns: read them as numbers.
      types: {getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === 20 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser},
    })
    // An idle connection dropped by the server (restart, failover) must not bring the process
    // down: the pool replaces it on the next query.
    pool.on('error', () => undefined)
    const db = new Kysely<Database>({dialect: new PostgresDialect({pool})})
    try {
      const found = await sql<{n: number}>`select count(*)::int as n from information_schema.tables where table_schema = current_schema() and table_name = 'kysely_migration'`.execute(db)
      return new PostgresBackend(db, found.rows[0].n === 0)
    } catch (err) {
      await db.destroy()
      throw err
    }
  }

  async changeMark(conn: Conn = this.db): Promise<number> {
    const row = await conn.selectFrom('placemat_meta').select('value').where('key', '=', 'change_counter').executeTakeFirst()
    return Number(row?.value ?? 0)
  }

  // The mark is read in a statement of its own, after the lock is held: a statement's snapshot
  // is taken when it starts, so one that waited for the lock would see the counter from before
  // the commit it waited for (a lost update).
  async beginWrite(conn: Conn): Promise<number> {
    await sql`begin`.execute(conn)
    await sql`select pg_advisory_xact_lock(${WRITE_LOCK_KEY})`.execute(conn)
    return this.changeMark(conn)
  }

  // The counter and COMMIT in one round trip (a plain multi-statement query: the value is our
  // own integer).

  async commitWrite(conn: Conn, mark: number, changed: boolean): Promise<number> {
    if (!changed) {
      await sql`commit`.execute(conn)
      return mark
    }
    const next = Math.trunc(mark) + 1
    await sql
      .raw(`insert into placemat_meta (key, value) values ('change_counter', '${next}') on conflict (key) do update set value = excluded.value; commit`)
      .execute(conn)
    return next
  }

  async beginRead(conn: Conn): Promise<void> {
    await sql`begin isolation level repeatable read read only`.execute(conn)
  }

  serve(): void {}

  async close(): Promise<void> {
    await this.db.destroy()
  }
}
