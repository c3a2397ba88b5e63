/** placement/schemas/inventory.py: the inventories of a resource provider. */
import {MAX_INT, RC_PATTERN, SQL_SP_FLOAT_MAX, clone, deepFreeze, type S, type Schema} from './common.js'

/** One inventory's amounts, as every inventory body spells them. */
export interface InventoryFields {
  total: number
  reserved?: number
  min_unit?: number
  max_unit?: number
  step_size?: number
  allocation_ratio?: number
}

/** PUT /resource_providers/{uuid}/inventories/{rc}. */
export interface InventoryPutBody extends InventoryFields {
  resource_provider_generation: number
}

/** POST /resource_providers/{uuid}/inventories. */
export interface InventoryPostBody extends InventoryFields {
  resource_class: string
  /** Accepted and ignored, as Placement does. */
  resource_provider_generation?: number
}

/**
 * PUT /resource_providers/{uuid}/inventories, and each provider's entry in the reshaper.
 * patternProperties checks only the keys that match RC_PATTERN, so a record stays unknown
 * until the domain checks it.
 */
export interface InventoriesPutBody {
  resource_provider_generation: number
  inventories: Record<string, unknown>
}

/** PUT /resource_providers/{uuid}/inventories/{rc} body (all microversions). */
export const INVENTORY_PUT_SINGLE: Schema<InventoryPutBody> = {
  type: 'object',
  properties: {
    resource_provider_generation: {type: 'integer'},
    total: {type: 'integer', maximum: MAX_INT, minimum: 1},
    reserved: {type: 'integer', maximum: MAX_INT, minimum: 0},
    min_unit: {type: 'integer', maximum: MAX_INT, minimum: 1},
    max_unit: {type: 'integer', maximum: MAX_INT, minimum: 1},
    step_size: {type: 'integer', maximum: MAX_INT, minimum: 1},
    allocation_ratio: {type: 'number', maximum: SQL_SP_FLOAT_MAX},
  },
  required: ['total', 'resource_provider_generation'],
  additionalProperties: false,
}
/** Placement's name for INVENTORY_PUT_SINGLE. */
export const BASE_INVENTORY_SCHEMA = INVENTORY_PUT_SINGLE

/** POST /resource_providers/{uuid}/inventories body (all microversions): adds resource_class, no generation required. */
export const INVENTORY_POST: Schema<InventoryPostBody> = (() => {
  const s: S = clone(INVENTORY_PUT_SINGLE)
  ;(s.properties as S).resource_class = {type: 'string', pattern: RC_PATTERN}
  s.required = ['total', 'resource_class']
  return s
})()

/** One inventory record inside PUT /resource_providers/{uuid}/inventories (and the reshaper). */
export const INVENTORY_RECORD: Schema<InventoryFields> = (() => {
  const s: S = clone(INVENTORY_PUT_SINGLE)
  s.required = ['total']
  return s
})()

/** PUT /resource_providers/{uuid}/inventories body (all microversions); also each provider's entry in the reshaper. */
export const INVENTORIES_PUT: Schema<InventoriesPutBody> = {
  type: 'object',
  properties: {
    resource_provider_generation: {type: 'integer'},
    inventories: {
      type: 'object',
      patternProperties: {
        [RC_PATTERN]: INVENTORY_RECORD,
      },
    },
  },
  required: ['resource_provider_generation', 'inventories'],
  additionalProperties: false,
}

deepFreeze(INVENTORY_PUT_SINGLE, INVENTORY_POST, INVENTORY_RECORD, INVENTORIES_PUT)
