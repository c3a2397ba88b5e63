/**
 * PostgreSQL: a whole-table read as COPY ... TO STDOUT, parsed here into pages of typed arrays.
 * A million providers are some 40 million fields; read as rows, the driver makes a message and a
 * string per field (most of a start-up's time and garbage). COPY sends the rows as text that is
 * decoded a chunk at a time and split, and the server streams it while the State is built.
 */
import type pg from 'pg'
import {to as copyTo} from 'pg-copy-streams'

/** A field's text as its JavaScript value (the value the driver's parsers would give). */
export type FieldParser = (text: string) => unknown

const asNumber: FieldParser = (t) => Number(t)
const asBoolean: FieldParser = (t) => t === 't'
const asText: FieldParser = (t) => t

/** The parser of a column of type `oid`: numbers for the integer and floating types, else text. */
export function fieldParser(oid: number): FieldParser {
  switch (oid) {
    case 16: // bool
      return asBoolean
    case 20: // int8: epoch milliseconds and sequence numbers, all below 2^53
    case 21: // int2
    case 23: // int4
    case 700: // float4
    case 701: // float8
    case 1700: // numeric
      return asNumber
    default:
      return asText
  }
}

const ESCAPES: Record<string, string> = {b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v'}

/** A field of COPY's text format without its backslash escapes. */
export function unescapeCopyField(s: string): string {
  return s.replace(/\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))/gs, (_, octal: string, hex: string, c: string) => {
    if (octal) return String.fromCharCode(parseInt(octal, 8))
    if (hex) return String.fromCharCode(parseInt(hex, 16))
    return ESCAPES[c] ?? c
  })
}

/** How a column's fields become values. */
export interface CopyColumn {
  parse: FieldParser
  /**
   * Its text outlives the page (it is kept in the State). V8 makes a slice of 13 characters or more
   * a view of the string it was cut from, which would keep a whole chunk alive for each kept
   * field: such a field is copied out instead.
   */
  kept: boolean
}

/** V8 makes a slice at least this long a view of its parent string. */
const SLICED_MIN = 13

/**
 * Splits COPY text (whole lines) into rows pushed onto `out`: `\N` is null, other fields are
 * unescaped and parsed. `ascii`, when given, holds the same text as bytes (it is all ASCII), from
 * which a kept field is copied in one step.
 */
export function parseCopyLines(text: string, columns: readonly CopyColumn[], out: unknown[][], ascii: Buffer | null = null): void {
  let start = 0
  const width = columns.length
  while (start < text.length) {
    let end = text.indexOf('\n', start)
    if (end < 0) end = text.length
    const row = new Array<unknown>(width)
    let from = start
    for (let i = 0; i < width; i++) {
      let to = i === width - 1 ? end : text.indexOf('\t', from)
      if (to < 0 || to > end) to = end
      const column = columns[i]
      if (column.parse === asNumber) {
        const n = integerAt(text, from, to)
        if (n !== null) {
          row[i] = n
          from = to + 1
          continue
        }
      }
      let field = text.slice(from, to)
      if (field === '\\N') row[i] = null
      else {
        if (field.includes('\\')) field = unescapeCopyField(field)
        else if (column.kept && field.length >= SLICED_MIN) field = ascii ? ascii.toString('latin1', from, to) : copyOf(field)
        row[i] = column.parse(field)
      }
      from = to + 1
    }
    out.push(row)
    start = end + 1
  }
}

/** The integer written at text[from, to), read in place; null when it is not a plain one of at most 15 digits. */
function integerAt(text: string, from: number, to: number): number | null {
  const negative = text.charCodeAt(from) === 45 // -
  let i = negative ? from + 1 : from
  if (i === to || to - i > 15) return null
  let n = 0
  for (; i < to; i++) {
    const d = text.charCodeAt(i) - 48
    if (d < 0 || d > 9) return null
    n = n * 10 + d
  }
  return negative ? -n : n
}

/** A string of its own with the text of `s` (no view of a larger one). */
const copyOf = (s: string): string => Buffer.from(s, 'utf8').toString('utf8')

/**
 * The rows of `select` (a SELECT statement with its values written in) as pages of about
 * `pageSize` arrays, through COPY on `client` inside its transaction. `kept` names the columns
 * whose text the caller keeps (see CopyColumn). `stallMs` bounds the wait for the next chunk
 * (the server stopped answering), not the whole read, which a large cloud may make long. A caller
 * that stops early makes the rest be read and dropped, so the connection stays usable.
 */
export async function* copyPages(
  client: pg.PoolClient,
  select: string,
  {pageSize, stallMs, kept = []}: {pageSize: number; stallMs: number; kept?: readonly string[]},
): AsyncGenerator<unknown[][]> {
  const described = await client.query({text: `select * from (${select}) as q limit 0`, rowMode: 'array'})
  const columns = described.fields.map((f) => ({parse: fieldParser(f.dataTypeID), kept: kept.includes(f.name)}))
  // The server's statement_timeout would end a long read; the stall timer below bounds a hung one.
  await client.query('set local statement_timeout = 0')
  const stream = copyTo(`copy (${select}) to stdout`)
  // pg's read timeout is for the whole call; the stall timer is for each chunk. pg clears its timer
  // when the query's callback is called, which the COPY stream never does: called in the end below.
  const query = stream as unknown as {query_timeout: number; callback?: (err: Error | null) => void}
  query.query_timeout = 2 ** 31 - 1
  let stalled: NodeJS.Timeout | null = null
  const watch = () => {
    if (stalled) clearTimeout(stalled)
    stalled = setTimeout(() => {
      const err = Object.assign(new Error(`no rows from the server for ${stallMs} ms`), {code: 'ETIMEDOUT'})
      client.connection.stream.destroy(err)
      stream.destroy(err)
    }, stallMs)
  }
  watch()
  client.query(stream)
  // Read by hand, not with for await: leaving that loop early would destroy the stream in the
  // middle of the COPY, and the connection with it.
  const chunks = stream[Symbol.asyncIterator]()
  let rest: Buffer = Buffer.alloc(0)
  let page: unknown[][] = []
  let done = false
  const parse = (bytes: Buffer) => {
    const text = bytes.toString('utf8')
    parseCopyLines(text, columns, page, text.length === bytes.length ? bytes : null)
  }
  try {
    for (;;) {
      const next = await chunks.next()
      if (next.done) break
      watch()
      const bytes = rest.length ? Buffer.concat([rest, next.value as Buffer]) : (next.value as Buffer)
      const last = bytes.lastIndexOf(10)
      rest = Buffer.from(bytes.subarray(last + 1))
      if (last >= 0) parse(bytes.subarray(0, last))
      if (page.length >= pageSize) {
        yield page
        page = []
      }
    }
    done = true
    if (rest.length) parse(rest)
    if (page.length) yield page
  } finally {
    if (!done && !stream.destroyed) while (!(await chunks.next()).done) watch()
    if (stalled) clearTimeout(stalled)
    query.callback?.(null)
  }
}
