/**
 * Layout files: racks, rows and rooms as an operator writes them (YAML or JSON), read
 * with every shape error listed at once, and written back in the same form.
 */
import type {Layout, RackLayout, RoomLayout, RowLayout} from '../../core/topology.js'
import {usageError} from '../failure.js'
import {readDocument} from '../formats/document.js'

export type LayoutDoc = Layout & {generation?: number}

/** The keys of a layout file: the layout's own, and the generation it was read at. */
export const LAYOUT_KEYS = ['rooms', 'rows', 'racks', 'generation'] as const

export interface LayoutReadOptions {
  /**
   * Top-level keys of another file format that may stand beside the layout and are skipped
   * unread (a datacenter file's providers, which `placemat apply` reads).
   */
  skipKeys?: readonly string[]
}

/** Reads a layout (YAML or JSON; "-" for stdin) and checks its shape (exit 2 when wrong). */
export function readLayoutFile(file: string, opts: LayoutReadOptions = {}): LayoutDoc {
  const data = readDocument(file, {fail: usageError, jsonFastPath: true})
  return parseLayout(data ?? {}, file, opts)
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Checks the shape of a parsed layout and returns a clean copy (only the keys the API takes). */
export function parseLayout(data: unknown, file = 'layout', opts: LayoutReadOptions = {}): LayoutDoc {
  const errors: string[] = []
  if (!isObject(data)) throw usageError(`${file}: expected a mapping with rooms, rows and/or racks`)
  const skip = new Set(opts.skipKeys ?? [])
  const others = skip.size ? `, or ${[...skip].join(', ')}` : ''
  for (const k of Object.keys(data)) {
    if (!(LAYOUT_KEYS as readonly string[]).includes(k) && !skip.has(k))
      errors.push(`${k}: unknown key; expected rooms, rows, racks (and generation)${others}`)
  }
  const out = checkLayout(data, (where, msg) => errors.push(`${where}: ${msg}`))
  if (errors.length)
    throw usageError(`${file}: ${errors.slice(0, 20).join('; ')}${errors.length > 20 ? ` (and ${errors.length - 20} more)` : ''}`)
  return out
}

/**
 * The layout under a file's layout keys (other keys are not looked at), its shape problems
 * told to `err` (where, what), every one of them; a clean copy of what is well formed.
 */
export function checkLayout(data: Record<string, unknown>, err: (where: string, msg: string) => void): LayoutDoc {
  const list = (v: unknown, where: string): unknown[] => {
    if (v === undefined || v === null) return []
    if (!Array.isArray(v)) {
      err(where, 'expected a list')
      return []
    }
    return v
  }
  const named = (v: unknown, where: string, keys: string[]): v is {name: string} & Record<string, unknown> => {
    if (!isObject(v)) {
      err(where, `expected a mapping with ${keys.join(', ')}`)
      return false
    }
    for (const k of Object.keys(v)) if (!keys.includes(k)) err(`${where}.${k}`, `unknown key; expected ${keys.join(', ')}`)
    if (typeof v.name !== 'string' || !v.name.trim() || v.name.length > 255) {
      err(`${where}.name`, 'a name (1-255 characters) is required')
      return false
    }
    return true
  }
  const rack = (v: unknown, where: string): RackLayout | undefined => {
    if (!named(v, where, ['name', 'hosts'])) return undefined
    const hosts: string[] = []
    list(v.hosts, `${where}.hosts`).forEach((h, i) => {
      if ((typeof h !== 'string' && typeof h !== 'number') || String(h).trim() === '')
        err(`${where}.hosts[${i}]`, 'expected a host name or uuid')
      else hosts.push(String(h))
    })
    return {name: v.name, hosts}
  }
  const row = (v: unknown, where: string): RowLayout | undefined => {
    if (!named(v, where, ['name', 'racks'])) return undefined
    return {
      name: v.name,
      racks: list(v.racks, `${where}.racks`)
        .map((k, i) => rack(k, `${where}.racks[${i}]`))
        .filter((k): k is RackLayout => !!k),
    }
  }
  const room = (v: unknown, where: string): RoomLayout | undefined => {
    if (!named(v, where, ['name', 'rows'])) return undefined
    return {
      name: v.name,
      rows: list(v.rows, `${where}.rows`)
        .map((r, i) => row(r, `${where}.rows[${i}]`))
        .filter((r): r is RowLayout => !!r),
    }
  }
  const out: LayoutDoc = {
    rooms: list(data.rooms, 'rooms')
      .map((m, i) => room(m, `rooms[${i}]`))
      .filter((m): m is RoomLayout => !!m),
    rows: list(data.rows, 'rows')
      .map((r, i) => row(r, `rows[${i}]`))
      .filter((r): r is RowLayout => !!r),
    racks: list(data.racks, 'racks')
      .map((k, i) => rack(k, `racks[${i}]`))
      .filter((k): k is RackLayout => !!k),
  }
  if (data.generation !== undefined && data.generation !== null) {
    if (typeof data.generation !== 'number' || !Number.isInteger(data.generation) || data.generation < 0)
      err('generation', 'expected a non-negative integer')
    else out.generation = data.generation
  }
  return out
}

/** Only the layout keys (no generation), without empty top-level lists. */
export function layoutBody(doc: LayoutDoc): Layout {
  const out: Layout = {rooms: doc.rooms ?? []}
  if (doc.rows?.length) out.rows = doc.rows
  if (doc.racks?.length) out.racks = doc.racks
  return out
}

const PLAIN_SCALAR = /^[A-Za-z_][A-Za-z0-9_./:+-]*$/
const YAML_WORDS = /^(true|false|yes|no|on|off|null|y|n)$/i
const scalar = (s: string) => (PLAIN_SCALAR.test(s) && !YAML_WORDS.test(s) ? s : JSON.stringify(s))

/** The layout as YAML in the issue's form (hosts as one flow list per rack). */
export function layoutYaml(doc: LayoutDoc, header: string[] = []): string {
  const out = header.map((h) => `# ${h}`)
  if (doc.generation !== undefined) out.push(`generation: ${doc.generation}`)
  const rack = (k: RackLayout, indent: string) => {
    out.push(`${indent}- name: ${scalar(k.name)}`)
    out.push(`${indent}  hosts: [${(k.hosts ?? []).map(scalar).join(', ')}]`)
  }
  const row = (r: RowLayout, indent: string) => {
    out.push(`${indent}- name: ${scalar(r.name)}`)
    if (!r.racks?.length) out.push(`${indent}  racks: []`)
    else {
      out.push(`${indent}  racks:`)
      for (const k of r.racks) rack(k, `${indent}    `)
    }
  }
  const rooms = doc.rooms ?? []
  if (!rooms.length) out.push('rooms: []')
  else {
    out.push('rooms:')
    for (const m of rooms) {
      out.push(`  - name: ${scalar(m.name)}`)
      if (!m.rows?.length) out.push('    rows: []')
      else {
        out.push('    rows:')
        for (const r of m.rows) row(r, '      ')
      }
    }
  }
  if (doc.rows?.length) {
    out.push('rows:')
    for (const r of doc.rows) row(r, '  ')
  }
  if (doc.racks?.length) {
    out.push('racks:')
    for (const k of doc.racks) rack(k, '  ')
  }
  return out.join('\n') + '\n'
}
