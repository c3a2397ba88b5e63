/** COPY's text format read into rows (PostgreSQL's whole-table reads at load). */
import {describe, expect, it} from 'vitest'
import {fieldParser, parseCopyLines, unescapeCopyField, type CopyColumn} from '../../src/store/copy-pages.js'

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
    const kept: CopyColumn[] = [{parse: fieldParser(TEXT), kept: true}, {parse: fieldParser(TEXT), kept: false}]
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
