import type {CompiledQuery, Kysely} from 'kysely'
import type {BackendOptions} from './backend-options.js'
import type {DatabaseFault} from './database-faults.js'
import type {JournalRow} from './journal-keys.js'
import type {Database} from './schema.js'
import {SqliteBackend} from './sqlite-backend.js'
import {databaseKind, foreignDatabaseUrl, type DatabaseKind} from './target.js'

export {databaseKind, describeTarget, isDatabaseUrl, resolveTarget, type DatabaseKind} from './target.js'

/** A row as the driver gives it: column name -> value. */
export type Row = Record<string, unknown>

/**
 * One connection held for a unit of work (a write transaction, a catch-up, a load). Statements
 * are compiled by kysely; `run` sends a list of them together, so that on PostgreSQL a
 * transaction's work costs round trips by the list, not by the statement.
 */
export interface Session {
  /** Runs `statements` in order and returns each one's rows (one round trip on PostgreSQL). */
  run(statements: Iterable<CompiledQuery>): Promise<Row[][]>
  /**
   * Every row of `columns` of `table`, as arrays, a page at a time (SQLite: keyed by `key`, so a
   * page costs the same at the end of the table; PostgreSQL: COPY inside the transaction). `kept`:
   * the columns whose text the caller keeps beyond the page.
   */
  pages(table: keyof Database, columns: string[], key: 'rowid' | 'seq', kept?: readonly string[]): AsyncGenerator<unknown[][]>
  /**
   * A write in one round trip, for a process whose State is at `position` (PostgreSQL and MariaDB, where
   * holding the write lock across round trips is what costs): takes the write lock, checks that
   * the change counter is still `position`, runs `statements` and commits, all as one implicit
   * transaction. 'moved' when another process committed first (nothing was written, and the lock
   * was held only for the check); 'too-big' when the statements do not fit in one round trip
   * (nothing was sent).
   */
  commitIfAt?(position: number, statements: Iterable<CompiledQuery>): Promise<'committed' | 'moved' | 'too-big'>
  /**
   * As commitIfAt, for a write whose outcome depends only on the records it changes (journal.ts's
   * keyedGuard): it commits when no transaction since `position` touched one of `keys` or changed
   * anything but allocations, and every one of them recorded its image. The statements number the
   * transaction themselves (keyedRecordStatements). Answers the images recorded after `position`,
   * the write's own last.
   */
  commitKeyed?(position: number, keys: readonly JournalRow[], statements: Iterable<CompiledQuery>): Promise<Row[] | 'moved' | 'too-big'>
}

/**
 * What the store needs of a database besides kysely's queries: sessions, the statements that
 * open a write (holding the database-wide write lock before anything is read) and a snapshot
 * read, and a cheap mark that moves when another process commits.
 */
export interface Backend {
  /** Which database it is, for what is said to people (`db status`, `--json`'s transport); what differs in behaviour is asked below. */
  readonly kind: DatabaseKind
  /**
   * A server other processes reach over connections (PostgreSQL, MariaDB), not a file of this
   * host (SQLite): each question costs a round trip, so other nodes' commits are followed from
   * the journal's images and the State is checked before a read is served; and a COMMIT can be
   * lost on its way, its outcome unknown.
   */
  readonly server: boolean
  /** One connection for every unit of work (SQLite): what must not land inside a transaction of ours waits its turn. */
  readonly oneConnection: boolean
  /**
   * Not finding a lost COMMIT's journal entry shows it was not kept: one server, which ran it or
   * not (PostgreSQL). Not on Galera, where another node may yet commit it.
   */
  readonly provesUnkept: boolean
  /** The order a load reads a key's rows in, which a follower reads them again in (journal.ts rowStatements). */
  readonly storageOrder: 'rowid' | 'ctid' | 'primary-key'
  /** Whether the database refuses writes now (a standby, a read-only server); a Galera node out of the primary component fails it. */
  readOnly(): Promise<boolean>
  /** The names of the database's tables (placemat's, or another's), as `db status` and `db check` read them. */
  tables(): Promise<string[]>
  /** The database's own check of what it stores: SQLite reads every page (['ok'] when sound); a server checks its pages itself: ['ok']. */
  integrity(): Promise<string[]>
  /** How the database keeps its commits, as `db status` says it: SQLite's journal mode, else the server's name. */
  storage(): Promise<string>
  /**
   * PostgreSQL: the connections of placemat nodes that keep no registry row (before 0.2.0), found
   * by the statements they last ran. Where no node ever ran without one: absent.
   */
  unregisteredConnections?(): Promise<Array<{pid: number; addr: string; since: number}>>
  /**
   * Whether a write may go in one round trip that commits only if what it depends on stood still
   * (Session.commitIfAt and commitKeyed), instead of taking the lock first.
   */
  readonly checkedCommits: boolean
  readonly db: Kysely<Database>
  /** True when no schema exists yet (a new file or an empty database). */
  readonly isNew: boolean
  /**
   * Moves when another process may have committed: SQLite's data_version (no I/O), PostgreSQL's
   * and MariaDB's change counter (one round trip).
   */
  changeMark(): number | Promise<number>
  /** Statements that BEGIN a write and hold the write lock before anything is read. */
  beginWrite(): CompiledQuery[]
  /** Statements that BEGIN a read of one consistent snapshot. */
  beginRead(): CompiledQuery[]
  /** Runs `fn` on a connection of its own; a connection that failed is closed, never reused. */
  session<T>(fn: (s: Session) => Promise<T>): Promise<T>
  /** Throws when the database can no longer keep a write (SQLite: the file was deleted or replaced). */
  checkWritable(): void
  /** Told of every database fault met, and of every connection opened after one. */
  observer: BackendObserver | null
  /** For a long-lived server: move per-commit upkeep off the request path. */
  serve(): void
  /**
   * Resolves once every commit made so far is on disk (a write is answered after it). `alone`:
   * no other write is queued behind the last commit.
   */
  durable(alone?: boolean): Promise<void>
  /** SQLite: the statement texts kept prepared, and preparing others' ahead of their first use. */
  preparedTexts?(): string[]
  prepareAhead?(texts: readonly string[]): number
  close(): Promise<void>
}

export interface BackendObserver {
  fault(kind: DatabaseFault, err: unknown): void
  reconnect(): void
  /** MariaDB: new connections reach another node than the pools' (a balancer's failover or failback); those on `from` are closed. */
  nodeChanged?(from: string, to: string): void
  /** MariaDB: new connections reach several nodes at once (a balancer that spreads them): none is closed for it. */
  nodesSpread?(nodes: readonly string[]): void
}

export {MAX_STATEMENT_PARAMETERS, rowsPerStatement} from './statement-limits.js'

export {DEFAULT_DATABASE_TIMEOUTS, type BackendOptions, type DatabaseTimeouts, type Durability} from './backend-options.js'

export async function openBackend(target: string, options: BackendOptions): Promise<Backend> {
  const foreignUrl = foreignDatabaseUrl(target)
  if (foreignUrl) throw foreignUrl
  const kind = databaseKind(target)
  // A server's driver is loaded only for a URL that names one: pg and mysql2 (and what they
  // load) were a sixth of a daemon's start on SQLite.
  if (kind === 'postgres') return (await import('./postgres-backend.js')).PostgresBackend.open(target, options)
  if (kind === 'mysql') return (await import('./mysql-backend.js')).MysqlBackend.open(target, options)
  return SqliteBackend.open(target, options)
}
