/**
 * The MariaDB backend (see Backend in backends.ts): a MariaDB server of 10.6 or later, alone or a
 * node of a Galera cluster, the database most OpenStack control planes already run.
 *
 * Writers serialize on the change counter's row (SELECT ... FOR UPDATE), the row every write
 * updates: MariaDB's GET_LOCK is local to one Galera node, a row is not. Two nodes of a cluster
 * that write at once both update it, and Galera's certification lets the first COMMIT win; the
 * other's ends with error 1213, a lost race the write queue runs again (DatabaseFault
 * 'contended'). Reads that must see other nodes' commits (the change counter a node checks before
 * it serves, the lock, a snapshot to catch up from) wait for the node to apply what the cluster
 * committed before them (wsrep_sync_wait), and only those.
 *
 * Sessions run with ANSI_QUOTES (placemat's statements double-quote names, as PostgreSQL and
 * SQLite take them), READ COMMITTED (each statement sees what committed before it, as on
 * PostgreSQL), utf8mb4 and, for a database placemat creates the schema in, a binary collation
 * without padding: names compare as the State compares them, byte for byte.
 */
import {CompiledQuery, Kysely, MysqlAdapter, MysqlDialect, sql} from 'kysely'
import mysql from 'mysql2'
import type {PoolConnection as PromiseConnection} from 'mysql2/promise'
import {DEFAULT_DATABASE_TIMEOUTS, PAGE, type BackendOptions} from './backend-options.js'
import type {Backend, BackendObserver, Row, Session} from './backends.js'
import {ConnectionFaults} from './connection-faults.js'
import {DatabaseUnavailableError, databaseFault} from './database-faults.js'
import {GaleraNodes, NODE_QUERY} from './galera-nodes.js'
import type {JournalRow} from './journal-keys.js'
import {closeWhenDone, MAX_RETIRED, mysqlConnection, poolWithout} from './mysql-connections.js'
import {counterCheck, keyedCheck, moved} from './mysql-write-checks.js'
import {PRIMARY_KEYS, type Database} from './schema.js'
import {DIALECTS, speaks} from './statement-text.js'
import {foreignDatabase} from './target.js'

/** Statements sent together stay under this much SQL text (below max_allowed_packet's 16 MiB default, and a Galera write set's comfort). */
const MAX_ROUND_TRIP_TEXT = 4 * 1024 * 1024

/** The session's settings, sent once per connection. */
const SQL_MODE = 'ANSI_QUOTES,STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'

/** A statement that begins a transaction (beginWrite's, beginRead's), and one that ends it. */
const OPENS = /^start transaction/i
const CLOSES = /^(commit|rollback)$/i
const COMMIT = CompiledQuery.raw('commit')

/** The change counter (the row writers lock). */
const COUNTER = CompiledQuery.raw(`select "value" from placemat_meta where "key" = 'change_counter'`)

/** MariaDB's duplicate key: on Galera, a row another node's commit wrote first (see sessionOf). */
const DUPLICATE_KEY = 1062

/** A duplicate key on Galera as the lost race it is: error 1213, which the write queue runs again. */
function lostRace(err: unknown): Error {
  return Object.assign(new Error(`another node committed first (${(err as Error).message})`), {
    errno: 1213,
    code: 'ER_LOCK_DEADLOCK',
    sqlState: '40001',
    cause: err,
  })
}

/** The answer to each new connection's settings, until it has come back without an error. */
const settingsOf = new WeakMap<object, Promise<void>>()

/** A database fault other than a lost race: the connection that met it is not used again. */
function breaksConnection(err: unknown): boolean {
  const fault = databaseFault(err)
  return fault !== null && fault !== 'contended'
}

/** A streaming replication fragment: at most this, and half the cluster's wsrep_max_ws_size. */
const MAX_FRAGMENT = 64 * 1024 * 1024

/** The session settings that replicate a write set larger than a fragment in fragments. */
function streamingSettings(maxWsSize: number): string {
  const fragment = Math.max(1024 * 1024, Math.min(MAX_FRAGMENT, Math.floor((maxWsSize || 2 ** 31) / 2)))
  return `set session wsrep_trx_fragment_unit = 'bytes', session wsrep_trx_fragment_size = ${fragment}`
}

/** How often a daemon on Galera asks which node the balancer sends new connections to. */
const NODE_ASK_MS = 5000

/** The collation of a database placemat creates its schema in. */
const COLLATION = 'utf8mb4_nopad_bin'

/** kysely's MariaDB adapter, without GET_LOCK on Galera (a node's lock, refused there): migrations run one at a time by the operator's hand. */
class GaleraAdapter extends MysqlAdapter {
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}

export class MysqlBackend implements Backend {
  readonly kind = 'mysql'
  readonly server = true
  readonly oneConnection = false
  /** One MariaDB ran a lost COMMIT or not; on Galera, not finding it on the node asked does not show that no node will commit it. */
  get provesUnkept(): boolean {
    return !this.galera
  }
  readonly storageOrder = 'primary-key'
  /**
   * One MariaDB: yes. Galera: no; the lock first. An applier's brute-force abort between the
   * statements of a round trip leaves the ones after it to run, and COMMIT, in a transaction of
   * their own, and a claim's statements number their transaction themselves (the counter's next
   * value), so nothing refuses that half of a write (the churn test on three nodes leaked a claim
   * and left nodes' usages apart from the database's this way).
   */
  get checkedCommits(): boolean {
    return !this.galera
  }
  observer: BackendObserver | null = null

  private constructor(
    /** Told of the connections' faults (from before the backend existed: the pools' first connections) and reconnects. */
    private readonly faults: ConnectionFaults,
    /** Which Galera node the connections reach: one on another than the newest's is retired. */
    private readonly nodes: GaleraNodes,
    /** The sessions' connections (units of work), apart from kysely's: they never autocommit (see sessionOf). */
    private readonly sessions: mysql.Pool,
    readonly db: Kysely<Database>,
    readonly isNew: boolean,
    /** A node of a Galera cluster (wsrep_on): reads that must see others' commits wait for them. */
    readonly galera: boolean,
    /** How long a call waits for a server that stopped answering (max_statement_time is the server's own bound). */
    private readonly stallMs: number,
    /** The pools' connection options, for the connection that asks where new ones go (see serve). */
    private readonly connection: mysql.ConnectionOptions,
  ) {}

  static async open(url: string, options: BackendOptions = {}): Promise<MysqlBackend> {
    const t = {...DEFAULT_DATABASE_TIMEOUTS, ...options.timeouts}
    const connection: mysql.ConnectionOptions = {
      ...mysqlConnection(url),
      multipleStatements: true,
      connectTimeout: t.connectMs,
      enableKeepAlive: true,
      charset: 'UTF8MB4_BIN',
      supportBigNumbers: true,
      decimalNumbers: true,
    }
    const options_ = {...connection, connectionLimit: 4}
    const pool = mysql.createPool(options_)
    const sessions = mysql.createPool(options_)
    const lockSeconds = Math.max(1, Math.ceil(t.lockMs / 1000))
    const settings =
      `set session sql_mode = '${SQL_MODE}', session innodb_lock_wait_timeout = ${lockSeconds}, ` +
      `session lock_wait_timeout = ${lockSeconds}, session max_statement_time = ${t.statementMs / 1000}; ` +
      'set session transaction isolation level read committed'
    let backend: MysqlBackend | null = null
    const faults = new ConnectionFaults(() => backend?.observer ?? null)
    const nodes = new GaleraNodes({
      changed: (from, to) => backend?.observer?.nodeChanged?.(from, to),
      spread: (list) => backend?.observer?.nodesSpread?.(list),
    })
    const connected = (conn: mysql.PoolConnection, extra = '') => {
      // A unit of work waits for the answer to its connection's settings (see session): one
      // whose settings were refused (a Galera node rejoining refuses streaming replication's)
      // is closed before anything of the work is sent on it. The last statement names the node
      // the connection reached.
      const settled = new Promise<void>((resolve, reject) =>
        conn.query(`${settings}${extra}; ${NODE_QUERY}`, (err: unknown, results: unknown) => {
          if (!err) {
            const node = (results as Row[][]).at(-1)?.[0]?.node
            if (typeof node === 'string') nodes.reached(conn, node)
            settingsOf.delete(conn)
            return resolve()
          }
          faults.fault(err)
          reject(err)
        }),
      )
      settled.catch(() => undefined) // kysely's connections are not asked: never an unhandled rejection
      settingsOf.set(conn, settled)
      conn.on('error', (err) => faults.fault(err))
    }
    // Galera: a transaction's write set is replicated in fragments once it grows past a fragment
    // (streaming replication), so a large batch (a million-operation apply or import) is never
    // one write set over wsrep_max_ws_size; a small one never reaches a fragment and replicates
    // whole at COMMIT, as ever.
    let streaming = ''
    const andStreaming = () => (streaming ? `; ${streaming}` : '')
    pool.on('connection', (conn) => {
      closeWhenDone(conn, () => nodes.retired(conn))
      connected(conn, andStreaming())
    })
    // The sessions' reads are what must see other nodes' commits (a catch-up, the lock, the
    // freshness check): on Galera each waits until this node applied what the cluster committed
    // before it (BEGIN and SELECT: wsrep_sync_wait's bit 1). kysely's own (the schema, health, the
    // node registry) need not.
    sessions.on('connection', (conn) =>
      connected(conn, `; set session autocommit = 0${galera ? `; set session wsrep_sync_wait = 1${andStreaming()}` : ''}`),
    )
    const probe = pool.promise()
    let galera = false
    let tables: string[] = []
    try {
      const [wsrep] = (await probe
        .query('select @@global.wsrep_on as w, @@global.wsrep_max_ws_size as max')
        .catch(() => [[{w: 0}]])) as unknown as [Row[]]
      galera = Number(wsrep[0]?.w ?? 0) === 1
      if (galera) {
        streaming = streamingSettings(Number(wsrep[0]?.max))
        // The probe's connection, the pool's only one so far, was opened before this was known.
        await probe.query(streaming)
      }
      const [rows] = (await probe.query(
        'select table_name as name from information_schema.tables where table_schema = database()',
      )) as unknown as [Row[]]
      tables = rows.map((r) => String(r.name ?? r.NAME ?? r.TABLE_NAME))
    } catch (err) {
      await probe.end().catch(() => undefined)
      await sessions
        .promise()
        .end()
        .catch(() => undefined)
      throw err
    }
    const dialect = new (class extends MysqlDialect {
      override createAdapter() {
        return galera ? new GaleraAdapter() : new MysqlAdapter()
      }
    })({pool: poolWithout(pool, (conn) => nodes.retired(conn))})
    const db = new Kysely<Database>({dialect})
    speaks(db, DIALECTS.mariadb)
    try {
      const foreign = foreignDatabase(url, tables)
      if (foreign) throw foreign
      const isNew = !tables.includes('kysely_migration')
      // Tables made from here on take the database's collation: names compare byte for byte.
      if (!tables.length && !options.readonly) await probe.query(`alter database character set utf8mb4 collate ${COLLATION}`)
      backend = new MysqlBackend(faults, nodes, sessions, db, isNew, galera, t.statementMs + 2000, connection)
      return backend
    } catch (err) {
      await db.destroy()
      await sessions
        .promise()
        .end()
        .catch(() => undefined)
      throw err
    }
  }

  /** On a session's connection, so that on Galera it waits for what the cluster committed before it. */
  changeMark(): Promise<number> {
    return this.session(async (s) => {
      const [rows] = await s.run([COUNTER])
      return Number(rows[0]?.value ?? 0)
    })
  }

  // The counter's row locked before anything is read: in READ COMMITTED what follows sees every
  // commit made before the lock (on Galera, once applied here: the lock waits for that).
  beginWrite(): CompiledQuery[] {
    return [sql`start transaction`.compile(this.db), CompiledQuery.raw(`${COUNTER.sql} for update`)]
  }

  beginRead(): CompiledQuery[] {
    return [
      sql`set transaction isolation level repeatable read`.compile(this.db),
      sql`start transaction with consistent snapshot, read only`.compile(this.db),
    ]
  }

  checkWritable(): void {}

  async tables(): Promise<string[]> {
    const r = await sql<{name: string}>`select table_name as name from information_schema.tables where table_schema = database()`.execute(
      this.db,
    )
    return r.rows.map((row) => row.name)
  }

  /** InnoDB checks its own pages. */
  async integrity(): Promise<string[]> {
    return ['ok']
  }

  async storage(): Promise<string> {
    return 'mariadb'
  }

  /** A Galera node out of the primary component refuses this (error 1047): unavailable, not read-only. */
  async readOnly(): Promise<boolean> {
    const r = await sql<{
      ro: string
    }>`select case when @@global.read_only then 'on' else 'off' end as ro from placemat_meta limit 1`.execute(this.db)
    return r.rows[0]?.ro === 'on'
  }

  async session<T>(fn: (s: Session) => Promise<T>): Promise<T> {
    const conn = await this.sessionConnection()
    // A connection that failed for the database's reason is closed, never reused; after a lost
    // race (the transaction is gone, the connection sound) or a refusal, the transaction is ended.
    let broken = false
    const session = this.sessionOf(conn)
    try {
      const result = await fn(session)
      if (session.open) await conn.query('rollback') // a unit of work that left its transaction open keeps nothing
      this.faults.answered()
      return result
    } catch (err) {
      broken = breaksConnection(err)
      if (broken) this.faults.fault(err)
      else await conn.query('rollback').catch((e) => (broken = breaksConnection(e)))
      throw err
    } finally {
      if (broken) conn.destroy()
      else conn.release()
    }
  }

  /** A session's connection whose settings were taken, on the node the newest connection reached. */
  private async sessionConnection(): Promise<PromiseConnection> {
    for (let tries = 0; ; tries++) {
      let conn: PromiseConnection
      try {
        conn = await this.sessions.promise().getConnection()
      } catch (err) {
        this.faults.fault(err)
        throw err
      }
      const core = (conn as unknown as {connection: object}).connection
      const settled = settingsOf.get(core)
      if (settled) {
        try {
          await settled
        } catch (err) {
          conn.destroy()
          throw new DatabaseUnavailableError(databaseFault(err) ?? 'unavailable', err)
        }
      }
      if (tries >= MAX_RETIRED || !this.nodes.retired(core)) return conn
      conn.destroy()
    }
  }

  /**
   * A session's connection never autocommits: on Galera, a transaction another node's commit
   * aborts (a brute-force abort, while we decide) is rolled back, and the statements we send next
   * would otherwise each commit on their own, outside the lock: half a write, decided on a State
   * that write no longer stands on. Here they open a transaction of their own, which our COMMIT
   * ends and certification or the journal's keys refuse. A batch sent outside a transaction (a
   * read on its own) is committed in the same round trip, so no idle connection holds one open.
   */
  private sessionOf(conn: PromiseConnection): Session & {open: boolean} {
    const send = async (texts: string[], values: unknown[]): Promise<Row[][]> => {
      let results: unknown
      try {
        // Without values, the text goes as it is (a '?' in a value written in stays one).
        const text = texts.join(';\n')
        ;[results] = (await conn.query(
          values.length ? {sql: text, values, timeout: this.stallMs} : {sql: text, timeout: this.stallMs},
        )) as unknown as [unknown]
      } catch (err) {
        throw this.galera && (err as {errno?: unknown}).errno === DUPLICATE_KEY ? lostRace(err) : err
      }
      const list = texts.length === 1 ? [results] : (results as unknown[])
      return list.map((r) => (Array.isArray(r) ? (r as Row[]) : []))
    }
    /** Statements with their values written in (mysql2's escaping), for one round trip with text of ours. */
    const inline = (q: CompiledQuery) =>
      q.parameters.length ? mysql.format(q.sql, q.parameters as Parameters<typeof mysql.format>[1]) : q.sql
    // One round trip: the lock, the check, the statements and COMMIT (`tail` just before it).
    // A check that refuses ends it; the session rolls back what went before.
    const oneTrip = async (check: string, statements: Iterable<CompiledQuery>, tail: string[] = []): Promise<Row[][] | 'too-big'> => {
      const texts = [`${COUNTER.sql} for update`, check]
      let size = texts[0].length + check.length
      for (const q of statements) {
        const text = inline(q)
        size += text.length
        if (size > MAX_ROUND_TRIP_TEXT) return 'too-big'
        texts.push(text)
      }
      texts.push(...tail, COMMIT.sql)
      session.open = true
      const out = await send(texts, [])
      session.open = false
      return out
    }
    const session = {
      open: false,
      commitIfAt: async (position: number, statements: Iterable<CompiledQuery>) => {
        if (!Number.isSafeInteger(position)) throw new Error(`not a journal position: ${position}`)
        try {
          return (await oneTrip(counterCheck(position), statements)) === 'too-big' ? 'too-big' : 'committed'
        } catch (err) {
          if (moved(err)) return 'moved'
          throw err
        }
      },
      commitKeyed: async (position: number, keys: readonly JournalRow[], statements: Iterable<CompiledQuery>) => {
        if (!Number.isSafeInteger(position)) throw new Error(`not a journal position: ${position}`)
        try {
          const images = `select seq, body, format from placemat_change_images where seq > ${position} order by seq`
          const out = await oneTrip(keyedCheck(position, keys), statements, [images])
          return out === 'too-big' ? 'too-big' : out[out.length - 2]
        } catch (err) {
          if (moved(err)) return 'moved'
          throw err
        }
      },
      pages: (table: keyof Database, columns: string[], key: 'rowid' | 'seq') => this.pages(conn, table, columns, key),
      run: async (statements: Iterable<CompiledQuery>) => {
        const list = [...statements]
        const opens = list.some((q) => OPENS.test(q.sql))
        const closes = list.length > 0 && CLOSES.test(list[list.length - 1].sql)
        const alone = !session.open && !opens
        if (alone) list.push(COMMIT)
        const out = await runBatches(list)
        session.open = (session.open || opens) && !closes && !alone
        return alone ? out.slice(0, -1) : out
      },
    }
    const runBatches = async (statements: CompiledQuery[]): Promise<Row[][]> => {
      const out: Row[][] = []
      let texts: string[] = []
      let values: unknown[] = []
      let size = 0
      for (const q of statements) {
        if (texts.length && size + q.sql.length > MAX_ROUND_TRIP_TEXT) {
          out.push(...(await send(texts, values)))
          texts = []
          values = []
          size = 0
        }
        texts.push(q.sql)
        values.push(...(q.parameters as unknown[]))
        size += q.sql.length
      }
      if (texts.length) out.push(...(await send(texts, values)))
      return out
    }
    return session
  }

  // One query, streamed, in the primary key's order (the rows' order in InnoDB, so no sort).
  private async *pages(
    conn: PromiseConnection,
    table: keyof Database,
    columns: string[],
    key: 'rowid' | 'seq',
  ): AsyncGenerator<unknown[][]> {
    const order = key === 'seq' ? ['seq'] : PRIMARY_KEYS[table]
    const text = `select ${columns.map((c) => `"${c}"`).join(', ')} from "${table}" order by ${order.map((c) => `"${c}"`).join(', ')}`
    const core = conn.connection as unknown as mysql.Connection
    const stream = core.query({sql: text, rowsAsArray: true}).stream({highWaterMark: 1000})
    let page: unknown[][] = []
    for await (const row of stream as AsyncIterable<unknown[]>) {
      page.push(row)
      if (page.length >= PAGE) {
        yield page
        page = []
      }
    }
    if (page.length) yield page
  }

  private asking: NodeJS.Timeout | null = null

  /**
   * On Galera, a connection is opened every NODE_ASK_MS only to see which node the balancer
   * sends new connections to: after a failback no connection of the pools need open for this
   * daemon to see that its connections are on a backup (see galera-nodes.ts).
   */
  serve(): void {
    if (!this.galera || this.asking) return
    this.asking = setInterval(() => void this.askNode(), NODE_ASK_MS)
    this.asking.unref()
  }

  private askNode(): Promise<void> {
    return new Promise((resolve) => {
      const conn = mysql.createConnection(this.connection)
      conn.on('error', () => undefined)
      conn.query({sql: NODE_QUERY, timeout: NODE_ASK_MS}, (err, rows) => {
        const node = (rows as Row[] | undefined)?.[0]?.node
        if (!err && typeof node === 'string') this.nodes.seen(node)
        conn.destroy()
        resolve()
      })
    })
  }

  /** MariaDB's COMMIT returns once the commit is as durable as innodb_flush_log_at_trx_commit (and on Galera, certified) says. */
  durable(): Promise<void> {
    return Promise.resolve()
  }

  async close(): Promise<void> {
    if (this.asking) clearInterval(this.asking)
    await Promise.all([this.db.destroy(), this.sessions.promise().end()])
  }
}
