/**
 * `inventory set` arguments: CLASS=TOTAL (or osc-placement's CLASS:field=VALUE) positional
 * arguments, per-class field flags (--reserved VCPU=2, repeatable or comma separated, or a
 * bare value for every class named), merged into a PUT /inventories body.
 */
import {INVENTORY_DEFAULTS, INVENTORY_FIELDS, inventoryFieldProblem, withDefaults} from '../../core/placement/inventories.js'
import type {Inventory} from '../../core/state/state.js'
import {capacityOf} from '../../core/inventory-capacity.js'
import {usageError as usage} from '../failure.js'
import type {Column} from '../output.js'

export {INVENTORY_DEFAULTS, INVENTORY_FIELDS}
export type InventoryField = (typeof INVENTORY_FIELDS)[number]
export type InventoryRecord = Partial<Inventory>

function parseNumber(field: InventoryField, text: string, where: string): number {
  const t = text.trim()
  const ok = field === 'allocation_ratio' ? /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/.test(t) : /^-?[0-9]+$/.test(t)
  if (!ok) throw usage(`${where}: ${field} must be ${field === 'allocation_ratio' ? 'a number' : 'an integer'}, not '${text}'`)
  // Refused here, before anything is read or said of the provider (Placement would answer 400).
  // The number as typed: one past what a double holds exactly would be echoed rounded.
  const problem = inventoryFieldProblem(field, Number(t), t)
  if (problem) throw usage(`${where}: ${problem}`)
  return Number(t)
}

/** Parses CLASS=VALUE or CLASS:field=VALUE (field defaults to total). */
export function parseResourceArg(arg: string): {rc: string; field: InventoryField; value: number} {
  const eq = arg.indexOf('=')
  if (eq <= 0 || eq === arg.length - 1) throw usage(`'${arg}': expected CLASS=TOTAL or CLASS:FIELD=VALUE`)
  const left = arg.slice(0, eq)
  const [rc, field = 'total', ...rest] = left.split(':')
  if (!rc || rest.length) throw usage(`'${arg}': expected CLASS=TOTAL or CLASS:FIELD=VALUE`)
  const f = field.replace(/-/g, '_') as InventoryField
  if (!INVENTORY_FIELDS.includes(f)) throw usage(`'${arg}': unknown inventory field '${field}'; choose from ${INVENTORY_FIELDS.join(', ')}`)
  return {rc, field: f, value: parseNumber(f, arg.slice(eq + 1), arg)}
}

/**
 * Per-class values of one field flag: "VCPU=4", "VCPU=4,PCPU=2", or a bare "4" for every
 * class in `named` (the classes given as arguments).
 */
export function parseFieldFlag(field: InventoryField, values: string[] | undefined, named: string[]): Map<string, number> {
  const out = new Map<string, number>()
  const flag = `--${field.replace(/_/g, '-')}`
  for (const v of values ?? []) {
    for (const part of v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = part.indexOf('=')
      if (eq < 0) {
        if (!named.length) throw usage(`${flag} ${part}: name the class (CLASS=${part}) or give classes as arguments`)
        const n = parseNumber(field, part, flag)
        for (const rc of named) out.set(rc, n)
      } else {
        const rc = part.slice(0, eq).trim()
        if (!rc) throw usage(`${flag} ${part}: expected CLASS=VALUE`)
        out.set(rc, parseNumber(field, part.slice(eq + 1), `${flag} ${part}`))
      }
    }
  }
  return out
}

export interface InventoryChanges {
  /** Field values per class, in the order first mentioned. */
  perClass: Map<string, InventoryRecord>
}

export function collectChanges(args: string[], flags: Partial<Record<InventoryField, string[] | undefined>>): InventoryChanges {
  const perClass = new Map<string, InventoryRecord>()
  const put = (rc: string, field: InventoryField, value: number) => {
    let rec = perClass.get(rc)
    if (!rec) perClass.set(rc, (rec = {}))
    rec[field] = value
  }
  for (const a of args) {
    const {rc, field, value} = parseResourceArg(a)
    put(rc, field, value)
  }
  const named = [...perClass.keys()]
  for (const field of INVENTORY_FIELDS) {
    for (const [rc, v] of parseFieldFlag(field, flags[field], named)) put(rc, field, v)
  }
  return {perClass}
}

/**
 * The inventories to PUT: with `amend`, the current records with the changes laid over
 * them field by field; otherwise only the classes named (a full replacement, as
 * osc-placement's inventory set does), each needing a total.
 */
export function mergeInventories(
  current: Record<string, InventoryRecord>,
  changes: InventoryChanges,
  amend: boolean,
): Record<string, InventoryRecord> {
  const out: Record<string, InventoryRecord> = {}
  if (amend) for (const [rc, rec] of Object.entries(current)) out[rc] = {...rec}
  for (const [rc, rec] of changes.perClass) {
    const base = out[rc] ?? {}
    out[rc] = {...base, ...rec}
    if (out[rc].total === undefined) {
      throw usage(
        amend
          ? `${rc}: no inventory of this class yet; give its total (${rc}=TOTAL)`
          : `${rc}: give its total (${rc}=TOTAL), or use --amend to change fields of an existing inventory`,
      )
    }
  }
  // Only the fields Placement accepts in a PUT.
  for (const rc of Object.keys(out)) {
    const rec: InventoryRecord = {}
    for (const f of INVENTORY_FIELDS) if (out[rc][f] !== undefined) rec[f] = out[rc][f]
    out[rc] = rec
  }
  return out
}

/** What an inventory can hold, as Placement computes capacity (fields left out take Placement's defaults). */
export const capacity = (inv: InventoryRecord): number => capacityOf(withDefaults({total: 0, ...inv}))

// ---- tables ----------------------------------------------------------------------

export interface InventoryRow extends InventoryRecord {
  resource_class: string
  used: number
  capacity: number
}

export const inventoryColumns: Column<InventoryRow>[] = [
  {key: 'resource_class', header: 'class'},
  {key: 'total', align: 'right'},
  {key: 'reserved', align: 'right'},
  {key: 'allocation_ratio', header: 'ratio', align: 'right'},
  {key: 'min_unit', align: 'right'},
  {key: 'max_unit', align: 'right'},
  {key: 'step_size', align: 'right'},
  {key: 'used', align: 'right'},
  {key: 'capacity', align: 'right'},
]

/** One row per class, with what is used of it and its capacity. */
export const inventoryRows = (inventories: Record<string, InventoryRecord>, usages: Record<string, number> = {}): InventoryRow[] =>
  Object.entries(inventories).map(([rc, inv]) => ({resource_class: rc, ...inv, used: usages[rc] ?? 0, capacity: capacity(inv)}))
