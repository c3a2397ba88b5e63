/**
 * Statements as text, values as parameters ($n on PostgreSQL, ? on SQLite and MariaDB), for the
 * ones every write and every catch-up makes (state-writer.ts, journal.ts). kysely's query builder
 * cost an allocation write more CPU than the database spends on it; these are a string each.
 * Table and column names are placemat's own, never input; every value is a parameter. Names are
 * double-quoted: MariaDB's sessions run with ANSI_QUOTES (mysql-backend.ts).
 */
import {CompiledQuery, type Kysely} from 'kysely'
import {MAX_STATEMENT_PARAMETERS, rowsPerStatement} from './statement-limits.js'
import type {Database} from './schema.js'

/** How a database writes what these statements write differently: each backend has one. */
export interface SqlDialect {
  /** Parameters numbered ($1: PostgreSQL) or taken in order (?: SQLite, MariaDB). */
  readonly numberedParameters: boolean
  /** An upsert: ON CONFLICT ... DO UPDATE, or MariaDB's ON DUPLICATE KEY UPDATE. */
  readonly upsert: 'on-conflict' | 'on-duplicate-key'
  /** The types a cast to an integer and to placemat_meta's text name. */
  readonly integerType: 'bigint' | 'signed'
  readonly textType: 'varchar(32)' | 'char'
  /** Whether a statement may read the table it updates (MariaDB: not; a session variable carries the value). */
  readonly updateReadsItsTable: boolean
}

/** Each database's words, which its backend names when it opens (speaks). */
export const DIALECTS = {
  sqlite: {numberedParameters: false, upsert: 'on-conflict', integerType: 'bigint', textType: 'varchar(32)', updateReadsItsTable: true},
  postgres: {numberedParameters: true, upsert: 'on-conflict', integerType: 'bigint', textType: 'varchar(32)', updateReadsItsTable: true},
  mariadb: {numberedParameters: false, upsert: 'on-duplicate-key', integerType: 'signed', textType: 'char', updateReadsItsTable: false},
} as const satisfies Record<string, SqlDialect>

export class StatementText {
  constructor(readonly dialect: SqlDialect) {}

  /** `expr` (text) as an integer, in this database's words. */
  integer(expr: string): string {
    return `cast(${expr} as ${this.dialect.integerType})`
  }

  /** `expr` (an integer) as text, as placemat_meta keeps its values, in this database's words. */
  asText(expr: string): string {
    return `cast(${expr} as ${this.dialect.textType})`
  }

  /** What follows an insert so that a row whose `key` exists has its `update` columns set from the new row. */
  upsert(key: string, update: readonly string[]): string {
    return this.dialect.upsert === 'on-duplicate-key'
      ? ` on duplicate key update ${update.map((c) => `${quote(c)} = values(${quote(c)})`).join(', ')}`
      : ` on conflict (${quote(key)}) do update set ${update.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')}`
  }

  /**
   * `rows` into `table`, each with the first row's columns (a missing value is NULL); on a
   * conflict of `key`, the `update` columns are set from the row. Chunked under the parameter cap.
   */
  *insert(table: keyof Database, rows: readonly object[], conflict?: {key: string; update: string[]}): Generator<CompiledQuery> {
    if (rows.length === 0) return
    const columns = Object.keys(rows[0])
    const head = `insert into ${quote(table)} (${columns.map(quote).join(', ')}) values `
    const tail = conflict ? this.upsert(conflict.key, conflict.update) : ''
    const perStatement = rowsPerStatement(columns.length)
    for (let i = 0; i < rows.length; i += perStatement) {
      const params: unknown[] = []
      const tuples: string[] = []
      for (const row of rows.slice(i, i + perStatement)) {
        const r = row as Record<string, unknown>
        tuples.push(`(${columns.map((c) => this.param(params, r[c] ?? null)).join(', ')})`)
      }
      yield CompiledQuery.raw(head + tuples.join(', ') + tail, params)
    }
  }

  /** insert of one row. */
  insertOne(table: keyof Database, row: object, conflict?: {key: string; update: string[]}): CompiledQuery {
    return this.insert(table, [row], conflict).next().value as CompiledQuery
  }

  /** placemat_meta's `key` set to `value` (the change counter, the journal's floor, the topology generation). */
  setMeta(key: string, value: string): CompiledQuery {
    return this.insertOne('placemat_meta', {key, value}, {key: 'key', update: ['value']})
  }

  /** Deletes the rows of `table` whose `column` is one of `keys`, a chunk of keys per statement. */
  *deleteWhereIn(table: keyof Database, column: string, keys: readonly string[]): Generator<CompiledQuery> {
    for (let i = 0; i < keys.length; i += MAX_STATEMENT_PARAMETERS) {
      const params: unknown[] = []
      yield CompiledQuery.raw(
        `delete from ${quote(table)} where ${quote(column)}${this.among(params, keys.slice(i, i + MAX_STATEMENT_PARAMETERS))}`,
        params,
      )
    }
  }

  /** Every column of the rows of `table` whose `column` is one of `keys` (at most the parameter cap), in `orderBy` order. */
  selectWhereIn(table: keyof Database, column: string, keys: readonly string[], orderBy: readonly string[] = []): CompiledQuery {
    const params: unknown[] = []
    const order = orderBy.length ? ` order by ${orderBy.map(quote).join(', ')}` : ''
    return CompiledQuery.raw(`select * from ${quote(table)} where ${quote(column)}${this.among(params, keys)}${order}`, params)
  }

  /** A provider's generation and updated_at (every allocation write bumps its providers'). */
  generation(uuid: string, generation: number, updatedAt: number): CompiledQuery {
    const params: unknown[] = []
    const set = `"generation" = ${this.param(params, generation)}, "updated_at" = ${this.param(params, updatedAt)}`
    return CompiledQuery.raw(`update "resource_providers" set ${set} where "uuid" = ${this.param(params, uuid)}`, params)
  }

  /** A statement of the caller's text, its `?` marks given `values` in order. */
  text(text: string, values: readonly unknown[]): CompiledQuery {
    const params: unknown[] = []
    let k = 0
    return CompiledQuery.raw(
      text.replace(/\?/g, () => this.param(params, values[k++])),
      params,
    )
  }

  /** ` = $1` for one key, ` in ($1, $2, ...)` for several. */
  private among(params: unknown[], keys: readonly string[]): string {
    const list = keys.map((k) => this.param(params, k))
    return list.length === 1 ? ` = ${list[0]}` : ` in (${list.join(', ')})`
  }

  private param(params: unknown[], value: unknown): string {
    params.push(value)
    return this.dialect.numberedParameters ? `$${params.length}` : '?'
  }
}

/**
 * By kysely's adapter of the database: a Kysely made from another (a transaction, one connection:
 * `db.connection()`) keeps its adapter, so it speaks as the backend said.
 */
const texts = new WeakMap<object, StatementText>()

/** Told by the backend that opened `db` (one per connection pool) which dialect its statements are written in. */
export function speaks(db: Kysely<Database>, dialect: SqlDialect): void {
  texts.set(db.getExecutor().adapter, new StatementText(dialect))
}

/** The statement texts for `db` (or a Kysely made from it), in the dialect its backend said. */
export function statementText(db: Kysely<Database>): StatementText {
  const t = texts.get(db.getExecutor().adapter)
  if (!t) throw new Error('statement texts asked for a database no backend opened')
  return t
}

const quote = (name: string) => `"${name}"`
