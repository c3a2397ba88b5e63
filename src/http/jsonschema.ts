/**
 * A small JSON Schema validator that behaves like python-jsonschema 4.10.x
 * (the version Debian bookworm ships) as OpenStack Placement uses it:
 *
 *   jsonschema.validate(instance, schema, format_checker=jsonschema.FormatChecker())
 *
 * Facts this mimics (from jsonschema 4.10.3's sources):
 *  - No "$schema" in Placement's schemas, so `validator_for` picks the latest
 *    draft, Draft 2020-12: keywords are applied in the schema dict's order,
 *    "integer" also accepts floats with an integral value, booleans are never
 *    numbers.
 *  - `validate` raises `best_match(iter_errors(instance))`: the error with the
 *    greatest relevance key (-len(path), keyword not in {anyOf, oneOf},
 *    keyword in STRONG (empty), not error._matches_type()), the first one on
 *    ties; then, while that error has a context (anyOf/oneOf), the context's
 *    smallest-keyed error is taken unless the two smallest tie, in which case
 *    the anyOf/oneOf error itself is kept.
 *  - `str(ValidationError)`:
 *        <message>
 *
 *        Failed validating <keyword!r> in schema[<relative schema path minus keyword>]:
 *            <pprint.pformat(schema, width=72)>
 *
 *        On instance[<relative instance path>]:
 *            <pprint.pformat(instance, width=72)>
 *  - Placement registers its own "uuid" format checker
 *    (oslo_utils.uuidutils.is_uuid_like), which replaces jsonschema's own.
 *  - Python `re.search` semantics for "pattern", "patternProperties" and the
 *    additionalProperties check (unanchored), with one deliberate difference:
 *    `$` matches only at the very end. Python's `$` also matches before a final
 *    newline, so Placement accepts a name like "CUSTOM_A\n" that it can then not
 *    put in a Location header; placemat refuses it with the usual "does not match".
 *
 * Where this departs from python-jsonschema on purpose: error texts quote the
 * input, so they are bounded (a repr is cut after REPR_LIMIT characters, a
 * pformat block after PFORMAT_LIMIT, both ending in "..."), messages are only
 * rendered for the error that is reported, and uniqueItems is linear. Normal
 * inputs read exactly as Placement's.
 */

import {isUuidLike} from '../core/uuids.js'

type Json = unknown
type Schema = Record<string, unknown> | boolean
type PathItem = string | number

/** One validation error, shaped like python-jsonschema's ValidationError. */
export interface SchemaError {
  message: string
  /** The keyword that failed (python: error.validator); null for a `false` schema. */
  keyword: string | null
  keywordValue: unknown
  /** The (sub)instance that failed. */
  instance: Json
  /** The (sub)schema holding the keyword. */
  schema: Schema
  /** Instance path relative to the parent error (or the root for top-level errors). */
  path: PathItem[]
  /** Schema path relative to the parent error, ending with the keyword. */
  schemaPath: PathItem[]
  /** Sub-errors of anyOf/oneOf. */
  context: SchemaError[]
}

export interface ValidateOptions {
  /** Check "format" (Placement always passes a FormatChecker). Default true. */
  formatChecker?: boolean
}

// ---------------------------------------------------------------------------
// Python repr / pprint
// ---------------------------------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k)

/** Length of a string in code points, as Python's len(). */
function pyLen(s: string): number {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * Python string ordering (by code point). UTF-16 order is the same except that surrogates
 * (code points above U+FFFF) must sort after U+E000..U+FFFF: shift the two ranges.
 */
function pyStrCompare(a: string, b: string): number {
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
function sortedKeys(keys: string[]): string[] {
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
function pyStrRepr(s: string, max = Infinity): string {
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

// ---------------------------------------------------------------------------
// Python regular expressions
// ---------------------------------------------------------------------------

const regexCache = new Map<string, RegExp>()

/**
 * Compiles a Python `re` pattern into a JS RegExp usable for `re.search`.
 * Handles the differences that matter for simple patterns: `\Z`, `\A` and
 * `(?P<name>...)` groups. `$` is kept strict (end of string only): see the header.
 */
export function pyRegex(pattern: string): RegExp {
  const cached = regexCache.get(pattern)
  if (cached) return cached
  let out = ''
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]
    if (ch === '\\') {
      const next = pattern[i + 1] ?? ''
      i++
      if (!inClass && next === 'Z') out += '$'
      else if (!inClass && next === 'A') out += '^'
      else out += '\\' + next
      continue
    }
    if (inClass) {
      if (ch === ']') inClass = false
      out += ch
      continue
    }
    if (ch === '[') {
      inClass = true
      out += ch
      // a leading ']' (or '^]') is literal in Python
      if (pattern[i + 1] === '^') out += pattern[++i]
      if (pattern[i + 1] === ']') {
        out += '\\]'
        i++
      }
      continue
    }
    if (ch === '$') {
      // Deliberately stricter than Python: no match before a final newline (see the header).
      out += '$'
      continue
    }
    if (ch === '(' && pattern.startsWith('(?P<', i)) {
      out += '(?<'
      i += 3
      continue
    }
    out += ch
  }
  let re: RegExp
  try {
    re = new RegExp(out, 'u')
  } catch {
    re = new RegExp(out)
  }
  regexCache.set(pattern, re)
  return re
}

const reSearch = (pattern: string, s: string) => pyRegex(pattern).test(s)

// ---------------------------------------------------------------------------
// Types, equality, formats
// ---------------------------------------------------------------------------

function isType(instance: unknown, type: string): boolean {
  switch (type) {
    case 'array':
      return Array.isArray(instance)
    case 'boolean':
      return typeof instance === 'boolean'
    case 'integer':
      return (typeof instance === 'number' && Number.isInteger(instance)) || typeof instance === 'bigint'
    case 'null':
      return instance === null
    case 'number':
      return typeof instance === 'number' || typeof instance === 'bigint'
    case 'object':
      return isObject(instance)
    case 'string':
      return typeof instance === 'string'
    default:
      throw new Error(`Unknown type ${pyStrRepr(type)} for validator`)
  }
}

const isNumber = (v: unknown): v is number => typeof v === 'number'

/** jsonschema._utils.equal: Python equality, but booleans never equal numbers. */
function jsEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsEqual(x, b[i]))
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => hasOwn(b, k) && jsEqual(a[k], b[k]))
  }
  if (typeof a === 'boolean' || typeof b === 'boolean') return a === b
  return (a ?? null) === (b ?? null)
}

/**
 * A string that two JSON values share exactly when jsEqual holds: strings, numbers and
 * booleans kept apart, object keys in one order.
 */
function equalityKey(value: unknown): string {
  if (typeof value === 'string') return 's' + JSON.stringify(value)
  if (typeof value === 'number') return 'n' + String(value)
  if (typeof value === 'boolean') return value ? 'T' : 'F'
  if (value === null || value === undefined) return 'N'
  if (Array.isArray(value)) return '[' + value.map(equalityKey).join(',') + ']'
  if (isObject(value)) {
    const keys = Object.keys(value).sort()
    return '{' + keys.map((k) => JSON.stringify(k) + ':' + equalityKey(value[k])).join(',') + '}'
  }
  return 'o' + String(value)
}

/** Python's == on JSON values (True == 1, 1 == 1.0). */
function pyEqual(a: unknown, b: unknown): boolean {
  const num = (v: unknown) => (typeof v === 'boolean' ? Number(v) : v)
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => pyEqual(x, b[i]))
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => hasOwn(b, k) && pyEqual(a[k], b[k]))
  }
  return num(a ?? null) === num(b ?? null)
}

/** Placement registers oslo's is_uuid_like as the "uuid" format. */
export {isUuidLike}

const FORMAT_CHECKERS: Record<string, (instance: unknown) => boolean> = {
  uuid: isUuidLike,
}

// ---------------------------------------------------------------------------
// The validator
// ---------------------------------------------------------------------------

/** push(...items) without spreading: a body can fail in more places than the stack has room for. */
function append<T>(to: T[], items: T[]): void {
  for (const item of items) to.push(item)
}

/** Errors whose keyword/instance/schema are still to be filled in by iterErrors (python's _unset). */
const unset = new WeakSet<SchemaError>()

/**
 * A new error; its message is rendered on first read, so only the error that is reported
 * pays for quoting the input (a body can fail in a million places).
 */
function mkError(message: () => string, context: SchemaError[] = []): SchemaError {
  let text: string | undefined
  const err = {keyword: null, keywordValue: undefined, instance: undefined, schema: {}, path: [], schemaPath: [], context} as unknown as SchemaError
  Object.defineProperty(err, 'message', {enumerable: true, get: () => (text ??= message())})
  unset.add(err)
  return err
}

type KeywordFn = (v: Validator, value: any, instance: any, schema: Record<string, unknown>) => SchemaError[]

class Validator {
  constructor(readonly formats: boolean) {}

  iterErrors(instance: unknown, schema: Schema): SchemaError[] {
    if (schema === true) return []
    if (schema === false) {
      return [
        {
          message: `False schema does not allow ${pyRepr(instance)}`,
          keyword: null,
          keywordValue: null,
          instance,
          schema,
          path: [],
          schemaPath: [],
          context: [],
        },
      ]
    }
    const out: SchemaError[] = []
    for (const [k, v] of Object.entries(schema)) {
      const fn = KEYWORDS[k]
      if (!fn) continue
      for (const err of fn(this, v, instance, schema)) {
        if (unset.has(err)) {
          unset.delete(err)
          err.keyword = k
          err.keywordValue = v
          err.instance = instance
          err.schema = schema
        }
        if (k !== 'if' && k !== '$ref') err.schemaPath.unshift(k)
        out.push(err)
      }
    }
    return out
  }

  descend(instance: unknown, schema: Schema, path?: PathItem, schemaPath?: PathItem): SchemaError[] {
    const errs = this.iterErrors(instance, schema)
    for (const err of errs) {
      if (path !== undefined) err.path.unshift(path)
      if (schemaPath !== undefined) err.schemaPath.unshift(schemaPath)
    }
    return errs
  }

  isValid(instance: unknown, schema: Schema): boolean {
    return this.iterErrors(instance, schema).length === 0
  }
}

function findAdditionalProperties(instance: Record<string, unknown>, schema: Record<string, unknown>): string[] {
  const properties = isObject(schema.properties) ? schema.properties : {}
  const patterns = isObject(schema.patternProperties) ? Object.keys(schema.patternProperties).join('|') : ''
  return Object.keys(instance).filter((p) => !hasOwn(properties, p) && !(patterns && reSearch(patterns, p)))
}

const KEYWORDS: Record<string, KeywordFn> = {
  type(v, types, instance) {
    const list: string[] = typeof types === 'string' ? [types] : types
    if (list.some((t) => isType(instance, t))) return []
    return [mkError(() => `${pyRepr(instance)} is not of type ${list.map((t) => pyStrRepr(t)).join(', ')}`)]
  },

  enum(v, enums: unknown[], instance) {
    // `if instance == 0 or instance == 1`: compare with bools kept apart from numbers,
    // otherwise plain Python `instance not in enums`.
    const zeroOrOne = typeof instance === 'boolean' || instance === 0 || instance === 1
    const found = zeroOrOne ? enums.some((e) => jsEqual(instance, e)) : enums.some((e) => pyEqual(instance, e))
    return found ? [] : [mkError(() => `${pyRepr(instance)} is not one of ${pyRepr(enums)}`)]
  },

  const(v, c, instance) {
    return jsEqual(instance, c) ? [] : [mkError(() => `${pyRepr(c)} was expected`)]
  },

  properties(v, properties: Record<string, Schema>, instance) {
    if (!isObject(instance)) return []
    const out: SchemaError[] = []
    for (const [prop, sub] of Object.entries(properties)) {
      if (hasOwn(instance, prop)) append(out, v.descend(instance[prop], sub, prop, prop))
    }
    return out
  },

  patternProperties(v, pp: Record<string, Schema>, instance) {
    if (!isObject(instance)) return []
    const out: SchemaError[] = []
    for (const [pattern, sub] of Object.entries(pp)) {
      for (const [k, val] of Object.entries(instance)) {
        if (reSearch(pattern, k)) append(out, v.descend(val, sub, k, pattern))
      }
    }
    return out
  },

  additionalProperties(v, aP: Schema, instance, schema) {
    if (!isObject(instance)) return []
    const extras = findAdditionalProperties(instance, schema)
    if (isObject(aP)) return extras.flatMap((extra) => v.descend(instance[extra], aP, extra))
    if (aP === false && extras.length) {
      const quoted = () => {
        const sorted = sortedKeys(extras)
        const shown = sorted.slice(0, 64).map((k) => pyStrRepr(k, REPR_LIMIT))
        return shown.join(', ') + (sorted.length > shown.length ? ', ...' : '')
      }
      if ('patternProperties' in schema) {
        const verb = extras.length === 1 ? 'does' : 'do'
        const patterns = Object.keys(schema.patternProperties as object)
          .sort(pyStrCompare)
          .map((p) => pyStrRepr(p))
          .join(', ')
        return [mkError(() => `${quoted()} ${verb} not match any of the regexes: ${patterns}`)]
      }
      const verb = extras.length === 1 ? 'was' : 'were'
      return [mkError(() => `Additional properties are not allowed (${quoted()} ${verb} unexpected)`)]
    }
    return []
  },

  propertyNames(v, pn: Schema, instance) {
    if (!isObject(instance)) return []
    return Object.keys(instance).flatMap((k) => v.descend(k, pn))
  },

  required(v, required: string[], instance) {
    if (!isObject(instance)) return []
    return required.filter((p) => !hasOwn(instance, p)).map((p) => mkError(() => `${pyStrRepr(p)} is a required property`))
  },

  minProperties(v, mP: number, instance) {
    if (isObject(instance) && Object.keys(instance).length < mP) {
      return [mkError(() => `${pyRepr(instance)} does not have enough properties`)]
    }
    return []
  },

  maxProperties(v, mP: number, instance) {
    if (isObject(instance) && Object.keys(instance).length > mP) {
      return [mkError(() => `${pyRepr(instance)} has too many properties`)]
    }
    return []
  },

  prefixItems(v, prefix: Schema[], instance) {
    if (!Array.isArray(instance)) return []
    const n = Math.min(prefix.length, instance.length)
    const out: SchemaError[] = []
    for (let i = 0; i < n; i++) append(out, v.descend(instance[i], prefix[i], i, i))
    return out
  },

  items(v, items: Schema | Schema[], instance, schema) {
    if (!Array.isArray(instance)) return []
    if (Array.isArray(items)) {
      // draft 4 tuple form, for completeness
      const out: SchemaError[] = []
      const n = Math.min(items.length, instance.length)
      for (let i = 0; i < n; i++) append(out, v.descend(instance[i], items[i], i, i))
      return out
    }
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems.length : 0
    const total = instance.length
    if (items === false && total > prefix) return [mkError(() => `Expected at most ${prefix} items, but found ${total}`)]
    const out: SchemaError[] = []
    for (let i = prefix; i < total; i++) append(out, v.descend(instance[i], items, i))
    return out
  },

  minItems(v, mI: number, instance) {
    return Array.isArray(instance) && instance.length < mI ? [mkError(() => `${pyRepr(instance)} is too short`)] : []
  },

  maxItems(v, mI: number, instance) {
    return Array.isArray(instance) && instance.length > mI ? [mkError(() => `${pyRepr(instance)} is too long`)] : []
  },

  uniqueItems(v, uI: boolean, instance) {
    if (!uI || !Array.isArray(instance)) return []
    // One pass: items are equal (jsEqual) exactly when their equality keys are.
    const seen = new Set<string>()
    for (const item of instance) {
      const key = equalityKey(item)
      if (seen.has(key)) return [mkError(() => `${pyRepr(instance)} has non-unique elements`)]
      seen.add(key)
    }
    return []
  },

  pattern(v, patrn: string, instance) {
    if (typeof instance === 'string' && !reSearch(patrn, instance)) {
      return [mkError(() => `${pyRepr(instance)} does not match ${pyStrRepr(patrn)}`)]
    }
    return []
  },

  format(v, format: string, instance) {
    if (!v.formats) return []
    const check = FORMAT_CHECKERS[format]
    if (!check || check(instance)) return []
    return [mkError(() => `${pyRepr(instance)} is not a ${pyStrRepr(format)}`)]
  },

  minLength(v, mL: number, instance) {
    return typeof instance === 'string' && pyLen(instance) < mL ? [mkError(() => `${pyRepr(instance)} is too short`)] : []
  },

  maxLength(v, mL: number, instance) {
    return typeof instance === 'string' && pyLen(instance) > mL ? [mkError(() => `${pyRepr(instance)} is too long`)] : []
  },

  minimum(v, minimum: number, instance) {
    if (isNumber(instance) && instance < minimum) {
      return [mkError(() => `${pyRepr(instance)} is less than the minimum of ${pyRepr(minimum)}`)]
    }
    return []
  },

  maximum(v, maximum: number, instance) {
    if (isNumber(instance) && instance > maximum) {
      return [mkError(() => `${pyRepr(instance)} is greater than the maximum of ${pyRepr(maximum)}`)]
    }
    return []
  },

  exclusiveMinimum(v, minimum: number, instance) {
    if (isNumber(instance) && instance <= minimum) {
      return [mkError(() => `${pyRepr(instance)} is less than or equal to the minimum of ${pyRepr(minimum)}`)]
    }
    return []
  },

  exclusiveMaximum(v, maximum: number, instance) {
    if (isNumber(instance) && instance >= maximum) {
      return [mkError(() => `${pyRepr(instance)} is greater than or equal to the maximum of ${pyRepr(maximum)}`)]
    }
    return []
  },

  multipleOf(v, dB: number, instance) {
    if (!isNumber(instance)) return []
    const q = instance / dB
    if (Number.isInteger(dB) ? instance % dB !== 0 : !Number.isInteger(q)) {
      return [mkError(() => `${pyRepr(instance)} is not a multiple of ${pyRepr(dB)}`)]
    }
    return []
  },

  allOf(v, allOf: Schema[], instance) {
    return allOf.flatMap((sub, i) => v.descend(instance, sub, undefined, i))
  },

  anyOf(v, anyOf: Schema[], instance) {
    const all: SchemaError[] = []
    for (let i = 0; i < anyOf.length; i++) {
      const errs = v.descend(instance, anyOf[i], undefined, i)
      if (!errs.length) return []
      append(all, errs)
    }
    return [mkError(() => `${pyRepr(instance)} is not valid under any of the given schemas`, all)]
  },

  oneOf(v, oneOf: Schema[], instance) {
    const all: SchemaError[] = []
    let firstValid = -1
    for (let i = 0; i < oneOf.length; i++) {
      const errs = v.descend(instance, oneOf[i], undefined, i)
      if (!errs.length) {
        firstValid = i
        break
      }
      append(all, errs)
    }
    const out: SchemaError[] = []
    if (firstValid < 0) {
      out.push(mkError(() => `${pyRepr(instance)} is not valid under any of the given schemas`, all))
      return out
    }
    const more = oneOf.slice(firstValid + 1).filter((s) => v.isValid(instance, s))
    if (more.length) {
      more.push(oneOf[firstValid])
      out.push(mkError(() => `${pyRepr(instance)} is valid under each of ${more.map((s) => pyRepr(s)).join(', ')}`))
    }
    return out
  },

  not(v, notSchema: Schema, instance) {
    if (v.isValid(instance, notSchema)) {
      return [mkError(() => `${pyRepr(instance)} should not be valid under ${pyRepr(notSchema)}`)]
    }
    return []
  },

  if(v, ifSchema: Schema, instance, schema) {
    if (v.isValid(instance, ifSchema)) {
      return 'then' in schema ? v.descend(instance, schema.then as Schema, undefined, 'then') : []
    }
    return 'else' in schema ? v.descend(instance, schema.else as Schema, undefined, 'else') : []
  },
}

// ---------------------------------------------------------------------------
// best_match
// ---------------------------------------------------------------------------

const WEAK = new Set(['anyOf', 'oneOf'])

function matchesType(err: SchemaError): boolean {
  if (!isObject(err.schema) || !('type' in err.schema)) return false
  const t = err.schema.type
  try {
    if (typeof t === 'string') return isType(err.instance, t)
    if (Array.isArray(t)) return t.some((x) => isType(err.instance, String(x)))
  } catch {
    return false
  }
  return false
}

/** jsonschema.exceptions.relevance, as a tuple of numbers (bigger is more relevant). */
function relevance(err: SchemaError): number[] {
  return [-err.path.length, WEAK.has(err.keyword ?? '') ? 0 : 1, 0, matchesType(err) ? 0 : 1]
}

function cmpKey(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1
  return 0
}

/** jsonschema.exceptions.best_match (4.10.3). */
export function bestMatch(errors: SchemaError[]): SchemaError | null {
  if (!errors.length) return null
  let best = errors[0]
  let bestKey = relevance(best)
  for (const e of errors.slice(1)) {
    const k = relevance(e)
    if (cmpKey(k, bestKey) > 0) {
      best = e
      bestKey = k
    }
  }
  while (best.context.length) {
    // heapq.nsmallest(2, ...) is stable: the first two in (key, position) order
    const sorted = best.context
      .map((e, i) => ({e, i, k: relevance(e)}))
      .sort((a, b) => cmpKey(a.k, b.k) || a.i - b.i)
    if (sorted.length >= 2 && cmpKey(sorted[0].k, sorted[1].k) === 0) return best
    best = sorted[0].e
  }
  return best
}

function formatAsIndex(container: string, indices: PathItem[]): string {
  if (!indices.length) return container
  return `${container}[${indices.map((i) => (typeof i === 'number' ? String(i) : pyStrRepr(i))).join('][')}]`
}

const indentLines = (text: string) =>
  text
    .split('\n')
    .map((l) => (l.trim() ? '    ' + l : l))
    .join('\n')

/** str(ValidationError) as python-jsonschema 4.10 renders it. */
export function formatError(err: SchemaError): string {
  const schemaPath = formatAsIndex('schema', err.schemaPath.slice(0, -1))
  const instancePath = formatAsIndex('instance', err.path)
  const keyword = err.keyword === null ? 'None' : pyStrRepr(err.keyword)
  return (
    `${err.message}\n\n` +
    `Failed validating ${keyword} in ${schemaPath}:\n` +
    `${indentLines(pformat(err.schema, 72))}\n\n` +
    `On ${instancePath}:\n` +
    `${indentLines(pformat(err.instance, 72))}`
  ).trimEnd()
}

/** Every error python-jsonschema's iter_errors would yield, in the same order. */
export function iterErrors(schema: object | boolean, instance: unknown, options: ValidateOptions = {}): SchemaError[] {
  const errs = new Validator(options.formatChecker ?? true).iterErrors(instance, schema as Schema)
  return errs
}

/** The error `jsonschema.validate` would raise, or null when the instance is valid. */
export function validationError(schema: object | boolean, instance: unknown, options: ValidateOptions = {}): SchemaError | null {
  return bestMatch(iterErrors(schema, instance, options))
}

/**
 * Validates like `jsonschema.validate(instance, schema, format_checker=FormatChecker())`
 * with Placement's uuid checker: null when valid, else `str(ValidationError)`.
 */
export function validateSchema(schema: object, instance: unknown, options: ValidateOptions = {}): string | null {
  const err = validationError(schema, instance, options)
  return err ? formatError(err) : null
}
