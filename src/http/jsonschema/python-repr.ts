/**
 * Python's repr() and pprint.pformat() of JSON values, as python-jsonschema quotes the schema
 * and the instance in an error: bounded, so a huge input never makes a huge error text.
 */
import {isObject} from './types.js'

/** Length of a string in code points, as Python's len(). */
export function pyLen(s: string): number {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * Python string ordering (by code point). UTF-16 order is the same except that surrogates
 * (code points above U+FFFF) must sort after U+E000..U+FFFF: shift the two ranges.
 */
export function pyStrCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return codePointRank(x) < codePointRank(y) ? -1 : 1
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}

const codePointRank = (unit: number) => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit)

/**
 * Keys in Python's sorted() order; an object with more keys than any bounded error text
 * could quote keeps its own order instead (sorting millions of keys to print a few is work
 * an attacker could ask for).
 */
export function sortedKeys(keys: string[]): string[] {
  return keys.length > PFORMAT_LIMIT / 4 ? keys : [...keys].sort(pyStrCompare)
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0')
}

/** Error texts quote the input; past these sizes the quote is cut and ends in "...". */
export const REPR_LIMIT = 2048
export const PFORMAT_LIMIT = 8192
/** Deeper than this, a repr prints "..." (readJson refuses deeper bodies anyway). */
const REPR_DEPTH = 100

/** Python's repr() of a str, cut after about `max` characters. */
export function pyStrRepr(s: string, max = Infinity): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  const cut = s.length > max
  let out = quote
  for (const ch of cut ? s.slice(0, max) : s) {
    const cp = ch.codePointAt(0)!
    if (ch === quote || ch === '\\') out += '\\' + ch
    else if (ch === '\t') out += '\\t'
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + hex(cp, 2)
    else if (cp < 0x7f) out += ch
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      if (cp <= 0xff) out += '\\x' + hex(cp, 2)
      else if (cp <= 0xffff) out += '\\u' + hex(cp, 4)
      else out += '\\U' + hex(cp, 8)
    } else out += ch
  }
  return cut ? out + '...' : out + quote
}

/** Python's repr() of a float. */
function pyFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan'
  if (n === Infinity) return 'inf'
  if (n === -Infinity) return '-inf'
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0'
  const sign = n < 0 ? '-' : ''
  const [mant, expStr] = Math.abs(n).toExponential().split('e')
  const exp = Number(expStr)
  const digits = mant.replace('.', '')
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
    const e = Math.abs(exp).toString().padStart(2, '0')
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e}`
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0')
  const frac = digits.slice(exp + 1) || '0'
  return `${sign}${intPart}.${frac}`
}

/**
 * Python's repr() of a number parsed from JSON. Python keeps ints and floats
 * apart; after JSON.parse we cannot, so integral values within the safe
 * integer range print as ints (1.0 prints as "1") and anything else as a float.
 */
function pyNumberRepr(n: number): string {
  if (Number.isSafeInteger(n)) return String(n)
  return pyFloatRepr(n)
}

/** Collects text up to a limit; past it, writers stop early. */
class BoundedText {
  private readonly parts: string[] = []
  private length = 0
  constructor(readonly limit: number) {}
  get full(): boolean {
    return this.length > this.limit
  }
  push(text: string): void {
    this.parts.push(text)
    this.length += text.length
  }
  toString(): string {
    const text = this.parts.join('')
    return this.full ? text.slice(0, this.limit) + '...' : text
  }
}

function reprInto(value: unknown, sortDicts: boolean, out: BoundedText, depth: number): void {
  if (out.full) return
  if (value === null || value === undefined) return out.push('None')
  if (value === true) return out.push('True')
  if (value === false) return out.push('False')
  if (typeof value === 'number') return out.push(pyNumberRepr(value))
  if (typeof value === 'bigint') return out.push(value.toString())
  if (typeof value === 'string') return out.push(pyStrRepr(value, out.limit))
  if (depth > REPR_DEPTH) return out.push('...')
  if (Array.isArray(value)) {
    out.push('[')
    for (let i = 0; i < value.length && !out.full; i++) {
      if (i) out.push(', ')
      reprInto(value[i], sortDicts, out, depth + 1)
    }
    return out.push(']')
  }
  if (isObject(value)) {
    let keys = Object.keys(value)
    if (sortDicts) keys = sortedKeys(keys)
    out.push('{')
    for (let i = 0; i < keys.length && !out.full; i++) {
      if (i) out.push(', ')
      out.push(pyStrRepr(keys[i], out.limit))
      out.push(': ')
      reprInto(value[keys[i]], sortDicts, out, depth + 1)
    }
    return out.push('}')
  }
  out.push(String(value))
}

function reprImpl(value: unknown, sortDicts: boolean, limit = REPR_LIMIT): string {
  const out = new BoundedText(limit)
  reprInto(value, sortDicts, out, 0)
  return out.toString()
}

/** Python's repr() of a JSON value: 'str', True/False/None, {'a': 1}, [1, 2], 1.5 (cut past REPR_LIMIT). */
export function pyRepr(value: unknown): string {
  return reprImpl(value, false)
}

/** Python's str.splitlines(keepends=True). */
function splitLinesKeepEnds(s: string): string[] {
  const out: string[] = []
  const re = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/g
  let last = 0
  let m: RegExpExecArray | null
  while ((m = re.exec(s)) !== null) {
    out.push(s.slice(last, m.index + m[0].length))
    last = m.index + m[0].length
  }
  if (last < s.length) out.push(s.slice(last))
  return out
}

/** Python's pprint.pformat(value, width) (indent=1, sort_dicts=True, compact=False). */
export function pformat(value: unknown, width = 72, limit = PFORMAT_LIMIT): string {
  const out = new BoundedText(limit)
  const write = (s: string) => out.push(s)

  const format = (obj: unknown, indent: number, allowance: number, level: number): void => {
    if (out.full) return
    const maxWidth = width - indent - allowance
    // Only whether it fits is needed: a repr cut at twice the width answers that.
    const rep = reprImpl(obj, true, 2 * Math.max(maxWidth, 0) + 2)
    const fits = pyLen(rep) <= maxWidth
    if (!fits) {
      if (level >= REPR_DEPTH) return write('...')
      if (isObject(obj)) return pprintDict(obj, indent, allowance, level + 1)
      if (Array.isArray(obj)) return pprintList(obj, indent, allowance, level + 1)
      if (typeof obj === 'string') return pprintStr(obj.length > limit ? obj.slice(0, limit) : obj, indent, allowance, level + 1)
    }
    // What fits was never cut; anything else is written whole (up to REPR_LIMIT).
    write(fits ? rep : reprImpl(obj, true))
  }

  const pprintDict = (obj: Record<string, unknown>, indent: number, allowance: number, level: number) => {
    write('{')
    const keys = sortedKeys(Object.keys(obj))
    if (keys.length) {
      allowance += 1
      indent += 1
      const delimnl = ',\n' + ' '.repeat(indent)
      keys.forEach((k, i) => {
        if (out.full) return
        const last = i === keys.length - 1
        const rep = pyStrRepr(k)
        write(rep)
        write(': ')
        format(obj[k], indent + pyLen(rep) + 2, last ? allowance : 1, level)
        if (!last) write(delimnl)
      })
    }
    write('}')
  }

  const pprintList = (obj: unknown[], indent: number, allowance: number, level: number) => {
    write('[')
    allowance += 1
    indent += 1
    const delimnl = ',\n' + ' '.repeat(indent)
    obj.forEach((ent, i) => {
      if (out.full) return
      const last = i === obj.length - 1
      if (i > 0) write(delimnl)
      format(ent, indent, last ? allowance : 1, level)
    })
    write(']')
  }

  const pprintStr = (obj: string, indent: number, allowance: number, level: number) => {
    if (!obj.length) {
      write(pyStrRepr(obj))
      return
    }
    const chunks: string[] = []
    const lines = splitLinesKeepEnds(obj)
    if (level === 1) {
      indent += 1
      allowance += 1
    }
    const maxWidth = width - indent
    let maxWidth1 = maxWidth
    let rep = ''
    lines.forEach((line, i) => {
      rep = pyStrRepr(line)
      const lastLine = i === lines.length - 1
      if (lastLine) maxWidth1 -= allowance
      if (pyLen(rep) <= maxWidth1) {
        chunks.push(rep)
        return
      }
      const parts = line.match(/\S*\s*/gu) ?? ['']
      parts.pop()
      let maxWidth2 = maxWidth
      let current = ''
      parts.forEach((part, j) => {
        const candidate = current + part
        if (j === parts.length - 1 && lastLine) maxWidth2 -= allowance
        if (pyLen(pyStrRepr(candidate)) > maxWidth2) {
          if (current) chunks.push(pyStrRepr(current))
          current = part
        } else current = candidate
      })
      if (current) chunks.push(pyStrRepr(current))
    })
    if (chunks.length === 1) {
      write(rep)
      return
    }
    if (level === 1) write('(')
    chunks.forEach((c, i) => {
      if (i > 0) write('\n' + ' '.repeat(indent))
      write(c)
    })
    if (level === 1) write(')')
  }

  format(value, 0, 0, 0)
  return out.toString()
}
