/**
 * PostgreSQL: a whole-table read as COPY ... TO STDOUT, parsed here into pages of typed arrays.
 * A million providers are some 40 million fields; read as rows, the driver makes a message and a
 * string per field (most of a start-up's time and garbage). COPY sends the rows as text that is
 * decoded a chunk at a time and split, and the server streams it while the State is built.
 */
import {isAscii} from 'node:buffer'
import type pg from 'pg'

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

/** Protocol message codes met while a COPY runs. */
const COPY_DATA = 0x64 // d
const COPY_DONE = 0x63 // c
const ERROR_RESPONSE = 0x45 // E

/** The parts of pg's connection a COPY reads from while it runs. */
interface Connection {
  stream: NodeJS.ReadableStream & {listeners(event: 'data'): Array<(b: Buffer) => void>; destroy(err?: Error): void}
  query(text: string): void
}

/**
 * COPY ... TO STDOUT as a query of pg's (a submittable). While it runs, the connection's bytes
 * are read here, not by pg's parser, which would make a message and a buffer per row: each socket
 * read becomes one text, the rows of its CopyData messages. At CopyDone, or at an error, the
 * connection goes back to pg's parser with what is left, which ends the query as any other
 * (handleError, handleReadyForQuery). Rows are read from the socket only as they are asked for
 * (next), so the server waits while the caller builds its State.
 */
export class CopyOut {
  /** pg's read timeout is for a whole query; the caller bounds each read instead (see copyPages). */
  readonly query_timeout = 2 ** 31 - 1
  /** Set by pg, which clears its timer when it is called. */
  callback?: (err: Error | null) => void
  private connection: Connection | null = null
  private pgData: ((b: Buffer) => void) | null = null
  private partial: Buffer | null = null
  private texts: Array<{text: string; ascii: Buffer | null}> = []
  private error: Error | null = null
  private copying = false
  private finished = false
  private wake: (() => void) | null = null
  private readonly onReadable = () => this.wakeUp()

  constructor(readonly text: string) {}

  submit(connection: Connection): void {
    this.connection = connection
    const socket = connection.stream
    const [pgData] = socket.listeners('data')
    this.pgData = pgData
    socket.removeListener('data', pgData)
    socket.on('readable', this.onReadable)
    this.copying = true
    connection.query(this.text)
  }

  handleError(err: Error): void {
    this.error ??= err
    this.detach(null)
    this.wakeUp()
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    this.finished = true
    this.callback?.(this.error)
    this.wakeUp()
  }

  /** The next text of whole rows (lines), or null once the COPY has ended. */
  async next(): Promise<{text: string; ascii: Buffer | null} | null> {
    for (;;) {
      if (this.texts.length) return this.texts.shift()!
      if (this.error) throw this.error
      if (this.finished) return null
      const chunk = this.copying ? (this.connection!.stream.read() as Buffer | null) : null
      if (chunk) this.take(chunk)
      else await new Promise<void>((resolve) => (this.wake = resolve))
    }
  }

  private wakeUp(): void {
    const wake = this.wake
    this.wake = null
    wake?.()
  }

  /** The CopyData payloads of `chunk` (after what the last one left of a message), as one text. */
  private take(chunk: Buffer): void {
    const buf = this.partial ? Buffer.concat([this.partial, chunk]) : chunk
    this.partial = null
    const ranges: number[] = []
    let i = 0
    let end = -1
    while (i + 5 <= buf.length) {
      const code = buf[i]
      const next = i + 1 + buf.readUInt32BE(i + 1)
      if (code === ERROR_RESPONSE) break
      if (next > buf.length) break
      if (code === COPY_DATA) ranges.push(i + 5, next)
      i = next
      if (code === COPY_DONE) {
        end = i
        break
      }
      // Anything else (CopyOutResponse, a notice, a parameter status) is skipped.
    }
    if (ranges.length) this.texts.push(payloadText(buf, ranges))
    if (end >= 0 || (i + 5 <= buf.length && buf[i] === ERROR_RESPONSE)) this.detach(buf.subarray(i))
    else if (i < buf.length) this.partial = Buffer.from(buf.subarray(i))
  }

  /** Gives the connection back to pg's parser, with the bytes it has still to read. */
  private detach(rest: Buffer | null): void {
    if (!this.copying) return
    this.copying = false
    const socket = this.connection!.stream
    socket.removeListener('readable', this.onReadable)
    socket.on('data', this.pgData!)
    if (rest?.length) this.pgData!(rest)
    // Reading in 'readable' mode left the socket paused.
    process.nextTick(() => socket.resume())
  }
}

/**
 * The text of the byte ranges of `buf`, and when it is all ASCII the same as bytes (one a
 * character, for copying kept fields out in one step): cut from one decoding of the buffer, one
 * character a byte; else each range decoded as UTF-8.
 */
function payloadText(buf: Buffer, ranges: number[]): {text: string; ascii: Buffer | null} {
  const bytes = buf.toString('latin1')
  const parts: string[] = []
  for (let k = 0; k < ranges.length; k += 2) parts.push(bytes.slice(ranges[k], ranges[k + 1]))
  const text = parts.join('')
  const ascii = Buffer.from(text, 'latin1')
  if (isAscii(ascii)) return {text, ascii}
  parts.length = 0
  for (let k = 0; k < ranges.length; k += 2) parts.push(buf.toString('utf8', ranges[k], ranges[k + 1]))
  return {text: parts.join(''), ascii: null}
}

/**
 * The rows of `select` (a SELECT statement with its values written in) as pages of about
 * `pageSize` arrays, through COPY on `client` inside its transaction. `kept` names the columns
 * whose text the caller keeps (see CopyColumn). `stallMs` bounds each wait for the next rows
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
  // The server's statement_timeout would end a long read; a timer on each wait bounds a hung one.
  await client.query('set local statement_timeout = 0')
  const copy = new CopyOut(`copy (${select}) to stdout`)
  void client.query(copy as unknown as pg.Submittable)
  // Each wait for rows is bounded, not the time the caller takes with a page between them.
  const nextRows = async () => {
    const stalled = setTimeout(() => {
      const err = Object.assign(new Error(`no rows from the server for ${stallMs} ms`), {code: 'ETIMEDOUT'})
      copy.handleError(err)
      client.connection.stream.destroy(err)
    }, stallMs)
    try {
      return await copy.next()
    } finally {
      clearTimeout(stalled)
    }
  }
  let page: unknown[][] = []
  let done = false
  try {
    for (;;) {
      const rows = await nextRows()
      if (rows === null) break
      parseCopyLines(rows.text, columns, page, rows.ascii)
      if (page.length >= pageSize) {
        yield page
        page = []
      }
    }
    done = true
    if (page.length) yield page
  } finally {
    if (!done) {
      // The rest is read and dropped: the connection stays usable.
      while ((await nextRows().catch(() => null)) !== null);
    }
  }
}
