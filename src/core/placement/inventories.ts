/**
 * Inventories of a resource provider: what it offers, per resource class.
 *
 * Behaviour follows Placement 8.0.0 (handlers/inventory.py, objects/resource_provider.py):
 *  - every successful write bumps the provider generation, even when nothing changed
 *    (PUT of identical values, DELETE of an already empty inventory);
 *  - deleting the inventory of a class that has allocations is refused (409), while
 *    updating an inventory so that its capacity drops below current usage is allowed
 *    (Placement only logs a warning);
 *  - capacity = int((total - reserved) * allocation_ratio) must be > 0 before 1.26 and
 *    >= 0 from 1.26.
 * Everything is validated before anything is mutated, so a failure changes nothing.
 */
import {ErrorCode, PlacementError, badRequest, notFound} from '../errors.js'
import {getProvider} from './providers.js'
import type {Inventory, Provider, State} from '../state/state.js'
import {capacityOf} from '../inventory-capacity.js'

/** Placement's db_const.MAX_INT, the default max_unit. */
export const MAX_INT = 0x7fffffff

export const INVENTORY_FIELDS = ['total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'] as const

export const INVENTORY_DEFAULTS: Omit<Inventory, 'total'> = {
  reserved: 0,
  min_unit: 1,
  max_unit: MAX_INT,
  step_size: 1,
  allocation_ratio: 1.0,
}

/** Placement's db_const.SQL_SP_FLOAT_MAX, the greatest allocation_ratio. */
export const SQL_SP_FLOAT_MAX = 3.40282e38

/** The values Placement's inventory schema takes, per field (inventory.py's BASE_INVENTORY_SCHEMA). */
export const INVENTORY_LIMITS: Record<keyof Inventory, {min?: number; max: number}> = {
  total: {min: 1, max: MAX_INT},
  reserved: {min: 0, max: MAX_INT},
  min_unit: {min: 1, max: MAX_INT},
  max_unit: {min: 1, max: MAX_INT},
  step_size: {min: 1, max: MAX_INT},
  allocation_ratio: {max: SQL_SP_FLOAT_MAX},
}

/**
 * What a write of `inv` would be refused for, in an operator's words, every reason at once:
 * a field outside Placement's limits, or a capacity below zero (reserved above total, or a
 * negative allocation_ratio; reserved may equal total, as from microversion 1.26). Empty when
 * the inventory can be written.
 */
export function inventoryProblems(inv: Inventory): string[] {
  const out: string[] = []
  for (const f of INVENTORY_FIELDS) {
    const {min, max} = INVENTORY_LIMITS[f]
    const v = inv[f]
    if (min !== undefined && v < min) out.push(`${f} ${v} is below ${min}`)
    else if (v > max) out.push(`${f} ${v} is above ${max}`)
  }
  if (out.length) return out
  if (inv.reserved > inv.total) out.push(`reserved ${inv.reserved} is above total ${inv.total}`)
  else if (capacityOf(inv) < 0) out.push(`allocation_ratio ${inv.allocation_ratio} leaves a capacity below 0`)
  return out
}

/**
 * Why `value` cannot be an inventory's `field` (INVENTORY_LIMITS: a total below 1, a negative
 * reserved, ...), or null when it can: what a command line refuses while it parses. Whether the
 * inventory as a whole holds (reserved against total, capacity against usage) is another
 * question, asked of the whole record (inventoryProblems).
 */
export function inventoryFieldProblem(field: keyof Inventory, value: number, shown = String(value)): string | null {
  const {min, max} = INVENTORY_LIMITS[field]
  if (field !== 'allocation_ratio' && !Number.isInteger(value)) return `${field} must be an integer, not ${shown}`
  if (Number.isFinite(value) && (min === undefined || value >= min) && value <= max) return null
  return min === undefined ? `${field} must be a number of at most ${max}, not ${shown}` : `${field} must be ${min} to ${max}, not ${shown}`
}

/** Inventory fields as a request gives them (already schema-validated). */
/** An inventory as views show it: its fields, its capacity, and what is used of it. */
export interface InventoryView extends Inventory {
  capacity: number
  used: number
}

/** A provider's inventories as views show them, by class, in the provider's own order. */
export function inventoryViews(p: Provider): Record<string, InventoryView> {
  const out: Record<string, InventoryView> = {}
  for (const [rc, inv] of p.inventories) out[rc] = {...inv, capacity: capacityOf(inv), used: p.usages.get(rc) ?? 0}
  return out
}

export type InventoryInput = Partial<Inventory> & {total: number}

export interface CapacityOptions {
  /** Microversion 1.26+: reserved may equal total (capacity 0 is valid). */
  reservedCanEqualTotal: boolean
}

/** The fields besides total that differ from Placement's defaults (what a file or a line needs to say). */
export function nonDefaultFields(inv: Inventory): Array<Exclude<keyof Inventory, 'total'>> {
  return INVENTORY_FIELDS.filter((f): f is Exclude<keyof Inventory, 'total'> => f !== 'total' && inv[f] !== INVENTORY_DEFAULTS[f])
}

/** What replacing a provider's inventories loses: classes dropped, and fields that go back to their defaults. */
export interface InventoryReplacement {
  dropped: Array<{resource_class: string; total: number}>
  reset: Array<{resource_class: string; field: Exclude<keyof Inventory, 'total'>; from: number; to: number}>
}

/**
 * What writing `next` over `current` (a whole PUT of a provider's inventories) drops or resets:
 * each class of `current` missing from `next`, and each field of a class kept that goes from
 * another value to Placement's default.
 */
export function inventoryReplacement(
  current: Record<string, Partial<Inventory>>,
  next: Record<string, Partial<Inventory>>,
): InventoryReplacement {
  const out: InventoryReplacement = {dropped: [], reset: []}
  for (const [rc, was] of Object.entries(current)) {
    const will = next[rc]
    if (!will) {
      out.dropped.push({resource_class: rc, total: was.total ?? 0})
      continue
    }
    for (const field of INVENTORY_FIELDS) {
      if (field === 'total') continue
      const from = was[field] ?? INVENTORY_DEFAULTS[field]
      const to = will[field] ?? INVENTORY_DEFAULTS[field]
      if (from !== to && to === INVENTORY_DEFAULTS[field]) out.reset.push({resource_class: rc, field, from, to})
    }
  }
  return out
}

/** The stored record for an input: Placement's INVENTORY_DEFAULTS overlaid with the given fields. */
export function withDefaults(input: InventoryInput): Inventory {
  const inv: Inventory = {total: input.total, ...INVENTORY_DEFAULTS}
  for (const f of INVENTORY_FIELDS) if (input[f] !== undefined) inv[f] = input[f] as number
  return inv
}

/** The provider for the GET handlers, whose 404 repeats the cause after " : ". */
function providerForRead(s: State, uuid: string): Provider {
  const p = s.providers.get(uuid)
  if (!p) throw notFound(`No resource provider with uuid ${uuid} found : No resource provider with uuid ${uuid} found`)
  return p
}

function checkCapacity(p: Provider, rc: string, inv: Inventory, opts: CapacityOptions, prefix: string): void {
  const cap = capacityOf(inv)
  if (Number.isNaN(cap)) throw badRequest(`${prefix}: Bad inventory ${rc} for resource provider ${p.uuid}`)
  const bad = opts.reservedCanEqualTotal ? cap < 0 : cap <= 0
  if (!bad) return
  const why = opts.reservedCanEqualTotal ? 'greater than total' : 'greater than or equal to total'
  throw badRequest(`${prefix}: Invalid inventory for '${rc}' on resource provider '${p.uuid}'. The reserved value is ${why}.`)
}

/** True when some consumer holds an allocation of `rc` against `p`. */
export function classHasAllocations(p: Provider, rc: string): boolean {
  for (const amounts of p.allocations.values()) if (amounts.has(rc)) return true
  return false
}

/** The classes (by class id order, as Placement's GROUP BY yields them) among `classes` that have allocations. */
function inUse(s: State, p: Provider, classes: Iterable<string>): string[] {
  const used = [...classes].filter((rc) => classHasAllocations(p, rc))
  const id = (rc: string) => s.classes.get(rc)?.id ?? Number.MAX_SAFE_INTEGER
  return used.sort((a, b) => id(a) - id(b))
}

const inUseMessage = (classes: string[], uuid: string) => `Inventory for '${classes.join(', ')}' on resource provider '${uuid}' in use.`

function generationConflict(p: Provider, generation: number): void {
  if (p.generation !== generation) {
    throw new PlacementError(409, 'resource provider generation conflict', ErrorCode.CONCURRENT_UPDATE)
  }
}

// ---- reads -----------------------------------------------------------------

export function listInventories(s: State, uuid: string): {provider: Provider; inventories: Map<string, Inventory>} {
  const p = providerForRead(s, uuid)
  return {provider: p, inventories: p.inventories}
}

export function showInventory(s: State, uuid: string, rc: string): {provider: Provider; inventory: Inventory} {
  const p = providerForRead(s, uuid)
  const inv = p.inventories.get(rc)
  if (!inv) throw notFound(`No inventory of class ${rc} for ${uuid}`)
  return {provider: p, inventory: inv}
}

// ---- writes ----------------------------------------------------------------

export interface CreateInventoryInput extends InventoryInput {
  resource_class: string
  /** Accepted by the schema and ignored, as Placement does. */
  resource_provider_generation?: number
}

/** POST /resource_providers/{uuid}/inventories: adds one inventory (no generation check). */
export function createInventory(
  s: State,
  now: number,
  uuid: string,
  input: CreateInventoryInput,
  opts: CapacityOptions,
): {provider: Provider; inventory: Inventory} {
  const p = getProvider(s, uuid)
  const rc = input.resource_class
  const inv = withDefaults(input)
  const prefix = `Unable to create inventory for resource provider ${p.uuid}`
  checkCapacity(p, rc, inv, opts, prefix)
  if (!s.classes.has(rc)) throw badRequest(`${prefix}: No such resource class ${rc}.`)
  if (p.inventories.has(rc)) {
    throw new PlacementError(
      409,
      `Update conflict: (IntegrityError) UNIQUE constraint failed: inventories.resource_provider_id, ` +
        `inventories.resource_class_id (provider ${p.uuid}, resource class ${rc})`,
      ErrorCode.CONCURRENT_UPDATE,
    )
  }
  s.setInventory(p, rc, inv)
  s.bumpProvider(p, now)
  return {provider: p, inventory: inv}
}

export interface UpdateInventoryInput extends InventoryInput {
  resource_provider_generation: number
}

/** PUT /resource_providers/{uuid}/inventories/{rc}: replaces one existing inventory. */
export function updateInventory(
  s: State,
  now: number,
  uuid: string,
  rc: string,
  input: UpdateInventoryInput,
  opts: CapacityOptions,
): {provider: Provider; inventory: Inventory} {
  const p = getProvider(s, uuid)
  generationConflict(p, input.resource_provider_generation)
  const inv = withDefaults(input)
  checkCapacity(p, rc, inv, opts, `Unable to update inventory for resource provider ${p.uuid}`)
  if (!s.classes.has(rc)) throw notFound(`No such resource class ${rc}.`)
  if (!p.inventories.has(rc)) {
    throw badRequest(`No inventory record with resource class for resource provider ${p.uuid}: No inventory of class ${rc} found.`)
  }
  // Capacity below current usage is allowed: Placement only warns about it.
  s.setInventory(p, rc, inv)
  s.bumpProvider(p, now)
  return {provider: p, inventory: inv}
}

export interface SetInventoriesInput {
  resource_provider_generation: number
  inventories: Record<string, unknown>
}

/** PUT /resource_providers/{uuid}/inventories: replaces the whole inventory. */
export function setInventories(
  s: State,
  now: number,
  uuid: string,
  input: SetInventoriesInput,
  opts: CapacityOptions,
): {provider: Provider; inventories: Map<string, Inventory>} {
  const p = getProvider(s, uuid)
  generationConflict(p, input.resource_provider_generation)
  const wanted = new Map<string, Inventory>()
  for (const [rc, raw] of Object.entries(input.inventories)) {
    // Keys not matching the class pattern escape the schema; they can never name a class.
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || typeof (raw as InventoryInput).total !== 'number') {
      throw badRequest(`Bad inventory ${rc} for resource provider ${p.uuid}`)
    }
    wanted.set(rc, withDefaults(raw as InventoryInput))
  }
  for (const [rc, inv] of wanted) {
    checkCapacity(p, rc, inv, opts, `Unable to update inventory for resource provider ${p.uuid}`)
  }
  for (const rc of wanted.keys()) {
    if (!s.classes.has(rc)) {
      throw badRequest(`Unknown resource class in inventory for resource provider ${p.uuid}: No such resource class ${rc}.`)
    }
  }
  replaceInventories(s, now, p, wanted)
  return {provider: p, inventories: wanted}
}

/**
 * The replacement step of PUT /resource_providers/{uuid}/inventories (and of the
 * reshaper): refuses (409 inventory.inuse, "update conflict: ...") to drop a class that
 * has allocations, then replaces the whole inventory and bumps the generation.
 * Classes must already be known to exist.
 */
export function replaceInventories(s: State, now: number, p: Provider, wanted: Map<string, Inventory>): void {
  const toDelete = [...p.inventories.keys()].filter((rc) => !wanted.has(rc))
  const busy = inUse(s, p, toDelete)
  if (busy.length) {
    throw new PlacementError(409, `update conflict: ${inUseMessage(busy, p.uuid)}`, ErrorCode.INVENTORY_INUSE)
  }
  for (const rc of toDelete) s.deleteInventory(p, rc)
  for (const [rc, inv] of wanted) s.setInventory(p, rc, inv)
  s.shareInventories(p)
  s.bumpProvider(p, now)
}

/** DELETE /resource_providers/{uuid}/inventories/{rc}. */
export function deleteInventory(s: State, now: number, uuid: string, rc: string): Provider {
  const p = getProvider(s, uuid)
  if (!s.classes.has(rc)) throw notFound(`No inventory of class ${rc} found for delete: No such resource class ${rc}.`)
  if (classHasAllocations(p, rc)) {
    // Placement sends this one with the concurrent_update code.
    throw new PlacementError(409, `Unable to delete inventory of class ${rc}: ${inUseMessage([rc], p.uuid)}`, ErrorCode.CONCURRENT_UPDATE)
  }
  if (!p.inventories.has(rc)) {
    throw notFound(`No inventory of class ${rc} found for delete: No inventory of class ${rc} found for delete`)
  }
  s.deleteInventory(p, rc)
  s.bumpProvider(p, now)
  return p
}

/** DELETE /resource_providers/{uuid}/inventories (1.5+): removes every inventory. */
export function deleteAllInventories(s: State, now: number, uuid: string): Provider {
  const p = getProvider(s, uuid)
  const busy = inUse(s, p, p.inventories.keys())
  if (busy.length) throw new PlacementError(409, inUseMessage(busy, p.uuid), ErrorCode.INVENTORY_INUSE)
  for (const rc of [...p.inventories.keys()]) s.deleteInventory(p, rc)
  s.bumpProvider(p, now)
  return p
}
