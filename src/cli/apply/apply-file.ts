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
 *   rooms: [...]                               # and rows, racks: a layout, as `topology
 *                                              # apply` takes it, applied after the providers
 *
 * inventories, traits and aggregates are managed only when the key is there (then they
 * are the provider's whole set: `traits: []` clears them).
 */
import {INVENTORY_DEFAULTS, INVENTORY_FIELDS} from '../../core/placement/inventories.js'
import type {ApplyFile, DeclaredProvider, InventoryField} from '../../core/apply-plan/types.js'
import type {Inventory} from '../../core/state/state.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import {usageError} from '../failure.js'
import {openDocument} from '../formats/document.js'
import {checkLayout, layoutBody} from '../topology/layout-file.js'
import type {Layout} from '../../core/topology.js'

export type {ApplyFile}

/**
 * A datacenter's one file: what `placemat apply` makes of providers, and the racks, rows and
 * rooms `placemat topology apply` takes (under the layout file's own keys), applied after them.
 * `layout` is there when the file has any of the layout's keys.
 */
export type DatacenterFile = ApplyFile & {layout?: Layout}

const NAME_RE = /^[A-Z0-9_]+$/
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** What the daemon refuses in any string of a body; in unicode mode a surrogate pair is one code point, so only a lone half matches. */
const UNSTORABLE = /\0|[\uD800-\uDFFF]/u
const PROVIDER_KEYS = new Set(['name', 'uuid', 'parent', 'inventories', 'traits', 'aggregates', 'children'])
/** The keys of an apply file that are its own (not the layout's). */
export const APPLY_KEYS = ['providers', 'resource_classes', 'traits', 'aggregates'] as const
/** The layout's keys an apply file takes (not its generation: the layout is applied at the topology's generation of the moment). */
const LAYOUT_PART = ['rooms', 'rows', 'racks']
const TOP_KEYS = new Set<string>([...APPLY_KEYS, ...LAYOUT_PART])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Reads an apply file ("-" for stdin) and checks its shape (exit 2 when wrong). JSON is read
 * incrementally, provider by provider, so only the declared providers are held, never the
 * file's text; YAML is parsed whole.
 */
export async function readApplyFile(file: string): Promise<DatacenterFile> {
  const doc = await openDocument(file, {
    streamed: ['providers'],
    notAMapping: `expected a mapping with ${[...TOP_KEYS].join(', ')}`,
    yaml: {maxAliasCount: -1},
  })
  if (doc.kind === 'yaml') return parseApplyFile(doc.data ?? {}, file)
  const reader = new ApplyFileReader(file)
  for await (const m of doc.members) {
    if ('element' in m) reader.provider(m.element, m.index)
    else reader.member(m.key, m.value)
  }
  return reader.finish()
}

type Problem = (where: string, msg: string) => void

/** A list of class or trait names (custom ones only where they are to be created). */
function nameList(v: unknown, where: string, custom: boolean, err: Problem, removable = false): string[] {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) {
    err(where, 'expected a list of names')
    return []
  }
  const names: string[] = []
  v.forEach((n, i) => {
    // A provider's traits may name a compute-owned one as `!TRAIT`: to be removed.
    const name = removable && typeof n === 'string' && n.startsWith('!COMPUTE_') ? n.slice(1) : n
    if (typeof name !== 'string' || !NAME_RE.test(name))
      err(
        `${where}[${i}]`,
        `'${n}' is not a valid name (A-Z, 0-9, _${removable ? '; !COMPUTE_... removes a trait the compute service set' : ''})`,
      )
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
export function parseApplyFile(data: unknown, file = 'file'): DatacenterFile {
  if (!isObject(data)) throw usageError(`${file}: expected a mapping with ${[...TOP_KEYS].join(', ')}`)
  const reader = new ApplyFileReader(file)
  for (const [key, value] of Object.entries(data)) {
    if (key === 'providers' && Array.isArray(value)) value.forEach((p, i) => reader.provider(p, i))
    else reader.member(key, value)
  }
  return reader.finish()
}

/**
 * One object for equal inventories and equal name lists: the providers of a big cloud are
 * mostly alike, and a million copies of the same three inventory records cost a gigabyte.
 * Nothing downstream changes what a file declares, so sharing is safe.
 */
class SharedValues {
  private readonly values = new Map<string, unknown>()

  /** The value kept for `key` (which names its kind: keys of two kinds never meet), else `value`, kept for next time while there are few. */
  get<T>(value: T, key: string): T {
    const kept = this.values.get(key)
    if (kept !== undefined) return kept as T
    if (this.values.size < MAX_SHARED) this.values.set(key, value)
    return value
  }
}

/** Distinct shapes kept for sharing; a file with more shares the first ones. */
const MAX_SHARED = 10_000

const inventoriesKey = (invs: Record<string, Inventory>) =>
  Object.entries(invs)
    .map(([rc, inv]) => `${rc}:${INVENTORY_FIELDS.map((f) => inv[f]).join(',')}`)
    .join(';')

/** Problems kept for the message; the rest are only counted. */
const SHOWN_PROBLEMS = 20

/**
 * An apply file checked as it comes: top-level members, and the providers one at a time
 * (each with its nested children), in file order.
 */
class ApplyFileReader {
  private readonly out: DatacenterFile = {resourceClasses: [], traits: [], aggregateNames: new Map(), providers: []}
  /** The layout's keys as the file gives them, checked when the whole file is read. */
  private readonly layout: Record<string, unknown> = {}
  private hasLayout = false
  private readonly problems: string[] = []
  private problemCount = 0
  private readonly shared = new SharedValues()
  private readonly err: Problem = (where, msg) => {
    if (this.problemCount++ < SHOWN_PROBLEMS) this.problems.push(`${where}: ${msg}`)
  }

  constructor(private readonly file: string) {}

  member(key: string, value: unknown): void {
    const err = this.err
    switch (key) {
      case 'resource_classes':
        this.out.resourceClasses = nameList(value, 'resource_classes', true, err)
        return
      case 'traits':
        this.out.traits = nameList(value, 'traits', true, err)
        return
      case 'aggregates':
        if (value === undefined || value === null) return
        if (!isObject(value)) err('aggregates', 'expected a mapping of aggregate name to uuid')
        else
          for (const [name, uuid] of Object.entries(value)) {
            if (typeof uuid !== 'string' || !isUuidLike(uuid)) err(`aggregates.${name}`, `'${uuid}' is not a uuid`)
            else this.out.aggregateNames.set(name, canonical(uuid))
          }
        return
      case 'providers':
        // A list comes provider by provider; here only what is not a list.
        if (value !== undefined && value !== null) err('providers', 'expected a list of providers')
        return
      case 'rooms':
      case 'rows':
      case 'racks':
        this.layout[key] = value
        this.hasLayout = true
        return
      case 'generation':
        err(key, 'apply applies the layout at the topology generation it finds; to pin one, use placemat topology apply')
        return
      default:
        err(key, `unknown key; expected one of ${[...TOP_KEYS].join(', ')}`)
    }
  }

  /** The `index`th provider of the top-level list, with its nested children. */
  provider(v: unknown, index: number): void {
    this.walk(v, `providers[${index}]`, undefined)
  }

  private walk(v: unknown, where: string, parentIndex: number | undefined): void {
    const err = this.err
    if (!isObject(v)) {
      err(where, 'expected a provider mapping')
      return
    }
    for (const k of Object.keys(v))
      if (!PROVIDER_KEYS.has(k)) err(`${where}.${k}`, `unknown key; expected one of ${[...PROVIDER_KEYS].join(', ')}`)
    if (typeof v.name !== 'string' || !v.name.trim() || v.name.length > 200) {
      err(`${where}.name`, 'a name (1-200 characters) is required')
      return
    }
    if (UNSTORABLE.test(v.name)) {
      err(`${where}.name`, 'a name cannot hold a NUL character or a lone UTF-16 surrogate (no database stores them)')
      return
    }
    // Joined, not concatenated: a flat string, where a template would keep its pieces.
    const p: DeclaredProvider = {where: [where, ' (', v.name, ')'].join(''), name: v.name}
    if (v.uuid !== undefined) {
      if (typeof v.uuid !== 'string' || !isUuidLike(v.uuid)) err(`${where}.uuid`, `'${v.uuid}' is not a uuid`)
      else p.uuid = CANONICAL_UUID.test(v.uuid) ? v.uuid : canonical(v.uuid)
    }
    if ('parent' in v) {
      if (parentIndex !== undefined) err(`${where}.parent`, 'a nested provider takes the provider it is nested under as its parent')
      else if (v.parent !== null && typeof v.parent !== 'string') err(`${where}.parent`, 'expected a provider name or uuid, or null')
      else p.parentRef = v.parent as string | null
    }
    p.parentIndex = parentIndex
    if ('inventories' in v) {
      const invs = parseInventories(v.inventories, `${where}.inventories`, err)
      p.inventories = invs && this.shared.get(invs, `inventories ${inventoriesKey(invs)}`)
    }
    if ('traits' in v) {
      const traits = nameList(v.traits, `${where}.traits`, false, err, true).sort()
      p.traits = this.shared.get(traits, `traits ${traits.join(',')}`)
    }
    if ('aggregates' in v) {
      if (v.aggregates !== null && !Array.isArray(v.aggregates)) err(`${where}.aggregates`, 'expected a list of aggregate uuids or names')
      else {
        const list = (v.aggregates ?? []) as unknown[]
        p.aggregates = []
        list.forEach((a, i) => {
          if (typeof a !== 'string' || !a) err(`${where}.aggregates[${i}]`, 'expected an aggregate uuid or name')
          else p.aggregates!.push(a)
        })
        p.aggregates = this.shared.get(p.aggregates, `aggregates ${p.aggregates.join(',')}`)
      }
    }
    const index = this.out.providers.length
    this.out.providers.push(p)
    if (v.children !== undefined && v.children !== null) {
      if (!Array.isArray(v.children)) err(`${where}.children`, 'expected a list of providers')
      else v.children.forEach((c, i) => this.walk(c, `${where}.children[${i}]`, index))
    }
  }

  finish(): DatacenterFile {
    if (this.hasLayout) this.out.layout = layoutBody(checkLayout(this.layout, this.err))
    if (this.problemCount) {
      const shown = this.problems.map((e) => `  ${e}`)
      if (this.problemCount > SHOWN_PROBLEMS) shown.push(`  ... and ${this.problemCount - SHOWN_PROBLEMS} more`)
      throw usageError(`${this.file}: ${this.problemCount} problem(s):\n${shown.join('\n')}`)
    }
    return this.out
  }
}
