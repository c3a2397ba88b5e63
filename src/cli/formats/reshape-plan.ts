/**
 * A reshape plan file (YAML or JSON), in one of two forms: the POST /reshaper body itself
 * (generations left out are filled in from the current state), or the move form
 * (`moves: [...]`, see src/core/reshape/moves.ts), which is compiled into that body.
 * Anything unusable in the file is a usage error (exit 2): nothing is read or written.
 */
import YAML from 'yaml'
import {INVENTORY_FIELDS} from '../../core/placement/inventories.js'
import type {Move} from '../../core/reshape/moves.js'
import type {ReshaperBody} from '../../core/placement/reshaper.js'
import type {Inventory} from '../../core/state/state.js'
import {usageError} from '../failure.js'
import {readText} from './document.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'

export type ReshapePlanFile = {kind: 'body'; body: ReshaperBody} | {kind: 'moves'; moves: Move[]}

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v)

function parseResources(v: unknown, where: string): Record<string, number | 'all'> {
  const out: Record<string, number | 'all'> = {}
  if (typeof v === 'string') {
    for (const part of v
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const m = /^([A-Z0-9_]+)[:=]\s*([0-9]+|all)$/.exec(part)
      if (!m) throw usageError(`${where}: resources "${v}": expected CLASS:AMOUNT[,CLASS:AMOUNT...]`)
      out[m[1]] = m[2] === 'all' ? 'all' : Number(m[2])
    }
  } else if (isObject(v)) {
    for (const [rc, n] of Object.entries(v)) {
      if (n === 'all' || (Number.isInteger(n) && n > 0)) out[rc] = n
      else throw usageError(`${where}: resources.${rc} must be a positive whole number or "all"`)
    }
  } else {
    throw usageError(`${where}: resources must be a mapping {CLASS: AMOUNT} or "CLASS:AMOUNT,..."`)
  }
  if (!Object.keys(out).length) throw usageError(`${where}: resources is empty`)
  for (const [rc, n] of Object.entries(out)) if (n === 0) throw usageError(`${where}: ${rc}: moving 0 moves nothing`)
  return out
}

const MOVE_KEYS = new Set(['from', 'to', 'uuid', 'parent', 'resources', 'inventory', 'consumers'])

/** A move's `inventory`: {CLASS: {field: number}}, any inventory field but total. */
function parseInventoryFields(v: unknown, where: string): Record<string, Partial<Inventory>> {
  const inventory: Record<string, Partial<Inventory>> = {}
  if (v === undefined) return inventory
  if (!isObject(v)) throw usageError(`${where}: inventory must be a mapping {CLASS: {field: value}}`)
  for (const [rc, fields] of Object.entries(v)) {
    if (!isObject(fields)) throw usageError(`${where}: inventory.${rc} must be a mapping of inventory fields`)
    for (const [f, n] of Object.entries(fields)) {
      if (!(INVENTORY_FIELDS as readonly string[]).includes(f) || f === 'total') {
        throw usageError(`${where}: inventory.${rc}.${f}: one of reserved, min_unit, max_unit, step_size, allocation_ratio`)
      }
      if (typeof n !== 'number') throw usageError(`${where}: inventory.${rc}.${f} must be a number`)
    }
    inventory[rc] = fields as Partial<Inventory>
  }
  return inventory
}

function parseMove(m: unknown, where: string): Move {
  if (!isObject(m)) throw usageError(`${where}: expected a mapping`)
  for (const k of Object.keys(m))
    if (!MOVE_KEYS.has(k)) throw usageError(`${where}: unknown key "${k}" (one of ${[...MOVE_KEYS].join(', ')})`)
  for (const k of ['from', 'to'] as const) {
    if (typeof m[k] !== 'string' || !m[k]) throw usageError(`${where}: "${k}" names a provider (name or uuid)`)
  }
  if (m.from === m.to) throw usageError(`${where}: from and to are the same provider`)
  if (m.uuid !== undefined && (typeof m.uuid !== 'string' || !isUuidLike(m.uuid))) throw usageError(`${where}: uuid must be a uuid`)
  if (m.parent !== undefined && typeof m.parent !== 'string') throw usageError(`${where}: parent names a provider`)
  if (m.consumers !== undefined) {
    if (!Array.isArray(m.consumers) || m.consumers.some((c: unknown) => typeof c !== 'string' || !isUuidLike(c))) {
      throw usageError(`${where}: consumers must be a list of consumer uuids`)
    }
  }
  const inventory = parseInventoryFields(m.inventory, where)
  const resources = parseResources(m.resources, where)
  for (const rc of Object.keys(inventory))
    if (!(rc in resources)) throw usageError(`${where}: inventory.${rc} but ${rc} is not in resources`)
  return {
    from: m.from,
    to: m.to,
    uuid: m.uuid ? canonical(m.uuid) : undefined,
    parent: m.parent,
    resources,
    inventory,
    consumers: m.consumers?.map((c: string) => canonical(c)),
  }
}

/** Parses a plan text (YAML or JSON) into one of the two forms. */
export function parsePlan(text: string, file: string): ReshapePlanFile {
  let data: unknown
  try {
    data = YAML.parse(text)
  } catch (err) {
    throw usageError(`${file}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`)
  }
  if (!isObject(data)) throw usageError(`${file}: expected a mapping with "moves" or a POST /reshaper body (inventories, allocations)`)
  if ('inventories' in data || 'allocations' in data) {
    if (!isObject(data.inventories) || !isObject(data.allocations ?? {})) {
      throw usageError(`${file}: a reshaper body needs an inventories mapping and an allocations mapping`)
    }
    return {kind: 'body', body: {inventories: data.inventories, allocations: data.allocations ?? {}} as ReshaperBody}
  }
  if (!Array.isArray(data.moves) || data.moves.length === 0) {
    throw usageError(`${file}: expected "moves: [...]" (see \`placemat reshape --help\`) or a POST /reshaper body`)
  }
  return {kind: 'moves', moves: data.moves.map((m: unknown, i: number) => parseMove(m, `${file}: moves[${i}]`))}
}

export function readPlan(file: string): ReshapePlanFile {
  return parsePlan(readText(file, usageError), file)
}
