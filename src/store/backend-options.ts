/** How a backend is opened: durability, timeouts, page size (a leaf module: both backends read it). */

/** Rows read at a time when the State is loaded. */
export const PAGE = 20_000

/**
 * When a commit is on disk. full (the default): every COMMIT is fsynced before it is
 * acknowledged, so a power loss or kernel crash loses no acknowledged write. normal: SQLite
 * fsyncs the WAL only at checkpoints; a process crash loses nothing, but a power loss can lose
 * the last commits (a scheduler told 204 may then double-book). PostgreSQL follows its server's
 * synchronous_commit; normal turns it off for placemat's sessions, with the same trade.
 */
export type Durability = 'full' | 'normal'

/** How long the daemon waits on the database before it answers 503 (ms). */
export interface DatabaseTimeouts {
  /** Opening a connection (PostgreSQL). */
  connectMs: number
  /** One statement (PostgreSQL statement_timeout, and a client-side bound for a frozen server). */
  statementMs: number
  /** Waiting for the write lock (PostgreSQL lock_timeout, SQLite busy_timeout). */
  lockMs: number
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {connectMs: 5000, statementMs: 30_000, lockMs: 10_000}

export interface BackendOptions {
  readonly?: boolean
  busyTimeoutMs?: number
  durability?: Durability
  timeouts?: Partial<DatabaseTimeouts>
}
