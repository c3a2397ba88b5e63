/**
 * `placemat apply`: a YAML (or JSON) file declares providers (nested trees), their
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
import {Errors} from '@oclif/core'
type InventoryField = (typeof INVENTORY_FIELDS)[number]
import {ApiError, type PlacementClient} from '../../client/client.js'
import {INVENTORY_DEFAULTS, INVENTORY_FIELDS} from '../../core/inventories.js'
import {aggregateUuid, providerUuid} from '../../core/uuids.js'
import {canonical, isUuidLike, mapLimit} from './providers.js'
import {PLACEMAT_API, type CloudView, type FullInventory, type ProviderState} from './cloud-view.js'
import {readDocument} from './document.js'
import type {Backend} from '../backend/backend.js'

// ---- the file ---------------------------------------------------------------------

interface RawProvider {
  where: string
  name: string
  uuid?: string
  /** uuid or name; null: a root; undefined: not managed. */
  parentRef?: string | null
  /** Index (in the flat list) of the provider it is nested under. */
  parentIndex?: number
  inventories?: Record<string, FullInventory>
  traits?: string[]
  aggregates?: string[]
}

export interface ApplyFile {
  resourceClasses: string[]
  traits: string[]
  aggregateNames: Map<string, string>
  /** Depth-first, parents before their nested children. */
  providers: RawProvider[]
}

export class ApplyFileError extends Errors.CLIError {
  constructor(message: string) {
    super(message, {exit: 2})
  }
}

const NAME_RE = /^[A-Z0-9_]+$/
const PROVIDER_KEYS = new Set(['name', 'uuid', 'parent', 'inventories', 'traits', 'aggregates', 'children'])
const TOP_KEYS = new Set(['providers', 'resource_classes', 'traits', 'aggregates'])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export function readApplyFile(file: string): ApplyFile {
  const data = readDocument(file, {fail: (m) => new ApplyFileError(m), jsonFastPath: true, yaml: {maxAliasCount: -1}})
  return parseApplyFile(data ?? {}, file)
}

/** Checks the shape of a parsed file and fills inventory defaults; names stay unresolved. */
export function parseApplyFile(data: unknown, file = 'file'): ApplyFile {
  const errors: string[] = []
  const err = (where: string, msg: string) => errors.push(`${where}: ${msg}`)
  const out: ApplyFile = {resourceClasses: [], traits: [], aggregateNames: new Map(), providers: []}
  if (!isObject(data)) throw new ApplyFileError(`${file}: expected a mapping with providers, resource_classes, traits, aggregates`)
  for (const k of Object.keys(data)) if (!TOP_KEYS.has(k)) err(k, `unknown key; expected one of ${[...TOP_KEYS].join(', ')}`)

  const nameList = (v: unknown, where: string, custom: boolean): string[] => {
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
  out.resourceClasses = nameList(data.resource_classes, 'resource_classes', true)
  out.traits = nameList(data.traits, 'traits', true)
  if (data.aggregates !== undefined && data.aggregates !== null) {
    if (!isObject(data.aggregates)) err('aggregates', 'expected a mapping of aggregate name to uuid')
    else
      for (const [name, uuid] of Object.entries(data.aggregates)) {
        if (typeof uuid !== 'string' || !isUuidLike(uuid)) err(`aggregates.${name}`, `'${uuid}' is not a uuid`)
        else out.aggregateNames.set(name, canonical(uuid))
      }
  }

  const parseInventories = (v: unknown, where: string): Record<string, FullInventory> | undefined => {
    if (v === null) return {}
    if (!isObject(v)) {
      err(where, 'expected a mapping of resource class to a total or to inventory fields')
      return undefined
    }
    const invs: Record<string, FullInventory> = {}
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
      if (ok) invs[rc] = {...INVENTORY_DEFAULTS, ...(fields as Record<string, number>)} as FullInventory
    }
    return invs
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
    const p: RawProvider = {where: `${where} (${v.name})`, name: v.name}
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
    if ('inventories' in v) p.inventories = parseInventories(v.inventories, `${where}.inventories`)
    if ('traits' in v) p.traits = nameList(v.traits, `${where}.traits`, false).sort()
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
    throw new ApplyFileError(`${file}: ${errors.length} problem(s):\n${shown.join('\n')}`)
  }
  return out
}

// ---- the plan ---------------------------------------------------------------------

export interface Desired {
  uuid: string
  name: string
  parent?: string | null
  inventories?: Record<string, FullInventory>
  traits?: string[]
  aggregates?: string[]
}

export interface InventoryDiff {
  added: Record<string, FullInventory>
  removed: string[]
  changed: Record<string, Partial<Record<InventoryField, [number, number]>>>
}

export interface SetDiff {
  added: string[]
  removed: string[]
}

export interface ProviderChange {
  action: 'create' | 'update' | 'delete'
  kind: 'provider'
  uuid: string
  name: string
  rename?: {from: string; to: string}
  parent?: {from: string | null; to: string | null}
  inventories?: InventoryDiff
  traits?: SetDiff
  aggregates?: SetDiff
  /** Only for create: the whole provider. */
  create?: Desired
}

export interface NameChange {
  action: 'create'
  kind: 'resource_class' | 'trait'
  name: string
}

export type Change = NameChange | ProviderChange

export interface Plan {
  summary: {create: number; update: number; delete: number; resource_classes: number; traits: number}
  changes: Change[]
  /** Internal: the operations in the order they must run (the stages, concatenated). */
  ops: PlanOp[]
  /**
   * The same operations by stage. Within a stage, `levels` must run one after another
   * (parents created before children, children deleted before parents); operations in
   * one level are independent, except per-provider writes, which chain generations.
   */
  stages: {
    names: PlanOp[]
    renames: PlanOp[]
    creates: PlanOp[][]
    reparents: PlanOp[]
    writes: PlanOp[][]
    deletes: PlanOp[][]
  }
  /** uuid -> name, for rendering (aggregate names from the file, provider names). */
  labels: Map<string, string>
}

export type PlanOp =
  | {op: 'ensure_resource_class'; name: string}
  | {op: 'ensure_trait'; name: string}
  | {op: 'create_provider'; uuid: string; name: string; parent_provider_uuid: string | null}
  | {op: 'update_provider'; uuid: string; name: string; parent_provider_uuid: string | null}
  | {op: 'delete_provider'; uuid: string}
  | {op: 'set_inventories'; uuid: string; inventories: Record<string, FullInventory>; generation?: number}
  | {op: 'set_traits'; uuid: string; traits: string[]; generation?: number}
  | {op: 'set_aggregates'; uuid: string; aggregates: string[]; generation?: number}

/** The plan cannot be applied as it stands (exit 4 for conflicts with allocations, 2 for the file). */
export class PlanError extends Errors.CLIError {
  constructor(message: string, exit: number) {
    super(message, {exit})
  }
}

export interface Catalog {
  classes: Set<string>
  traits: Set<string>
  /** The aggregates of placemat's racks, rows and rooms (none on plain Placement). */
  topologyAggregates: Set<string>
}

export async function loadCatalog(backend: Backend): Promise<Catalog> {
  const [rc, tr, topologyAggregates] = await Promise.all([
    backend.client.get<{resource_classes: {name: string}[]}>('/resource_classes'),
    backend.client.get<{traits: string[]}>('/traits'),
    backend.topologyAggregates(),
  ])
  return {classes: new Set(rc.resource_classes.map((c) => c.name)), traits: new Set(tr.traits), topologyAggregates}
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x))
const setDiff = (from: string[], to: string[]): SetDiff => {
  const f = new Set(from)
  const t = new Set(to)
  return {added: to.filter((x) => !f.has(x)).sort(), removed: from.filter((x) => !t.has(x)).sort()}
}

function inventoryDiff(from: Record<string, FullInventory>, to: Record<string, FullInventory>): InventoryDiff | undefined {
  const d: InventoryDiff = {added: {}, removed: [], changed: {}}
  let any = false
  for (const [rc, inv] of Object.entries(to)) {
    const cur = from[rc]
    if (!cur) {
      d.added[rc] = inv
      any = true
      continue
    }
    const fields: Partial<Record<InventoryField, [number, number]>> = {}
    for (const f of INVENTORY_FIELDS) {
      const a = Number(cur[f] ?? (f === 'total' ? 0 : INVENTORY_DEFAULTS[f as Exclude<InventoryField, 'total'>]))
      const b = Number(inv[f])
      // allocation_ratio is a float column: compare as Placement stores it (single precision is close enough).
      const same = f === 'allocation_ratio' ? Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)) : a === b
      if (!same) fields[f] = [a, b]
    }
    if (Object.keys(fields).length) {
      d.changed[rc] = fields
      any = true
    }
  }
  for (const rc of Object.keys(from)) {
    if (!(rc in to)) {
      d.removed.push(rc)
      any = true
    }
  }
  d.removed.sort()
  return any ? d : undefined
}

/**
 * Compares the file with the current state and returns the changes and the operations
 * to make them, in order: classes and traits, renames, creates (parents first),
 * re-parenting (shallowest first), inventories/traits/aggregates, deletes (deepest first).
 */
export function makePlan(file: ApplyFile, snap: CloudView, catalog: Catalog, opts: {prune: boolean}): Plan {
  const errors: string[] = []
  const current = snap.providers
  const byName = new Map<string, ProviderState>()
  for (const p of current.values()) byName.set(p.name, p)
  const labels = new Map<string, string>()
  for (const [name, uuid] of file.aggregateNames) labels.set(uuid, name)
  for (const p of current.values()) labels.set(p.uuid, p.name)

  // uuids and names of the file's providers
  const desired: Desired[] = []
  const fileByName = new Map<string, number>()
  const fileByUuid = new Map<string, number>()
  file.providers.forEach((raw, i) => {
    const uuid = raw.uuid ?? byName.get(raw.name)?.uuid ?? providerUuid(raw.name)
    if (fileByName.has(raw.name)) errors.push(`${raw.where}: name '${raw.name}' appears twice in the file`)
    if (fileByUuid.has(uuid)) errors.push(`${raw.where}: uuid ${uuid} appears twice in the file`)
    fileByName.set(raw.name, i)
    fileByUuid.set(uuid, i)
    desired.push({uuid, name: raw.name})
    labels.set(uuid, raw.name)
  })
  const resolveRef = (ref: string, where: string): string | undefined => {
    if (isUuidLike(ref)) {
      const u = canonical(ref)
      if (fileByUuid.has(u) || current.has(u)) return u
    }
    const i = fileByName.get(ref)
    if (i !== undefined) return desired[i].uuid
    const p = byName.get(ref)
    if (p) return p.uuid
    errors.push(`${where}: parent '${ref}' is neither in the file nor an existing provider`)
    return undefined
  }
  const aggRef = (ref: string) => (isUuidLike(ref) ? canonical(ref) : (file.aggregateNames.get(ref) ?? aggregateUuid(ref)))
  const neededClasses = new Set(file.resourceClasses)
  const neededTraits = new Set(file.traits)
  file.providers.forEach((raw, i) => {
    const d = desired[i]
    if (raw.parentIndex !== undefined) d.parent = desired[raw.parentIndex].uuid
    else if (raw.parentRef === null) d.parent = null
    else if (raw.parentRef !== undefined) d.parent = resolveRef(raw.parentRef, raw.where)
    if (d.parent === d.uuid) errors.push(`${raw.where}: a provider cannot be its own parent`)
    if (raw.inventories) {
      d.inventories = raw.inventories
      for (const rc of Object.keys(raw.inventories)) {
        if (catalog.classes.has(rc)) continue
        if (rc.startsWith('CUSTOM_')) neededClasses.add(rc)
        else errors.push(`${raw.where}: unknown resource class ${rc} (custom classes start with CUSTOM_)`)
      }
    }
    if (raw.traits) {
      d.traits = raw.traits
      for (const t of raw.traits) {
        if (catalog.traits.has(t)) continue
        if (t.startsWith('CUSTOM_')) neededTraits.add(t)
        else errors.push(`${raw.where}: unknown trait ${t} (custom traits start with CUSTOM_)`)
      }
    }
    if (raw.aggregates) {
      d.aggregates = [...new Set(raw.aggregates.map(aggRef))].sort()
      raw.aggregates.forEach((a) => !isUuidLike(a) && labels.set(aggRef(a), a))
    }
  })

  // The tree after the apply: each file provider's parent, and the others' as they are.
  const finalParent = new Map<string, string | null>()
  for (const p of current.values()) finalParent.set(p.uuid, p.parent_provider_uuid)
  for (const d of desired) finalParent.set(d.uuid, d.parent !== undefined ? d.parent : (current.get(d.uuid)?.parent_provider_uuid ?? null))
  const depth = new Map<string, number>()
  const depthOf = (uuid: string): number => {
    const known = depth.get(uuid)
    if (known !== undefined) return known
    const seen = new Set<string>()
    const chain: string[] = []
    let u: string | null | undefined = uuid
    while (u && !depth.has(u)) {
      if (seen.has(u)) {
        errors.push(`the providers ${chain.map((c) => labels.get(c) ?? c).join(' -> ')} would form a loop`)
        for (const c of chain) depth.set(c, 0)
        return 0
      }
      seen.add(u)
      chain.push(u)
      u = finalParent.get(u) ?? null
    }
    let d = u ? depth.get(u)! + 1 : 0
    for (let k = chain.length - 1; k >= 0; k--) depth.set(chain[k], d++)
    return depth.get(uuid)!
  }
  for (const d of desired) depthOf(d.uuid)

  const changes: ProviderChange[] = []
  const creates: Desired[] = []
  const renames: {d: Desired; from: string}[] = []
  const reparents: Desired[] = []
  for (const d of desired) {
    const cur = current.get(d.uuid)
    if (!cur) {
      const holder = byName.get(d.name)
      if (holder) errors.push(`provider '${d.name}' exists with uuid ${holder.uuid}, not ${d.uuid} as the file says`)
      creates.push(d)
      changes.push({action: 'create', kind: 'provider', uuid: d.uuid, name: d.name, create: d})
      continue
    }
    const ch: ProviderChange = {action: 'update', kind: 'provider', uuid: d.uuid, name: d.name}
    if (cur.name !== d.name) {
      ch.rename = {from: cur.name, to: d.name}
      renames.push({d, from: cur.name})
    }
    if (d.parent !== undefined && d.parent !== cur.parent_provider_uuid) {
      ch.parent = {from: cur.parent_provider_uuid, to: d.parent}
      reparents.push(d)
    }
    if (d.inventories) {
      const diff = inventoryDiff(cur.inventories, d.inventories)
      if (diff) {
        ch.inventories = diff
        const inUse = diff.removed.filter((rc) => (cur.usages[rc] ?? 0) > 0)
        if (inUse.length) {
          errors.push(
            `cannot remove ${inUse.map((rc) => `${rc} (${cur.usages[rc]} in use)`).join(', ')} from provider ${cur.name} (${cur.uuid}): it has allocations`,
          )
        }
      }
    }
    if (d.traits && !sameSet(cur.traits, d.traits)) ch.traits = setDiff(cur.traits, d.traits)
    if (d.aggregates) {
      // A host's rack, row and room belong to the topology (topology apply, rack add/remove):
      // the file's list is the rest of its aggregates.
      const kept = cur.aggregates.filter((a) => catalog.topologyAggregates.has(a) && !d.aggregates!.includes(a))
      if (kept.length) d.aggregates = [...d.aggregates, ...kept].sort()
      if (!sameSet(cur.aggregates, d.aggregates)) ch.aggregates = setDiff(cur.aggregates, d.aggregates)
    }
    if (ch.rename || ch.parent || ch.inventories || ch.traits || ch.aggregates) changes.push(ch)
  }

  // Renames: a name may only be taken once its holder has given it up.
  const renameOrder: {d: Desired; from: string}[] = []
  {
    const pending = new Map(renames.map((r) => [r.d.uuid, r]))
    const visiting = new Set<string>()
    const visit = (r: {d: Desired; from: string}) => {
      if (!pending.has(r.d.uuid)) return
      if (visiting.has(r.d.uuid)) {
        errors.push(`renaming '${r.from}' to '${r.d.name}' is part of a cycle of renames; rename through a temporary name`)
        pending.delete(r.d.uuid)
        return
      }
      visiting.add(r.d.uuid)
      const holder = byName.get(r.d.name)
      if (holder && holder.uuid !== r.d.uuid) {
        const holderRename = pending.get(holder.uuid)
        if (holderRename) visit(holderRename)
        else if (!renames.some((x) => x.d.uuid === holder.uuid)) {
          errors.push(`cannot rename '${r.from}' to '${r.d.name}': provider ${holder.uuid} has that name (rename or delete it first)`)
        }
      }
      visiting.delete(r.d.uuid)
      if (pending.delete(r.d.uuid)) renameOrder.push(r)
    }
    for (const r of renames) visit(r)
  }

  // Prune: providers neither in the file nor above one that stays.
  const deletes: ProviderState[] = []
  const deleteDepth = new Map<string, number>()
  if (opts.prune) {
    const keep = new Set<string>()
    for (const d of desired) {
      let u: string | null | undefined = d.uuid
      while (u && !keep.has(u)) {
        keep.add(u)
        u = finalParent.get(u)
      }
    }
    for (const p of current.values()) if (!keep.has(p.uuid)) deletes.push(p)
    const inUse = deletes.filter((p) => Object.values(p.usages).some((n) => n > 0))
    if (inUse.length) {
      const list = inUse.slice(0, 10).map((p) => `${p.name} (${p.uuid})`)
      if (inUse.length > 10) list.push(`and ${inUse.length - 10} more`)
      errors.push(`--prune would delete ${inUse.length} provider(s) that have allocations: ${list.join(', ')}`)
    }
    // Deepest first, by the current tree.
    const curDepth = (p: ProviderState) => {
      let n = 0
      let u = p.parent_provider_uuid
      while (u && n < 1000) {
        n++
        u = current.get(u)?.parent_provider_uuid ?? null
      }
      return n
    }
    for (const p of deletes) deleteDepth.set(p.uuid, curDepth(p))
    deletes.sort((a, b) => deleteDepth.get(b.uuid)! - deleteDepth.get(a.uuid)!)
    for (const p of deletes) changes.push({action: 'delete', kind: 'provider', uuid: p.uuid, name: p.name})
  }

  if (errors.length) {
    const allocationConflict = errors.some((e) => e.includes('allocations'))
    const shown = errors.slice(0, 20).map((e) => `  ${e}`)
    if (errors.length > 20) shown.push(`  ... and ${errors.length - 20} more`)
    throw new PlanError(`the file cannot be applied (nothing was changed):\n${shown.join('\n')}`, allocationConflict ? 4 : 2)
  }

  // ---- operations
  const classes = [...neededClasses].filter((c) => !catalog.classes.has(c)).sort()
  const traits = [...neededTraits].filter((t) => !catalog.traits.has(t)).sort()
  const names: PlanOp[] = [
    ...classes.map((name) => ({op: 'ensure_resource_class' as const, name})),
    ...traits.map((name) => ({op: 'ensure_trait' as const, name})),
  ]
  const renameOps: PlanOp[] = renameOrder.map(({d}) => ({
    op: 'update_provider',
    uuid: d.uuid,
    name: d.name,
    parent_provider_uuid: current.get(d.uuid)!.parent_provider_uuid,
  }))
  const byLevel = <T>(items: T[], level: (t: T) => number, descending = false): T[][] => {
    const groups = new Map<number, T[]>()
    for (const t of items) {
      const l = level(t)
      let g = groups.get(l)
      if (!g) groups.set(l, (g = []))
      g.push(t)
    }
    return [...groups.keys()].sort((a, b) => (descending ? b - a : a - b)).map((l) => groups.get(l)!)
  }
  const createOps: PlanOp[][] = byLevel(creates, (d) => depth.get(d.uuid)!).map((level) =>
    level.map((d) => ({op: 'create_provider' as const, uuid: d.uuid, name: d.name, parent_provider_uuid: d.parent ?? null})),
  )
  reparents.sort((a, b) => depth.get(a.uuid)! - depth.get(b.uuid)!)
  const reparentOps: PlanOp[] = reparents.map((d) => ({op: 'update_provider', uuid: d.uuid, name: d.name, parent_provider_uuid: d.parent ?? null}))
  const writes: PlanOp[][] = []
  for (const ch of changes) {
    if (ch.action === 'delete') continue
    const d = ch.create ?? desired[fileByUuid.get(ch.uuid)!]
    const cur = current.get(ch.uuid)
    // The first write to an existing provider carries the generation the plan was made on.
    let generation: number | undefined = cur?.generation
    const gen = () => {
      const g = generation
      generation = undefined
      return g === undefined ? {} : {generation: g}
    }
    const isNew = ch.action === 'create'
    const mine: PlanOp[] = []
    if (d.inventories && (isNew ? Object.keys(d.inventories).length : ch.inventories)) {
      mine.push({op: 'set_inventories', uuid: d.uuid, inventories: d.inventories, ...gen()})
    }
    if (d.traits && (isNew ? d.traits.length : ch.traits)) mine.push({op: 'set_traits', uuid: d.uuid, traits: d.traits, ...gen()})
    if (d.aggregates && (isNew ? d.aggregates.length : ch.aggregates)) {
      mine.push({op: 'set_aggregates', uuid: d.uuid, aggregates: d.aggregates, ...gen()})
    }
    if (mine.length) writes.push(mine)
  }
  const deleteOps: PlanOp[][] = byLevel(deletes, (p) => deleteDepth.get(p.uuid)!, true).map((level) =>
    level.map((p) => ({op: 'delete_provider' as const, uuid: p.uuid})),
  )
  const stages = {names, renames: renameOps, creates: createOps, reparents: reparentOps, writes, deletes: deleteOps}
  const ops: PlanOp[] = [...names, ...renameOps, ...createOps.flat(), ...reparentOps, ...writes.flat(), ...deleteOps.flat()]

  const nameChanges: NameChange[] = [
    ...classes.map((name) => ({action: 'create' as const, kind: 'resource_class' as const, name})),
    ...traits.map((name) => ({action: 'create' as const, kind: 'trait' as const, name})),
  ]
  return {
    summary: {
      create: creates.length,
      update: changes.filter((c) => c.action === 'update').length,
      delete: deletes.length,
      resource_classes: classes.length,
      traits: traits.length,
    },
    changes: [...nameChanges, ...changes],
    ops,
    stages,
    labels,
  }
}

export const planIsEmpty = (plan: Plan) => plan.ops.length === 0

// ---- rendering ---------------------------------------------------------------------

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

export function summaryLine(plan: Plan): string {
  const s = plan.summary
  if (planIsEmpty(plan)) return 'No changes: everything in the file is up to date.'
  const parts = [`${s.create} to create, ${s.update} to update, ${s.delete} to delete`]
  const extra: string[] = []
  if (s.resource_classes) extra.push(plural(s.resource_classes, 'resource class', 'resource classes'))
  if (s.traits) extra.push(plural(s.traits, 'trait'))
  if (extra.length) parts.push(`${extra.join(' and ')} to create`)
  return `Plan: providers ${parts[0]}${parts[1] ? `; ${parts[1]}` : ''}.`
}

const fmtInv = (inv: FullInventory): string => {
  const extras = INVENTORY_FIELDS.filter((f) => f !== 'total' && inv[f] !== INVENTORY_DEFAULTS[f as Exclude<InventoryField, 'total'>]).map(
    (f) => `${f}=${inv[f]}`,
  )
  return extras.length ? `${inv.total}(${extras.join(',')})` : String(inv.total)
}

/** One line per change: "+" create, "~" update, "-" delete. */
export function planLines(plan: Plan): string[] {
  const label = (uuid: string | null | undefined) => (uuid ? (plan.labels.get(uuid) ?? uuid) : '(root)')
  const lines: string[] = []
  for (const change of plan.changes) {
    if (change.kind === 'resource_class') lines.push(`+ resource class ${change.name}`)
    else if (change.kind === 'trait') lines.push(`+ trait ${change.name}`)
    if (change.kind !== 'provider') continue
    const ch = change
    if (ch.action === 'delete') lines.push(`- provider ${ch.name} ${ch.uuid}`)
    else if (ch.action === 'create') {
      const d = ch.create!
      const parts = [`+ provider ${d.name} ${d.uuid}`]
      if (d.parent) parts.push(`parent=${label(d.parent)}`)
      const inv = Object.entries(d.inventories ?? ({} as Record<string, FullInventory>))
      if (inv.length) parts.push(`inventories=${inv.map(([rc, i]) => `${rc}:${fmtInv(i)}`).join(',')}`)
      if (d.traits?.length) parts.push(`traits=${d.traits.join(',')}`)
      if (d.aggregates?.length) parts.push(`aggregates=${d.aggregates.map(label).join(',')}`)
      lines.push(parts.join(' '))
    } else {
      const parts: string[] = []
      if (ch.rename) parts.push(`name ${ch.rename.from} -> ${ch.rename.to}`)
      if (ch.parent) parts.push(`parent ${label(ch.parent.from)} -> ${label(ch.parent.to)}`)
      if (ch.inventories) {
        const i = ch.inventories
        for (const [rc, inv] of Object.entries(i.added)) parts.push(`+${rc}:${fmtInv(inv)}`)
        for (const rc of i.removed) parts.push(`-${rc}`)
        for (const [rc, fields] of Object.entries(i.changed)) {
          parts.push(`${rc} ${Object.entries(fields).map(([f, [a, b]]) => `${f} ${a} -> ${b}`).join(', ')}`)
        }
      }
      if (ch.traits) parts.push(`traits ${[...ch.traits.added.map((t) => `+${t}`), ...ch.traits.removed.map((t) => `-${t}`)].join(' ')}`)
      if (ch.aggregates) {
        parts.push(
          `aggregates ${[...ch.aggregates.added.map((a) => `+${label(a)}`), ...ch.aggregates.removed.map((a) => `-${label(a)}`)].join(' ')}`,
        )
      }
      lines.push(`~ provider ${ch.name} ${ch.uuid}: ${parts.join('; ')}`)
    }
  }
  return lines
}

/** The plan as --json/--yaml print it (no internals). */
export function planDocument(plan: Plan) {
  return {
    summary: plan.summary,
    changes: plan.changes.map((c) => {
      if (c.kind !== 'provider' || !c.create) return c
      const {create, ...rest} = c
      return {...rest, parent_provider_uuid: create.parent ?? null, inventories: create.inventories, traits: create.traits, aggregates: create.aggregates}
    }),
  }
}

// ---- applying ---------------------------------------------------------------------

export interface ApplyProgress {
  (done: number, total: number, label: string): void
}

/** On a placemat endpoint: every operation in one transaction. */
export async function applyBatch(client: PlacementClient, plan: Plan, progress?: ApplyProgress): Promise<number> {
  progress?.(0, 1, `applying ${plan.ops.length} operations in one transaction`)
  await client.post(`${PLACEMAT_API}/batch`, {operations: plan.ops})
  progress?.(1, 1, `applied ${plan.ops.length} operations in one transaction`)
  return 1
}

/**
 * On a plain Placement endpoint: the operations as standard calls, in stages (classes and
 * traits, renames, creates level by level, re-parenting, per-provider writes, deletes
 * level by level), with `concurrency` calls in flight within a stage. Stops at the first
 * failure; the calls made so far stay made (apply again to finish).
 */
export async function applyStandard(client: PlacementClient, plan: Plan, concurrency = 16, progress?: ApplyProgress): Promise<number> {
  const total = plan.ops.length
  let done = 0
  const tick = () => progress?.(++done, total, `${done}/${total} calls`)
  progress?.(0, total, `0/${total} calls`)
  const rp = (uuid: string) => `/resource_providers/${uuid}`
  const run = async (o: PlanOp, generations: Map<string, number>) => {
    switch (o.op) {
      case 'ensure_resource_class':
        await client.put(`/resource_classes/${o.name}`)
        break
      case 'ensure_trait':
        await client.put(`/traits/${o.name}`)
        break
      case 'create_provider': {
        const body = await client.post<{generation?: number}>('/resource_providers', {
          uuid: o.uuid,
          name: o.name,
          ...(o.parent_provider_uuid ? {parent_provider_uuid: o.parent_provider_uuid} : {}),
        })
        generations.set(o.uuid, body?.generation ?? 0)
        break
      }
      case 'update_provider':
        await client.put(rp(o.uuid), {name: o.name, parent_provider_uuid: o.parent_provider_uuid})
        break
      case 'delete_provider':
        await client.delete(rp(o.uuid))
        break
      case 'set_inventories':
      case 'set_traits':
      case 'set_aggregates': {
        const generation = o.generation ?? generations.get(o.uuid)
        if (generation === undefined) throw new Error(`no generation known for provider ${o.uuid}`)
        const [path, body] =
          o.op === 'set_inventories'
            ? [`${rp(o.uuid)}/inventories`, {inventories: o.inventories, resource_provider_generation: generation}]
            : o.op === 'set_traits'
              ? [`${rp(o.uuid)}/traits`, {traits: o.traits, resource_provider_generation: generation}]
              : [`${rp(o.uuid)}/aggregates`, {aggregates: o.aggregates, resource_provider_generation: generation}]
        const res = await client.put<{resource_provider_generation?: number}>(path, body)
        generations.set(o.uuid, res?.resource_provider_generation ?? generation + 1)
        break
      }
    }
    tick()
  }
  const generations = new Map<string, number>()
  const parallel = (ops: PlanOp[]) => mapLimit(ops, concurrency, (o) => run(o, generations))
  const serial = async (ops: PlanOp[]) => {
    for (const o of ops) await run(o, generations)
  }
  const st = plan.stages
  await parallel(st.names)
  await serial(st.renames)
  for (const level of st.creates) await parallel(level)
  await serial(st.reparents)
  // Each provider's writes in order (they chain its generation), providers in parallel.
  await mapLimit(st.writes, concurrency, serial)
  for (const level of st.deletes) await parallel(level)
  return total
}

/** A 409 from the batch: the state moved since the plan was read. */
export function isStalePlan(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409 && err.code === 'placement.concurrent_update'
}
