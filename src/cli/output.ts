import {Chalk} from 'chalk'
import {createRequire} from 'node:module'

export type Format = 'table' | 'value' | 'csv' | 'json' | 'yaml'

export interface Column<T> {
  key: string
  header?: string
  /** Other names -c takes for it: osc's (its JSON key, as `root_provider_uuid`). */
  aliases?: string[]
  get?: (row: T) => unknown
  align?: 'left' | 'right'
}

/** Color only for a terminal, and never when NO_COLOR is set. */
export function colorEnabled(stream: NodeJS.WriteStream = process.stdout): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false
  if (process.env.FORCE_COLOR) return true
  return Boolean(stream.isTTY)
}

export const chalkFor = (stream: NodeJS.WriteStream = process.stdout) => new Chalk({level: colorEnabled(stream) ? 1 : 0})

const cell = (v: unknown): string => {
  if (v === null || v === undefined) return ''
  if (Array.isArray(v)) return v.join(',')
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

/** Code points two columns wide on a terminal (East Asian Wide and Fullwidth, emoji). */
const WIDE =
  /[\u{1100}-\u{115F}\u{2E80}-\u{303E}\u{3041}-\u{33FF}\u{3400}-\u{4DBF}\u{4E00}-\u{9FFF}\u{A000}-\u{A4CF}\u{AC00}-\u{D7A3}\u{F900}-\u{FAFF}\u{FE30}-\u{FE4F}\u{FF00}-\u{FF60}\u{FFE0}-\u{FFE6}\u{1F300}-\u{1F64F}\u{1F900}-\u{1F9FF}\u{20000}-\u{3FFFD}]/u

/** Width on screen: without ANSI color codes, a wide character two columns, a combining mark none. */
export function visible(s: string): number {
  if (/^[\x20-\x7e]*$/.test(s)) return s.length
  let width = 0
  for (const ch of s.replace(/\x1b\[[0-9;]*m/g, '')) width += /\p{M}/u.test(ch) ? 0 : WIDE.test(ch) ? 2 : 1
  return width
}

/** A column name as the operator may type it: the key, or the header as printed, in any case, spaces or dashes for underscores. */
const columnName = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_')

/**
 * Picks and orders `available` names by what the operator asked for (-c), matching keys and
 * printed headers alike; unknown names are an error that lists the choices.
 */
export function pickColumns(available: Array<{key: string; header?: string; aliases?: string[]}>, only: string[]): string[] {
  const byName = new Map<string, string>()
  for (const c of available) {
    byName.set(columnName(c.key), c.key)
    if (c.header) byName.set(columnName(c.header), c.key)
    for (const a of c.aliases ?? []) byName.set(columnName(a), c.key)
  }
  const unknown = only.filter((k) => !byName.has(columnName(k)))
  if (unknown.length) throw new Error(`unknown column(s): ${unknown.join(', ')}; choose from ${available.map((c) => c.key).join(', ')}`)
  return only.map((k) => byName.get(columnName(k))!)
}

/**
 * What a command prints as text, known before it runs: a table (its columns), key/value lines
 * (their keys: the text's, then those of its JSON document, which -c takes too), or neither
 * (sentences: {}). A command that writes declares it, so its output flags are checked before it
 * writes anything.
 */
export interface Printed {
  columns?: Array<{key: string; header?: string; aliases?: string[]}>
  keys?: string[]
  /** A document in every format (a snapshot, a layout file): checked whatever the format. */
  document?: boolean
}

/** What a command that prints sentences (or nothing) as text declares: no columns or keys to pick. */
export const SENTENCES: Printed = {}

/** What a command that prints a document in every format declares (export, topology layout): nothing to pick, sort or leave out. */
export const DOCUMENT: Printed = {document: true}

/** The output flags an operator gave: -c, --sort-column, --ids, --no-headers. */
export interface OutputChoices {
  columns?: string[]
  sortBy?: string[]
  ids?: boolean
  noHeaders?: boolean
}

/**
 * The reason `given` does not fit what `command` prints, or null when it does: a column or key
 * it does not print, a sort or --ids (which needs a uuid column) where it prints no table,
 * --no-headers where it prints neither a table nor key lines.
 */
export function outputMisfit(printed: Printed, given: OutputChoices, command: string): string | null {
  const table = printed.columns
  const names = table ?? printed.keys?.map((key) => ({key}))
  try {
    if (given.columns?.length) {
      if (printed.document) return `-c: ${command} prints a document, with no columns or keys to pick`
      if (!names) return `-c: ${command} prints no columns or keys (--json or --yaml print its document)`
      pickColumns(names, given.columns)
    }
    if (given.sortBy?.length) {
      if (!table) return `--sort-column: ${command} prints no table`
      pickColumns(table, given.sortBy)
    }
  } catch (err) {
    return (err as Error).message
  }
  if (given.ids && !table) return `--ids: ${command} prints no list`
  if (given.noHeaders && !names) return `--no-headers: ${command} prints no table`
  if (given.ids && !table!.some((c) => c.key === 'uuid')) return '--ids: this list has no uuid column'
  return null
}

export interface TableOptions {
  /** Pick and order columns by key (or header). */
  only?: string[]
  /** Sort rows by these columns (numbers as numbers), before anything is cut. */
  sortBy?: string[]
  /** false: no header line (for scripts). */
  headers?: boolean
  /** The most columns a line may take (osc's --max-width, --fit-width): the widest cells wrap. */
  maxWidth?: number
}

/** The narrowest a column is made to fit a width: its header's, up to 12. */
const NARROWEST = 12

/**
 * Column widths that fit `max` (two spaces between columns), taken from the widest column first,
 * never below NARROWEST or its header's; as they are when they fit, or cannot be made to.
 */
export function fittedWidths(widths: number[], headers: number[], max: number): number[] {
  const out = [...widths]
  const floor = headers.map((h) => Math.max(Math.min(NARROWEST, h), 1))
  let excess = out.reduce((a, b) => a + b, 0) + 2 * (out.length - 1) - max
  // A column at a time, the widest first, one column narrower each time: they come down together.
  while (excess > 0) {
    let widest = -1
    for (let i = 0; i < out.length; i++) if (out[i] > floor[i] && (widest < 0 || out[i] > out[widest])) widest = i
    if (widest < 0) break
    out[widest]--
    excess--
  }
  return out
}

/** `text` in lines of at most `width` columns: at spaces or after , ; : where it can, else in the middle. */
export function wrapCell(text: string, width: number): string[] {
  if (visible(text) <= width) return [text]
  const lines: string[] = []
  let rest = text
  while (visible(rest) > width) {
    let cut = 0
    let used = 0
    let lastBreak = -1
    for (const ch of rest) {
      const w = visible(ch)
      if (used + w > width) break
      used += w
      cut += ch.length
      if (ch === ' ' || ch === ',' || ch === ';' || ch === ':') lastBreak = cut
    }
    const at = lastBreak > 0 ? lastBreak : Math.max(cut, 1)
    lines.push(rest.slice(0, at).trimEnd())
    rest = rest.slice(at).trimStart()
  }
  if (rest) lines.push(rest)
  return lines
}

const cellValue = <T>(c: Column<T>, r: T) => (c.get ? c.get(r) : (r as any)[c.key])

/** Rows sorted by the named columns, stably; numbers compare as numbers, the rest as text. */
export function sortRows<T>(rows: T[], columns: Column<T>[], sortBy: string[]): T[] {
  const keys = pickColumns(columns, sortBy).map((k) => columns.find((c) => c.key === k)!)
  const cmp = (a: unknown, b: unknown) =>
    typeof a === 'number' && typeof b === 'number' ? a - b : cell(a).localeCompare(cell(b), undefined, {numeric: true})
  return rows
    .map((r, i) => ({r, i}))
    .sort((x, y) => {
      for (const c of keys) {
        const d = cmp(cellValue(c, x.r), cellValue(c, y.r))
        if (d) return d
      }
      return x.i - y.i
    })
    .map((x) => x.r)
}

/** The columns to print: all, or those picked. */
const chosen = <T>(columns: Column<T>[], only?: string[]) =>
  only?.length ? pickColumns(columns, only).map((k) => columns.find((c) => c.key === k)!) : columns

/**
 * A cell as `-f value` prints it: without whitespace, so that a line splits on whitespace into
 * the columns asked for (cliff's value formatter joins cells with a space). Whitespace after a
 * separator (`,` `;` `:`) is dropped ("cn1: VCPU=4; ceph: DISK_GB=40" is
 * "cn1:VCPU=4;ceph:DISK_GB=40"), any other run of it is written as one `_` ("rack k1" is
 * "rack_k1", "cannot move" is "cannot_move").
 */
export const valueCell = (text: string): string =>
  text
    .trim()
    .replace(/([,;:])\s+/g, '$1')
    .replace(/\s+/g, '_')

/**
 * What `-f value` prints for a cell with nothing in it: what osc-placement (cliff) prints for a
 * null value. A list's empty cell prints it too (cliff would print nothing for an empty text,
 * and the line would split into fewer columns than asked for): every line has every column.
 */
export const EMPTY_VALUE = 'None'

/** A record's value as `-f value` prints it on its own line: None for no value, as osc-placement. */
export const recordValue = (v: unknown): string =>
  v === null || v === undefined ? EMPTY_VALUE : typeof v === 'object' ? JSON.stringify(v) : String(v)

/** osc-placement's `-f value`: each row's cells (valueCell; EMPTY_VALUE when empty) separated by a space, no header, no padding. */
export function valueLines<T>(rows: T[], columns: Column<T>[], opts: TableOptions = {}): string {
  const cols = chosen(columns, opts.only)
  const sorted = opts.sortBy?.length ? sortRows(rows, columns, opts.sortBy) : rows
  return sorted.map((r) => cols.map((c) => valueCell(cell(cellValue(c, r))) || EMPTY_VALUE).join(' ')).join('\n')
}

/**
 * The rows as osc's `-f json|yaml -c A -c B` prints them: a list of objects holding the columns
 * asked for, each under the name it was asked by.
 */
export function pickedRows<T>(rows: T[], columns: Column<T>[], only: string[], sortBy?: string[]): Array<Record<string, unknown>> {
  const keys = pickColumns(columns, only)
  const cols = keys.map((k) => columns.find((c) => c.key === k)!)
  const sorted = sortBy?.length ? sortRows(rows, columns, sortBy) : rows
  return sorted.map((r) => Object.fromEntries(cols.map((c, i) => [only[i], cellValue(c, r) ?? null])))
}

/** A CSV field as cliff's csv formatter writes it: numbers bare, everything else quoted ("" doubled). */
const csvField = (v: unknown): string => (typeof v === 'number' ? String(v) : `"${cell(v).replace(/"/g, '""')}"`)

/** osc-placement's `-f csv`: a header of the column names, then one line a row (--no-headers: rows only). */
export function csvLines<T>(rows: T[], columns: Column<T>[], opts: TableOptions = {}): string {
  const cols = chosen(columns, opts.only)
  const sorted = opts.sortBy?.length ? sortRows(rows, columns, opts.sortBy) : rows
  const lines = sorted.map((r) => cols.map((c) => csvField(cellValue(c, r))).join(','))
  if (opts.headers !== false) lines.unshift(cols.map((c) => csvField(c.header ?? c.key)).join(','))
  return lines.join('\n')
}

/** A record as CSV: its keys, then its values. */
export function csvRecord(data: Record<string, unknown>): string {
  const values = Object.values(data).map((v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v))
  return `${Object.keys(data).map(csvField).join(',')}\n${values.map(csvField).join(',')}`
}

/** Renders rows as an aligned text table. */
export function table<T>(rows: T[], columns: Column<T>[], opts: TableOptions | string[] = {}): string {
  const o: TableOptions = Array.isArray(opts) ? {only: opts} : opts
  const chalk = chalkFor()
  const cols = chosen(columns, o.only)
  if (o.sortBy?.length) rows = sortRows(rows, columns, o.sortBy)
  const headers = cols.map((c) => (c.header ?? c.key).toUpperCase())
  const body = rows.map((r) => cols.map((c) => cell(cellValue(c, r))))
  const shown = o.headers !== false
  const natural = headers.map((h, i) => Math.max(shown ? visible(h) : 0, ...body.map((b) => visible(b[i]))))
  const widths = o.maxWidth ? fittedWidths(natural, headers.map(visible), o.maxWidth) : natural
  const pad = (s: string, i: number) => {
    const fill = ' '.repeat(Math.max(0, widths[i] - visible(s)))
    return cols[i].align === 'right' ? fill + s : s + fill
  }
  const lines = !shown
    ? []
    : [
        headers
          .map((h, i) => chalk.bold(pad(h, i)))
          .join('  ')
          .trimEnd(),
      ]
  for (const b of body) {
    // A cell wider than its column wraps onto lines of its own below.
    const wrapped = b.map((s, i) => (visible(s) > widths[i] ? wrapCell(s, widths[i]) : [s]))
    const height = Math.max(...wrapped.map((w) => w.length))
    for (let k = 0; k < height; k++)
      lines.push(
        wrapped
          .map((w, i) => pad(w[k] ?? '', i))
          .join('  ')
          .trimEnd(),
      )
  }
  return lines.join('\n')
}

export function serialize(data: unknown, format: 'json' | 'yaml' | string): string {
  return format === 'json' ? JSON.stringify(data, null, 2) : yaml().stringify(data).trimEnd()
}

/** The YAML library, loaded on first use: most commands never print YAML (84 files spared at start). */
let yamlModule: typeof import('yaml') | undefined
const yaml = () => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'))
