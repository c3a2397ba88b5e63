/** COPY's text format read into rows (PostgreSQL's whole-table reads at load). */
import {PassThrough} from 'node:stream'
import {describe, expect, it} from 'vitest'
import {CopyOut, copyPages, fieldParser, parseCopyLines, unescapeCopyField, type CopyColumn} from '../../src/store/copy-pages.js'

const TEXT = 25
const INT4 = 23
const INT8 = 20
const FLOAT8 = 701
const BOOL = 16
const columns = (...oids: number[]): CopyColumn[] => oids.map((oid) => ({parse: fieldParser(oid), kept: false}))

describe('COPY text', () => {
  it('splits lines and fields, with \\N as null and numbers and booleans parsed', () => {
    const out: unknown[][] = []
    parseCopyLines('a\t1\t1.5\tt\t9007199254740991\nb\t-42\t\\N\tf\t0', columns(TEXT, INT4, FLOAT8, BOOL, INT8), out)
    expect(out).toEqual([
      ['a', 1, 1.5, true, 9007199254740991],
      ['b', -42, null, false, 0],
    ])
  })

  it('reads what is not a plain integer as JavaScript reads the number', () => {
    const out: unknown[][] = []
    parseCopyLines('16\n1e+20\nInfinity\n-0.25\n1234567890123456789', columns(FLOAT8), out)
    // biome-ignore lint/correctness/noPrecisionLoss: the number as the copy reads it, precision lost on purpose
    expect(out.map((r) => r[0])).toEqual([16, 1e20, Infinity, -0.25, 1234567890123456789])
  })

  it('undoes the escapes of tab, newline, backslash, octal and hex', () => {
    expect(unescapeCopyField('tab\\there\\nnew\\\\slash\\r\\b\\f\\v')).toBe('tab\there\nnew\\slash\r\b\f\v')
    expect(unescapeCopyField('\\101\\x42\\q')).toBe('ABq')
    const out: unknown[][] = []
    parseCopyLines('x\\ty\t\\\\N\t', columns(TEXT, TEXT, TEXT), out)
    // An escaped backslash before N is the text \N, not null; an empty field is the empty string.
    expect(out).toEqual([['x\ty', '\\N', '']])
  })

  it('gives kept text the same value, copied from the bytes or the string, ASCII or not', () => {
    const kept: CopyColumn[] = [
      {parse: fieldParser(TEXT), kept: true},
      {parse: fieldParser(TEXT), kept: false},
    ]
    const ascii = '00000000-0000-4000-8000-000000000001\tshort\nhuge-provider-name-0001\tx'
    const fromBytes: unknown[][] = []
    parseCopyLines(ascii, kept, fromBytes, Buffer.from(ascii))
    const fromText: unknown[][] = []
    parseCopyLines('ñandú-provider-🚀-0001\ty', kept, fromText)
    expect(fromBytes).toEqual([
      ['00000000-0000-4000-8000-000000000001', 'short'],
      ['huge-provider-name-0001', 'x'],
    ])
    expect(fromText).toEqual([['ñandú-provider-🚀-0001', 'y']])
  })
})

/** A protocol message: its code, its length, its body. */
const message = (code: string, body: Buffer | string) => {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body)
  const head = Buffer.alloc(5)
  head[0] = code.charCodeAt(0)
  head.writeUInt32BE(b.length + 4, 1)
  return Buffer.concat([head, b])
}

describe('COPY off the socket (CopyOut)', () => {
  /** A socket fed `bytes` in reads of `size`, and what pg's own parser is handed. */
  async function run(bytes: Buffer, size: number) {
    const socket = new PassThrough()
    const toPg: Buffer[] = []
    socket.on('data', (b: Buffer) => toPg.push(b))
    let sent = ''
    const copy = new CopyOut('copy (select 1) to stdout')
    copy.submit({stream: socket as never, query: (text) => (sent = text)})
    for (let i = 0; i < bytes.length; i += size) socket.write(bytes.subarray(i, i + size))
    const texts: string[] = []
    for (;;) {
      const t = await Promise.race([copy.next(), new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 50))])
      if (t === 'waiting') break
      if (t !== null) {
        // An all-ASCII text comes with its bytes.
        expect(t.ascii?.toString('latin1') ?? t.text).toBe(t.text)
        expect(t.ascii === null).toBe(/[^\x00-\x7f]/.test(t.text))
        texts.push(t.text)
      }
    }
    return {sent, text: texts.join(''), toPg: Buffer.concat(toPg), copy}
  }

  const rows = ['00000000-0000-4000-8000-000000000001\tcn-1\t7\n', 'ñandú-🚀\t\\N\t-3\n', 'x\ty\t0\n']
  const stream = Buffer.concat([
    message('H', Buffer.from([0, 0, 3, 0, 0, 0, 0, 0, 0])),
    ...rows.map((r) => message('d', r)),
    message('c', ''),
    message('C', 'COPY 3\0'),
    message('Z', 'T'),
  ])

  it('reads the rows of every CopyData message, however the socket splits them, and hands the rest to pg', async () => {
    for (const size of [1, 3, 7, 64, stream.length]) {
      const {sent, text, toPg} = await run(stream, size)
      expect(sent).toBe('copy (select 1) to stdout')
      expect(text).toBe(rows.join(''))
      // What follows CopyDone is pg's to parse: CommandComplete and ReadyForQuery, whole.
      expect(toPg.toString('latin1')).toBe(Buffer.concat([message('C', 'COPY 3\0'), message('Z', 'T')]).toString('latin1'))
    }
  })

  it('ends when pg has read ReadyForQuery, and gives pg an error the server sends', async () => {
    const failing = Buffer.concat([message('H', Buffer.alloc(3)), message('d', 'a\n'), message('E', 'SERROR\0'), message('Z', 'E')])
    const {text, toPg, copy} = await run(failing, 5)
    expect(text).toBe('a\n')
    expect(toPg.subarray(0, 1).toString()).toBe('E')
    copy.handleError(new Error('the server said no'))
    copy.handleReadyForQuery()
    await expect(copy.next()).rejects.toThrow('the server said no')
  })
})

describe('copyPages', () => {
  /** A client whose server describes one text column and then sends nothing for the COPY. */
  function silentServer() {
    const socket = new PassThrough()
    // pg's own listeners: its parser, and the error that ends the connection.
    socket.on('data', () => undefined)
    socket.on('error', () => undefined)
    const sent: string[] = []
    const copies: CopyOut[] = []
    const client = {
      connection: {stream: socket},
      query(q: unknown) {
        if (q instanceof CopyOut) {
          copies.push(q)
          q.submit({stream: socket as never, query: (text) => sent.push(text)})
          return q
        }
        sent.push(typeof q === 'string' ? q : (q as {text: string}).text)
        return Promise.resolve({fields: [{name: 'name', dataTypeID: TEXT}], rows: []})
      },
    }
    return {client, socket, sent, copies}
  }

  it('gives up on a server that sends no rows for stallMs, dropping the connection as a database fault', async () => {
    const {client, socket, sent} = silentServer()
    const pages = copyPages(client as never, 'select name from t', {pageSize: 10, stallMs: 50})
    const err = await pages.next().then(
      () => null,
      (e: unknown) => e as {code?: string},
    )
    expect(err?.code).toBe('ETIMEDOUT')
    expect(socket.destroyed).toBe(true)
    expect(sent).toEqual([
      'select * from (select name from t) as q limit 0',
      'set local statement_timeout = 0',
      'copy (select name from t) to stdout',
    ])
  })

  it('bounds each wait for rows, not the time the caller keeps a page', async () => {
    const {client, socket, copies} = silentServer()
    const pages = copyPages(client as never, 'select name from t', {pageSize: 1, stallMs: 100})
    const first = pages.next()
    await new Promise((r) => setTimeout(r, 10))
    socket.write(Buffer.concat([message('H', Buffer.alloc(3)), message('d', 'a\n'), message('d', 'b\n')]))
    expect((await first).value).toEqual([['a'], ['b']])
    // The caller holds the page for longer than stallMs, then the server ends the COPY (pg reads
    // ReadyForQuery and tells the query).
    await new Promise((r) => setTimeout(r, 250))
    expect(socket.destroyed).toBe(false)
    const end = pages.next()
    socket.write(message('c', ''))
    await new Promise((r) => setTimeout(r, 10))
    copies[0].handleReadyForQuery()
    expect(await end).toEqual({done: true, value: undefined})
    expect(socket.destroyed).toBe(false)
  })
})
