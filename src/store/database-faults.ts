/**
 * What a failed database call means for the caller: the database cannot be reached, is
 * read-only (a demoted primary), is out of space, took too long, or is no longer the file the
 * daemon opened. Every such failure becomes a 503 in Placement's error format with a
 * Retry-After; the driver's own text (addresses, SQL) never reaches a client.
 */
import {DATABASE_UNAVAILABLE, PlacementError} from '../core/errors.js'

export type DatabaseFault = 'unavailable' | 'read-only' | 'out-of-space' | 'timeout' | 'replaced' | 'starting' | 'contended'

const TITLES: Record<DatabaseFault, string> = {
  unavailable: 'Database Unavailable',
  'read-only': 'Database Read-Only',
  'out-of-space': 'Database Out Of Space',
  timeout: 'Database Timeout',
  replaced: 'Database File Replaced',
  starting: 'Service Starting',
  contended: 'Database Contended',
}

const DETAILS: Record<DatabaseFault, string> = {
  unavailable: 'The database is unavailable; nothing was changed. Try again shortly.',
  'read-only': 'The database is read-only (a standby, or a primary being demoted); nothing was changed. Try again shortly.',
  'out-of-space': 'The database is out of space; nothing was changed. Reads are still served.',
  timeout: 'The database did not answer in time; nothing was changed. Try again shortly.',
  replaced:
    'The database file this daemon opened was deleted or replaced; writes are refused so that none is acknowledged and then lost. Restart the daemon once the file is back.',
  starting: 'The daemon is connecting to its database and loading; try again shortly.',
  contended: "Another node's writes to the same records won every try; nothing was changed. Try again.",
}

export class DatabaseUnavailableError extends PlacementError {
  constructor(
    readonly fault: DatabaseFault,
    /** The driver's error, for the log only. */
    override readonly cause?: unknown,
    detail = DETAILS[fault],
  ) {
    super(503, detail, DATABASE_UNAVAILABLE, {'retry-after': fault === 'replaced' ? '30' : fault === 'starting' ? '5' : '2'}, TITLES[fault])
    this.name = 'DatabaseUnavailableError'
  }
}

// MariaDB's error numbers (its manual's error codes; mysql2 gives them as errno) by what they mean here.
const MYSQL_FAULTS = new Map<number, DatabaseFault>([
  [1213, 'contended'], // deadlock; on Galera also a certification failure at COMMIT (another node's write won)
  [1205, 'timeout'], // lock wait timeout
  [1969, 'timeout'], // max_statement_time exceeded
  [3024, 'timeout'], // max_execution_time exceeded (MySQL)
  [1317, 'unavailable'], // query interrupted (the server shutting down, KILL QUERY)
  [1047, 'unavailable'], // Galera: WSREP has not yet prepared node for application use (no quorum, joining)
  [1040, 'unavailable'], // too many connections
  [1053, 'unavailable'], // server shutdown in progress
  [1927, 'unavailable'], // connection killed
  [1290, 'read-only'], // --read-only (a replica)
  [1792, 'read-only'], // a read-only transaction
  [1021, 'out-of-space'], // disk full
  [1114, 'out-of-space'], // the table is full
  [1041, 'unavailable'], // out of memory
])

// mysql2's own codes for a connection that went away.
const MYSQL_CLIENT_CODES = new Set(['PROTOCOL_CONNECTION_LOST', 'ER_CONNECTION_KILLED', 'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR'])

// PostgreSQL SQLSTATEs (appendix A of its manual) by what they mean here.
const PG_FAULTS: Array<[RegExp, DatabaseFault]> = [
  [/^08/, 'unavailable'], // connection exception
  [/^57P0[1-4]$/, 'unavailable'], // admin/crash shutdown, cannot connect now, database dropped
  [/^53300$/, 'unavailable'], // too many connections
  [/^53200$/, 'unavailable'], // out of memory
  [/^53100$/, 'out-of-space'], // disk full
  [/^25006$/, 'read-only'], // read-only SQL transaction
  [/^57014$/, 'timeout'], // statement timeout (query canceled)
  [/^55P03$/, 'timeout'], // lock timeout
  [/^58/, 'unavailable'], // system error (I/O)
  [/^XX001$|^XX002$/, 'unavailable'], // data or index corrupted
]

const NODE_NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
])

// node-postgres says these in words, without a code.
const PG_CLIENT_MESSAGES: Array<[RegExp, DatabaseFault]> = [
  [/timeout exceeded when trying to connect|Query read timeout|Connection terminated due to connection timeout/i, 'timeout'],
  [/Connection terminated|not queryable|Client was closed|Cannot use a pool after calling end|connection.*(closed|ended)/i, 'unavailable'],
]

/** The fault a database error stands for, or null for an error that is not the database's (a bug, a refusal). */
export function databaseFault(err: unknown): DatabaseFault | null {
  if (err instanceof DatabaseUnavailableError) return err.fault
  const e = err as {code?: unknown; message?: unknown; errors?: unknown[]} | null
  if (!e || typeof e !== 'object') return null
  const code = typeof e.code === 'string' ? e.code : ''
  // mysql2: a server's error has its number and a code ER_...; the client's own a PROTOCOL_ code.
  const errno = (e as {errno?: unknown}).errno
  if (typeof errno === 'number' && (code.startsWith('ER_') || 'sqlState' in e)) {
    const fault = MYSQL_FAULTS.get(errno)
    if (fault) return fault
    // Galera, in words whatever the number: the node is out of the primary component.
    if (/primary component|WSREP has not yet prepared/i.test(String(e.message ?? ''))) return 'unavailable'
    // Galera: a node rejoining its cluster refuses streaming replication's session settings (1231)
    // until it runs Galera 4 again; the connection opened then is not used.
    if (errno === 1231 && /wsrep_trx_fragment/.test(String(e.message ?? ''))) return 'unavailable'
    if (code.startsWith('ER_')) return null
  }
  if (MYSQL_CLIENT_CODES.has(code)) return 'unavailable'
  if (code === 'PROTOCOL_SEQUENCE_TIMEOUT') return 'timeout' // mysql2: no answer within the call's timeout
  if (code.startsWith('SQLITE_')) {
    if (code === 'SQLITE_FULL') return 'out-of-space'
    if (code.startsWith('SQLITE_READONLY')) return 'read-only'
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'timeout'
    if (/^SQLITE_(IOERR|CANTOPEN|NOTADB|CORRUPT|PROTOCOL)/.test(code)) return 'unavailable'
    return null
  }
  if (/^[0-9A-Z]{5}$/.test(code)) {
    for (const [re, fault] of PG_FAULTS) if (re.test(code)) return fault
    return null
  }
  if (code === 'ETIMEDOUT') return 'timeout'
  if (NODE_NET_CODES.has(code)) return 'unavailable'
  // An AggregateError of several addresses tried (localhost as ::1 and 127.0.0.1).
  if (Array.isArray(e.errors) && e.errors.some((x) => databaseFault(x) !== null)) return 'unavailable'
  const message = typeof e.message === 'string' ? e.message : ''
  for (const [re, fault] of PG_CLIENT_MESSAGES) if (re.test(message)) return fault
  return null
}

/**
 * The 503 for a write that may have been kept: its connection was lost during COMMIT, or the
 * commit could not be synced. It must not say that nothing was changed: a client told so would
 * leave a kept claim behind, held by nobody. It is told to read the change back (a retry is safe
 * too: a kept change is refused 409 by the generations it names).
 */
export function outcomeUnknown(fault: DatabaseFault, err: unknown, how: 'commit' | 'sync'): DatabaseUnavailableError {
  const what =
    how === 'sync'
      ? 'The change was committed but could not be flushed to disk'
      : answeredByServer(err)
        ? 'The database failed the commit without saying whether it was kept (a node leaving its cluster)'
        : 'The connection to the database was lost during the commit'
  return new DatabaseUnavailableError(fault, err, `${what}: it ${OUTCOME_UNKNOWN}. Read it back before sending it again.`)
}

/**
 * Whether the server itself answered with `err` (MariaDB's errno and SQLSTATE, PostgreSQL's
 * severity), rather than the connection failing: a Galera node that leaves the primary component
 * while a COMMIT replicates fails it so, and no more knows than a lost connection would whether
 * the cluster kept it.
 */
export function answeredByServer(err: unknown): boolean {
  const e = err instanceof DatabaseUnavailableError ? err.cause : err
  if (!e || typeof e !== 'object') return false
  return (typeof (e as {errno?: unknown}).errno === 'number' && 'sqlState' in e) || typeof (e as {severity?: unknown}).severity === 'string'
}

/** What the detail of such a 503 says (clients may look for it). */
export const OUTCOME_UNKNOWN = 'may or may not have been kept'

/** `err` as the 503 it stands for, or `err` itself when it is not a database fault. */
export function asDatabaseError(err: unknown): unknown {
  if (err instanceof DatabaseUnavailableError) return err
  const fault = databaseFault(err)
  return fault ? new DatabaseUnavailableError(fault, err) : err
}

/** The driver's words for a log line: a code and a message, never more. */
export function describeCause(err: unknown): string {
  const e = err as {code?: unknown; message?: unknown; cause?: unknown} | null
  if (e instanceof DatabaseUnavailableError) return e.cause ? describeCause(e.cause) : e.fault
  if (!e || typeof e !== 'object') return String(err)
  const code = typeof e.code === 'string' ? `${e.code} ` : ''
  const message = typeof e.message === 'string' ? e.message : String(err)
  return `${code}${message}`.slice(0, 300) + (STREAMING.test(message) ? STREAMING_GLOSS : '')
}

/**
 * MariaDB names the replication of every COMMIT on a connection that may stream (as placemat's
 * on Galera may, for large batches) a fragment, however small the write: said so beside its words.
 */
const STREAMING = /streaming replication fragment/i
const STREAMING_GLOSS =
  ' [MariaDB says "fragment" of any COMMIT on a connection allowed to stream; a write under 64 MiB, as every claim, replicates whole]'
