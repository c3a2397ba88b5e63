/**
 * placemat's batch (POST /placemat/v1/batch, `placemat apply`): one schema per operation,
 * each made of Placement's own for the endpoint it stands for. Not part of Placement.
 * ../batch-validation.ts checks operations against them.
 */
import type {BatchOperation} from '../../core/batch.js'
import {prop, type S, type Schema} from './common.js'
import {AGGREGATES_LIST} from './aggregate.js'
import {INVENTORIES_PUT} from './inventory.js'
import {RESOURCE_CLASS_POST} from './resource-class.js'
import {CUSTOM_TRAIT, RESOURCE_PROVIDER_TRAITS_PUT} from './trait.js'
import {TOPOLOGY_LAYOUT_PUT} from './topology.js'

/** POST /placemat/v1/batch: each operation is checked on its own (../batch-validation.ts). */
export interface BatchPostBody {
  operations: BatchOperation[]
}

const PROVIDER_REF = {type: 'string', format: 'uuid'}
const NULLABLE_PARENT = {anyOf: [{type: 'string', format: 'uuid'}, {type: 'null'}]}
const opSchema = (op: string, properties: Record<string, unknown>, required: string[]): S => ({
  type: 'object',
  properties: {op: {enum: [op]}, ...properties},
  required: ['op', ...required],
  additionalProperties: false,
})

const withoutKey = (o: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key))

/** One schema per batch operation, keyed by its `op`. */
export const BATCH_OPERATIONS: Record<string, S> = {
  ensure_resource_class: opSchema('ensure_resource_class', {name: prop(RESOURCE_CLASS_POST, 'name')}, ['name']),
  ensure_trait: opSchema('ensure_trait', {name: CUSTOM_TRAIT}, ['name']),
  create_provider: opSchema(
    'create_provider',
    {uuid: PROVIDER_REF, name: {type: 'string', minLength: 1, maxLength: 200}, parent_provider_uuid: NULLABLE_PARENT},
    ['uuid', 'name'],
  ),
  update_provider: opSchema(
    'update_provider',
    {uuid: PROVIDER_REF, name: {type: 'string', minLength: 1, maxLength: 200}, parent_provider_uuid: NULLABLE_PARENT},
    ['uuid'],
  ),
  delete_provider: opSchema('delete_provider', {uuid: PROVIDER_REF}, ['uuid']),
  set_inventories: opSchema(
    'set_inventories',
    {uuid: PROVIDER_REF, inventories: prop(INVENTORIES_PUT, 'inventories'), generation: {type: 'integer'}},
    ['uuid', 'inventories'],
  ),
  set_traits: opSchema(
    'set_traits',
    {uuid: PROVIDER_REF, traits: prop(RESOURCE_PROVIDER_TRAITS_PUT, 'traits'), generation: {type: 'integer'}},
    ['uuid', 'traits'],
  ),
  set_aggregates: opSchema('set_aggregates', {uuid: PROVIDER_REF, aggregates: AGGREGATES_LIST, generation: {type: 'integer'}}, [
    'uuid',
    'aggregates',
  ]),
  set_aggregate_names: opSchema(
    'set_aggregate_names',
    {
      names: {
        type: 'array',
        items: {
          type: 'object',
          properties: {uuid: {type: 'string', format: 'uuid'}, name: {type: 'string', minLength: 1, maxLength: 255}},
          required: ['uuid', 'name'],
          additionalProperties: false,
        },
      },
      forget: AGGREGATES_LIST,
    },
    [],
  ),
  // The body itself is then checked against reshaperPostSchema at that microversion.
  reshape: opSchema(
    'reshape',
    {microversion: {type: 'string', pattern: '^1\\.(3[0-9])$'}, inventories: {type: 'object'}, allocations: {type: 'object'}},
    ['microversion', 'inventories', 'allocations'],
  ),
  // A layout in a batch: the layout document without its generation, which the operation carries.
  apply_layout: opSchema(
    'apply_layout',
    {
      layout: {...TOPOLOGY_LAYOUT_PUT, properties: withoutKey(TOPOLOGY_LAYOUT_PUT.properties as Record<string, unknown>, 'generation')},
      prune: {type: 'boolean'},
      generation: {type: 'integer'},
    },
    ['layout'],
  ),
}

/** POST /placemat/v1/batch envelope (each operation is then checked against BATCH_OPERATIONS). */
export const BATCH_POST: Schema<BatchPostBody> = {
  type: 'object',
  properties: {operations: {type: 'array', items: {type: 'object', required: ['op']}}},
  required: ['operations'],
  additionalProperties: false,
}
