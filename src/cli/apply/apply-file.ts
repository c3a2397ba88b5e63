/**
 * `placemat apply` files: a YAML (or JSON) file declares providers (nested trees), their
 * inventories, traits and aggregates, and the custom resource classes and traits they
 * need; the current state is read, a plan of the differences is made, and the plan is
 * applied: in one POST /placemat/v1/batch transaction on a placemat endpoint (or --db),
 * or as ordered standard Placement calls elsewhere.
 *
 * File format (every key but `providers[].name` optional):
 *
 *   resource_classes: [CUSTOM_FPGA]            # custom classes to create
 *   traits: [CUSTOM_RACK_A]                    # custom traits to create
 *   aggregates: {rack-a: 6f1c...}              # aggregate names for uuids
 *   providers:
 *     - name: cmp-a01
 *       uuid: ...                              # default: the existing provider of that name, else uuid5(name)
 *       parent: NAME|UUID|null                 # top level only; absent: left as it is (new: a root)
 *       inventories: {VCPU: 64, MEMORY_MB: {total: 262144, reserved: 4096}}
 *       traits: [HW_CPU_X86_AVX2]
 *       aggregates: [rack-a]                   # uuids, or names (top-level map, else uuid5)
 *       children: [{name: cmp-a01-numa0, ...}]
 *
 * inventories, traits and aggregates are managed only when the key is there (then they
 * are the provider's whole set: `traits: []` clears them).
 */
import {INVENTORY_DEFAULTS, INVENTORY_FIELDS} from '../../core/inventories.js'
import type {ApplyFile, DeclaredProvider, InventoryField} from '../../core/apply-plan/types.js'
import type {Inventory} from '../../core/state.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import {usageError} from '../failure.js'
import {readDocument} from '../services/document.js'

export type {ApplyFile}

const NAME_RE = /^[A-Z0-9_]+$/
const PROVIDER_KEYS = new Set(['name', 'uuid', 'parent', 'inventories', 'traits', 'aggregates', 'children'])
const TOP_KEYS = new Set(['providers', 'resource_classes', 'traits', 'aggregates'])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Reads an apply file (YAML or JSON; "-" for stdin) and checks its shape (exit 2 when wrong). */
export function readApplyFile(file: string): ApplyFile {
  const data = readDocument(file, {fail: usageError, jsonFastPath: true, yaml: {maxAliasCount: -1}})
  return parseApplyFile(data ?? {}, file)
}

type Problem = (where: string, msg: string) => void

/** A list of class or trait names (custom ones only where they are to be created). */
function nameList(v: unknown, where: string, custom: boolean, err: Problem): string[] {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) {
    err(where, 'expected a list of names')
    return []
  }
  const names: string[] = []
  v.forEach((n, i) => {
    if (typeof n !== 'string' || !NAME_RE.test(n)) err(`${where}[${i}]`, `'${n}' is not a valid name (A-Z, 0-9, _)`)
    else if (custom && !n.startsWith('CUSTOM_')) err(`${where}[${i}]`, `${n}: only custom names (CUSTOM_*) can be created`)
    else names.push(n)
  })
  return [...new Set(names)]
}

/** A provider's inventories: a total, or inventory fields, per class; Placement's defaults filled in. */
function parseInventories(v: unknown, where: string, err: Problem): Record<string, Inventory> | undefined {
  if (v === null) return {}
  if (!isObject(v)) {
    err(where, 'expected a mapping of resource class to a total or to inventory fields')
    return undefined
  }
  const invs: Record<string, Inventory> = {}
  for (const [rc, spec] of Object.entries(v)) {
    const w = `${where}.${rc}`
    if (!NAME_RE.test(rc)) {
      err(w, `'${rc}' is not a valid resource class name`)
      continue
    }
    const fields: Partial<Record<InventoryField, unknown>> = typeof spec === 'number' ? {total: spec} : isObject(spec) ? spec : {}
    if (typeof spec !== 'number' && !isObject(spec)) {
      err(w, 'expected a total or a mapping of inventory fields')
      continue
    }
    let ok = true
    for (const f of Object.keys(fields)) {
      if (!INVENTORY_FIELDS.includes(f as InventoryField)) {
        err(w, `unknown field '${f}'; expected ${INVENTORY_FIELDS.join(', ')}`)
        ok = false
      }
    }
    for (const f of INVENTORY_FIELDS) {
      const x = fields[f]
      if (x === undefined) continue
      if (typeof x !== 'number' || !Number.isFinite(x) || (f !== 'allocation_ratio' && !Number.isInteger(x))) {
        err(`${w}.${f}`, `expected ${f === 'allocation_ratio' ? 'a number' : 'an integer'}, not ${JSON.stringify(x)}`)
        ok = false
      }
    }
    if (fields.total === undefined) {
      err(w, 'total is required')
      ok = false
    }
    if (ok) invs[rc] = {...INVENTORY_DEFAULTS, ...(fields as Record<string, number>)} as Inventory
  }
  return invs
}

/** Checks the shape of a parsed file and fills inventory defaults; names stay unresolved. */
export function parseApplyFile(data: unknown, file = 'file'): ApplyFile {
  const errors: string[] = []
  const err = (where: string, msg: string) => errors.push(`${where}: ${msg}`)
  const out: ApplyFile = {resourceClasses: [], traits: [], aggregateNames: new Map(), providers: []}
  if (!isObject(data)) throw usageError(`${file}: expected a mapping with providers, resource_classes, traits, aggregates`)
  for (const k of Object.keys(data)) if (!TOP_KEYS.has(k)) err(k, `unknown key; expected one of ${[...TOP_KEYS].join(', ')}`)

  out.resourceClasses = nameList(data.resource_classes, 'resource_classes', true, err)
  out.traits = nameList(data.traits, 'traits', true, err)
  if (data.aggregates !== undefined && data.aggregates !== null) {
    if (!isObject(data.aggregates)) err('aggregates', 'expected a mapping of aggregate name to uuid')
    else
      for (const [name, uuid] of Object.entries(data.aggregates)) {
        if (typeof uuid !== 'string' || !isUuidLike(uuid)) err(`aggregates.${name}`, `'${uuid}' is not a uuid`)
        else out.aggregateNames.set(name, canonical(uuid))
      }
  }

  const walk = (v: unknown, where: string, parentIndex: number | undefined) => {
    if (!isObject(v)) {
      err(where, 'expected a provider mapping')
      return
    }
    for (const k of Object.keys(v)) if (!PROVIDER_KEYS.has(k)) err(`${where}.${k}`, `unknown key; expected one of ${[...PROVIDER_KEYS].join(', ')}`)
    if (typeof v.name !== 'string' || !v.name.trim() || v.name.length > 200) {
      err(`${where}.name`, 'a name (1-200 characters) is required')
      return
    }
    const p: DeclaredProvider = {where: `${where} (${v.name})`, name: v.name}
    if (v.uuid !== undefined) {
      if (typeof v.uuid !== 'string' || !isUuidLike(v.uuid)) err(`${where}.uuid`, `'${v.uuid}' is not a uuid`)
      else p.uuid = canonical(v.uuid)
    }
    if ('parent' in v) {
      if (parentIndex !== undefined) err(`${where}.parent`, 'a nested provider takes the provider it is nested under as its parent')
      else if (v.parent !== null && typeof v.parent !== 'string') err(`${where}.parent`, 'expected a provider name or uuid, or null')
      else p.parentRef = v.parent as string | null
    }
    p.parentIndex = parentIndex
    if ('inventories' in v) p.inventories = parseInventories(v.inventories, `${where}.inventories`, err)
    if ('traits' in v) p.traits = nameList(v.traits, `${where}.traits`, false, err).sort()
    if ('aggregates' in v) {
      if (v.aggregates !== null && !Array.isArray(v.aggregates)) err(`${where}.aggregates`, 'expected a list of aggregate uuids or names')
      else {
        const list = (v.aggregates ?? []) as unknown[]
        p.aggregates = []
        list.forEach((a, i) => {
          if (typeof a !== 'string' || !a) err(`${where}.aggregates[${i}]`, 'expected an aggregate uuid or name')
          else p.aggregates!.push(a)
        })
      }
    }
    const index = out.providers.length
    out.providers.push(p)
    if (v.children !== undefined && v.children !== null) {
      if (!Array.isArray(v.children)) err(`${where}.children`, 'expected a list of providers')
      else v.children.forEach((c, i) => walk(c, `${where}.children[${i}]`, index))
    }
  }
  if (data.providers !== undefined && data.providers !== null) {
    if (!Array.isArray(data.providers)) err('providers', 'expected a list of providers')
    else data.providers.forEach((p, i) => walk(p, `providers[${i}]`, undefined))
  }
  if (errors.length) {
    const shown = errors.slice(0, 20).map((e) => `  ${e}`)
    if (errors.length > 20) shown.push(`  ... and ${errors.length - 20} more`)
    throw usageError(`${file}: ${errors.length} problem(s):\n${shown.join('\n')}`)
  }
  return out
}
