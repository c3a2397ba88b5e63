/**
 * POST /reshaper (microversion 1.30): replaces the inventories of some providers and the
 * allocations of some consumers in one transaction, e.g. to move VGPU inventory and the
 * allocations against it from a compute node to new child providers.
 *
 * Follows Placement 8.0.0 (handlers/reshaper.py, objects/reshaper.py), step by step:
 *  1. every provider named in `inventories` must exist (400 resource_provider.not_found)
 *     and have the given generation (409 concurrent_update), checked provider by provider;
 *  2. consumers: generations and project/user (planConsumers, as POST /allocations);
 *  3. every provider named in the allocations must exist (checkProvidersExist);
 *  4. "interim" inventory: each provider with a non-empty new inventory gets the union of
 *     its current and new inventories (so allocations can move onto new classes before
 *     old ones are dropped) — an unknown class fails here (400 "malformed reshaper data");
 *  5. the allocations are replaced (applyAllocations: classes, constraints, capacity
 *     against the interim inventories; 409 "Unable to allocate inventory: ...");
 *  6. the final inventories replace the interim ones (replaceInventories: dropping a class
 *     that still has allocations is 409 inventory.inuse "update conflict: ...").
 * Provider generations move as Placement's do: +1 for the interim inventory (non-empty
 * ones only), +1 for each provider the allocations touch, +1 for the final inventory.
 *
 * Steps 1-4 are checked before anything changes. Steps 5 and 6 check against the
 * interim state, as Placement does inside its transaction: when they fail, the caller's
 * transaction (Store.write) throws the whole change away and reloads the State, so a
 * failed reshape never leaves anything behind.
 */
import {applyAllocations, checkProvidersExist, planConsumers, type ConsumerWrite} from './allocations.js'
import {ErrorCode, PlacementError, badRequest, conflict} from '../errors.js'
import {replaceInventories, withDefaults, type InventoryInput} from './inventories.js'
import type {Inventory, Provider, State} from '../state/state.js'

type Resources = Record<string, number>

/** One consumer's entry in the reshaper body (as POST /allocations from 1.28). */
export interface ReshaperConsumer {
  allocations: Record<string, {resources: Resources; generation?: number}>
  project_id: string
  user_id: string
  consumer_generation: number | null
  consumer_type?: string
  mappings?: unknown
}

/** The POST /reshaper body (already schema-validated). */
export interface ReshaperBody {
  inventories: Record<string, {resource_provider_generation: number; inventories: Record<string, unknown>}>
  allocations: Record<string, ReshaperConsumer>
}

export interface ReshapeOptions {
  /** Microversion 1.38+: consumer_type is given (and set) for every consumer. */
  consumerTypes: boolean
}

/** Error wrapping of the reshaper handler around the allocation write. */
export const reshaperErrors = {
  notFound: (msg: string) => badRequest(`malformed reshaper data: ${msg}`),
  invalid: (msg: string) => conflict(`Unable to allocate inventory: ${msg}`),
}

/** The consumer writes of a reshaper body. */
export function reshaperWrites(body: ReshaperBody, opts: ReshapeOptions): ConsumerWrite[] {
  return Object.entries(body.allocations).map(([uuid, c]) => ({
    uuid,
    allocations: new Map(Object.entries(c.allocations).map(([rp, a]) => [rp, new Map(Object.entries(a.resources))])),
    project: c.project_id ?? null,
    user: c.user_id ?? null,
    generation: c.consumer_generation ?? null,
    type: opts.consumerTypes ? c.consumer_type : undefined,
  }))
}

interface PlannedInventory {
  provider: Provider
  inventories: Map<string, Inventory>
}

/** Step 1: the providers and their new inventories, checked in the body's order. Changes nothing. */
function planInventories(s: State, body: ReshaperBody): PlannedInventory[] {
  const out: PlannedInventory[] = []
  for (const [uuid, entry] of Object.entries(body.inventories)) {
    const p = s.providers.get(uuid)
    if (!p) {
      throw badRequest(
        `Resource provider ${uuid} in inventories not found: No resource provider with uuid ${uuid} found`,
        ErrorCode.PROVIDER_NOT_FOUND,
      )
    }
    const given = entry.resource_provider_generation
    if (given !== p.generation) {
      throw new PlacementError(
        409,
        `resource provider generation conflict for provider ${uuid}: actual: ${p.generation}, given: ${given}`,
        ErrorCode.CONCURRENT_UPDATE,
      )
    }
    const inventories = new Map<string, Inventory>()
    for (const [rc, raw] of Object.entries(entry.inventories)) {
      // Keys outside the class pattern escape the schema: they are not inventories.
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || typeof (raw as InventoryInput).total !== 'number') {
        throw badRequest(`Bad inventory ${rc} for resource provider ${uuid}`)
      }
      inventories.set(rc, withDefaults(raw as InventoryInput))
    }
    out.push({provider: p, inventories})
  }
  return out
}

/**
 * The whole reshape, on a State inside a transaction. Throws PlacementError (with
 * Placement's status, text and code) on the first failure.
 */
export function reshape(s: State, now: number, body: ReshaperBody, opts: ReshapeOptions): void {
  const planned = planInventories(s, body)
  const writes = reshaperWrites(body, opts)
  const consumers = planConsumers(s, writes, {checkGeneration: true})
  checkProvidersExist(s, writes)
  // Step 4's class check, for every provider, before the first change.
  for (const {inventories} of planned) {
    for (const rc of inventories.keys()) {
      if (!s.classes.has(rc)) throw reshaperErrors.notFound(`No such resource class ${rc}.`)
    }
  }

  // Step 4: the interim inventories (current plus new); an empty new inventory skips this.
  for (const {provider, inventories} of planned) {
    if (inventories.size === 0) continue
    for (const [rc, inv] of inventories) s.setInventory(provider, rc, inv)
    s.bumpProvider(provider, now)
  }
  // Step 5: the allocations, validated against the interim inventories.
  applyAllocations(s, now, consumers, {checkGeneration: true, ...reshaperErrors})
  // Step 6: the final inventories.
  for (const {provider, inventories} of planned) replaceInventories(s, now, provider, inventories)
}
