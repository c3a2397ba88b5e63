/** The PostgreSQL backend (see Backend in backends.ts). */
import {Kysely, PostgresDialect, sql, type CompiledQuery} from 'kysely'
import pg from 'pg'
import {DEFAULT_DATABASE_TIMEOUTS, PAGE, type BackendOptions} from './backend-options.js'
import type {Backend, BackendObserver, Row, Session} from './backends.js'
import {ConnectionFaults} from './connection-faults.js'
import {copyPages} from './copy-pages.js'
import {databaseFault} from './database-faults.js'
import {GUARD_RANGE, IMAGE_FORMAT, KEY, type JournalRow} from './journal-keys.js'
import {RELEASE} from './release.js'
import type {Database} from './schema.js'
import {DIALECTS, speaks} from './statement-text.js'
import {foreignDatabase} from './target.js'

// Any constant will do: every placemat writer of the database takes this lock.
const WRITE_LOCK_KEY = 0x706c6d74

/** Statements sent together stay under this much SQL text (a big batch takes several round trips). */
const MAX_ROUND_TRIP_TEXT = 4 * 1024 * 1024

/** The statements of a placemat before 0.2.0, as pg_stat_activity shows a connection's last one. */
const OLD_NODE_STATEMENT = 'placemat_|kysely_migration|pg_advisory_xact_lock\\(1886154100\\)|"resource_providers"'

/** The SQLSTATE of commitIfAt's check: another process committed first. */
const MOVED = 'PM409'

/** A PostgreSQL session can also send SQL text as it is, in one round trip. */
interface PostgresSession extends Session {
  send(text: string): Promise<Row[][]>
}

/**
 * commitKeyed's check, under the write lock (the function placemat_keyed_check_v2, migrations/0013-keyed-check-v2.ts):
 * since `position`, nothing was pruned, every transaction recorded its image in a format this
 * release reads (the write's process applies them after its own), and none touched a provider or consumer of `keys` or changed anything but
 * allocations and provider generations (a provider deleted elsewhere changes nothing this write
 * decided). A writer more than GUARD_RANGE transactions behind is refused too.
 */
function keyedGuard(position: number, keys: readonly JournalRow[]): string {
  const array = (kind: string) =>
    `ARRAY[${keys
      .filter((k) => k.kind === kind)
      .map((k) => literal(k.key))
      .join(', ')}]::text[]`
  return `select placemat_keyed_check_v2(${position}, ${array(KEY.provider)}, ${array(KEY.consumer)}, ${GUARD_RANGE}, ${IMAGE_FORMAT})`
}

/** The images recorded after `position`, in order (the last statement of a keyed commit). */
const imagesAfter = (position: number) => `select seq, body, format from placemat_change_images where seq > ${position} order by seq`

/** Statements (compiled, or SQL text) as the text of one simple query. */
function joinStatements(statements: Iterable<CompiledQuery | string>, max: number): string {
  let text = ''
  for (const q of statements) {
    text += (text ? ';\n' : '') + (typeof q === 'string' ? q : inlineStatement(q))
    if (text.length > max) break
  }
  return text
}

/** A value as a PostgreSQL literal (standard_conforming_strings is on for placemat's sessions). */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL'
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`)
    return String(v)
  }
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE'
  if (typeof v === 'bigint') return v.toString()
  const s = String(v)
  if (s.includes('\0')) throw new Error('NUL in a statement value')
  return `'${s.replace(/'/g, "''")}'`
}

/** A compiled statement with its parameters written in, to be sent with others in one simple query. */
export function inlineStatement(q: CompiledQuery): string {
  const params = q.parameters as unknown[]
  if (params.length === 0) return q.sql
  return q.sql.replace(/\$(\d+)/g, (_, n: string) => literal(params[Number(n) - 1]))
}

/**
 * PostgreSQL: writers serialize on a transaction-level advisory lock and bump a counter row
 * (placemat_meta change_counter) that readers compare with what they loaded. Statements of one
 * unit of work go in one simple query (values written in as literals), so a write costs two
 * round trips whatever it touches.
 */
export class PostgresBackend implements Backend {
  readonly kind = 'postgres'
  readonly server = true
  readonly oneConnection = false
  readonly provesUnkept = true
  readonly storageOrder = 'ctid'
  readonly checkedCommits = true
  observer: BackendObserver | null = null
  private readonly faults = new ConnectionFaults(() => this.observer)

  private constructor(
    private readonly pool: pg.Pool,
    readonly db: Kysely<Database>,
    readonly isNew: boolean,
    /** How long a whole-table read waits for the server's next rows before it gives up. */
    private readonly stallMs: number,
  ) {}

  static async open(url: string, options: BackendOptions = {}): Promise<PostgresBackend> {
    const t = {...DEFAULT_DATABASE_TIMEOUTS, ...options.timeouts}
    const settings = [
      `-c statement_timeout=${t.statementMs}`,
      `-c lock_timeout=${t.lockMs}`,
      // A node cut off mid-transaction must not hold the write lock for ever.
      `-c idle_in_transaction_session_timeout=${Math.max(t.statementMs, 1000)}`,
      '-c standard_conforming_strings=on',
      // Whole-table reads start at the table's first page, so rows come in storage order.
      '-c synchronize_seqscans=off',
      ...(options.durability === 'normal' ? ['-c synchronous_commit=off'] : []),
    ]
    const pool = new pg.Pool({
      connectionString: url,
      // How a node of another release tells this one's connections apart (cli/services/db/live-nodes.ts).
      application_name: `placemat/${RELEASE}`,
      max: 4,
      connectionTimeoutMillis: t.connectMs,
      // statement_timeout is the server's; this bounds a call to a server that stopped answering.
      query_timeout: t.statementMs + 2000,
      keepAlive: true,
      options: settings.join(' '),
      // Epoch-millisecond times are bigint columns: read them as numbers.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === 20 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    })
    const db = new Kysely<Database>({dialect: new PostgresDialect({pool})})
    speaks(db, DIALECTS.postgres)
    const backend = new PostgresBackend(pool, db, false, t.statementMs + 2000)
    // A connection's error (the server restarted, a failover, pg_terminate_backend) is an error of
    // the call that meets it, never an unhandled event: every client gets a listener for life, idle
    // or held. The pool drops the client when it is released.
    pool.on('connect', (client) => {
      client.on('error', (err) => backend.noteFault(err))
    })
    pool.on('error', (err) => backend.noteFault(err))
    try {
      const tables = (
        await sql<{name: string}>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
          db,
        )
      ).rows.map((r) => r.name)
      const foreign = foreignDatabase(url, tables)
      if (foreign) throw foreign
      ;(backend as {isNew: boolean}).isNew = !tables.includes('kysely_migration')
      return backend
    } catch (err) {
      await db.destroy()
      throw err
    }
  }

  noteFault(err: unknown): void {
    this.faults.fault(err)
  }

  async changeMark(): Promise<number> {
    try {
      const r = await this.pool.query("select value from placemat_meta where key = 'change_counter'")
      return Number(r.rows[0]?.value ?? 0)
    } catch (err) {
      if (databaseFault(err)) this.noteFault(err)
      throw err
    }
  }

  // The lock in a statement of its own, before anything is read: in READ COMMITTED each statement
  // takes its snapshot when it starts, so what follows the lock sees every commit made before it.
  beginWrite(): CompiledQuery[] {
    return [sql`begin`.compile(this.db), sql`select pg_advisory_xact_lock(${sql.lit(WRITE_LOCK_KEY)})`.compile(this.db)]
  }

  beginRead(): CompiledQuery[] {
    return [sql`begin isolation level repeatable read read only`.compile(this.db)]
  }

  checkWritable(): void {}

  async tables(): Promise<string[]> {
    const r = await sql<{
      name: string
    }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(this.db)
    return r.rows.map((row) => row.name)
  }

  /** PostgreSQL checks its own pages (data checksums, if the cluster has them). */
  async integrity(): Promise<string[]> {
    return ['ok']
  }

  async storage(): Promise<string> {
    return 'postgresql'
  }

  async unregisteredConnections(): Promise<Array<{pid: number; addr: string; since: number}>> {
    const r = await sql<{pid: number; addr: string; since: number}>`select pid, coalesce(host(client_addr), 'a local socket') as addr,
        cast(extract(epoch from backend_start) * 1000 as bigint) as since
      from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
        and coalesce(application_name, '') = '' and query ~ ${OLD_NODE_STATEMENT}
      order by backend_start`.execute(this.db)
    return r.rows.map((row) => ({pid: Number(row.pid), addr: row.addr, since: Number(row.since)}))
  }

  /** A standby, or a primary being demoted, runs every transaction read-only. */
  async readOnly(): Promise<boolean> {
    const r = await sql<{ro: string}>`select current_setting('transaction_read_only') as ro`.execute(this.db)
    return r.rows[0]?.ro === 'on'
  }

  async session<T>(fn: (s: PostgresSession) => Promise<T>): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (err) {
      this.noteFault(err)
      throw err
    }
    let failed: unknown
    try {
      const answer = await fn(this.sessionOf(client))
      this.faults.answered()
      return answer
    } catch (err) {
      failed = err
      if (databaseFault(err)) {
        // The connection is lost, timed out or refused: drop it (the server rolls back what it
        // held when it notices), never wait on it again.
        this.noteFault(err)
      } else {
        // A refusal of ours or of the database's: end the transaction, or drop the connection.
        await client.query('rollback').catch((e) => (failed = e))
      }
      throw err
    } finally {
      client.release(failed !== undefined && databaseFault(failed) ? (failed as Error) : undefined)
    }
  }

  private sessionOf(client: pg.PoolClient): PostgresSession {
    const send = async (text: string) => {
      const r = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[]
      return (Array.isArray(r) ? r : [r]).map((result) => result.rows ?? [])
    }
    return {
      run: async (statements) => {
        const out: Row[][] = []
        let text = ''
        let count = 0
        for (const q of statements) {
          const s = inlineStatement(q)
          if (count && text.length + s.length > MAX_ROUND_TRIP_TEXT) {
            out.push(...(await send(text)))
            text = ''
            count = 0
          }
          text += (count ? ';\n' : '') + s
          count++
        }
        if (count) out.push(...(await send(text)))
        return out
      },
      send,
      pages: (table, columns, key, kept) => this.copyPages(client, table, columns, key, kept),
      commitIfAt: async (position, statements) => {
        if (!Number.isSafeInteger(position)) throw new Error(`not a journal position: ${position}`)
        // No BEGIN: statements sent in one simple query are one implicit transaction, which the
        // server rolls back at its first error without waiting for us, releasing the lock at once.
        const guard =
          `do $$begin if coalesce((select cast(value as bigint) from placemat_meta where key = 'change_counter'), 0) <> ${position} ` +
          `then raise exception using errcode = '${MOVED}', message = 'the change counter moved'; end if; end$$`
        const text = joinStatements([this.beginWrite()[1], guard, ...statements], MAX_ROUND_TRIP_TEXT)
        if (text.length > MAX_ROUND_TRIP_TEXT) return 'too-big'
        try {
          await send(text)
          return 'committed'
        } catch (err) {
          if ((err as {code?: unknown}).code === MOVED) return 'moved'
          throw err
        }
      },
      commitKeyed: async (position, keys, statements) => {
        if (!Number.isSafeInteger(position)) throw new Error(`not a journal position: ${position}`)
        const text = joinStatements(
          [this.beginWrite()[1], keyedGuard(position, keys), ...statements, imagesAfter(position)],
          MAX_ROUND_TRIP_TEXT,
        )
        if (text.length > MAX_ROUND_TRIP_TEXT) return 'too-big'
        try {
          const results = await send(text)
          return results[results.length - 1]
        } catch (err) {
          if ((err as {code?: unknown}).code === MOVED) return 'moved'
          throw err
        }
      },
    }
  }

  // COPY inside the session's transaction: one snapshot, streamed by the server while the caller
  // builds the State from the page before (copy-pages.ts).
  private copyPages(
    client: pg.PoolClient,
    table: keyof Database,
    columns: string[],
    key: 'rowid' | 'seq',
    kept: readonly string[] = [],
  ): AsyncGenerator<unknown[][]> {
    let query = this.db.selectFrom(table).select(columns.map((c) => sql.ref(c).as(c)))
    if (key === 'seq') query = query.orderBy(sql.ref('seq'))
    return copyPages(client, inlineStatement(query.compile()), {pageSize: PAGE, stallMs: this.stallMs, kept})
  }

  serve(): void {}

  /** PostgreSQL's COMMIT returns once the commit is as durable as synchronous_commit says. */
  durable(): Promise<void> {
    return Promise.resolve()
  }

  async close(): Promise<void> {
    await this.db.destroy()
  }
}
