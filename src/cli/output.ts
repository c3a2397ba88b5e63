import {Chalk} from 'chalk'
import {createRequire} from 'node:module'

export type Format = 'table' | 'json' | 'yaml'

export interface Column<T> {
  key: string
  header?: string
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

// Width on screen, without ANSI color codes.
const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '').length

/** A column name as the operator may type it: the key, or the header as printed, in any case, spaces or dashes for underscores. */
const columnName = (s: string) => s.trim().toLowerCase().replace(/[\s-]+/g, '_')

/**
 * Picks and orders `available` names by what the operator asked for (-c), matching keys and
 * printed headers alike; unknown names are an error that lists the choices.
 */
export function pickColumns(available: Array<{key: string; header?: string}>, only: string[]): string[] {
  const byName = new Map<string, string>()
  for (const c of available) {
    byName.set(columnName(c.key), c.key)
    if (c.header) byName.set(columnName(c.header), c.key)
  }
  const unknown = only.filter((k) => !byName.has(columnName(k)))
  if (unknown.length) throw new Error(`unknown column(s): ${unknown.join(', ')}; choose from ${available.map((c) => c.key).join(', ')}`)
  return only.map((k) => byName.get(columnName(k))!)
}

/** Renders rows as an aligned text table; `only` picks and orders columns by key (or header). */
export function table<T>(rows: T[], columns: Column<T>[], only?: string[]): string {
  const chalk = chalkFor()
  let cols = columns
  if (only?.length) cols = pickColumns(columns, only).map((k) => columns.find((c) => c.key === k)!)
  const headers = cols.map((c) => (c.header ?? c.key).toUpperCase())
  const body = rows.map((r) => cols.map((c) => cell(c.get ? c.get(r) : (r as any)[c.key])))
  const widths = headers.map((h, i) => Math.max(visible(h), ...body.map((b) => visible(b[i]))))
  const pad = (s: string, i: number) => {
    const fill = ' '.repeat(widths[i] - visible(s))
    return cols[i].align === 'right' ? fill + s : s + fill
  }
  const lines = [headers.map((h, i) => chalk.bold(pad(h, i))).join('  ').trimEnd()]
  for (const b of body) lines.push(b.map((s, i) => pad(s, i)).join('  ').trimEnd())
  return lines.join('\n')
}

export function serialize(data: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? JSON.stringify(data, null, 2) : yaml().stringify(data).trimEnd()
}

/** The YAML library, loaded on first use: most commands never print YAML (84 files spared at start). */
let yamlModule: typeof import('yaml') | undefined
const yaml = () => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'))
