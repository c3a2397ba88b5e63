/** placement/schemas/aggregate.py: PUT /resource_providers/{uuid}/aggregates. */
import {clone, deepFreeze, type S, type Schema, type VersionLike} from './common.js'

/** PUT /resource_providers/{uuid}/aggregates, 1.1-1.18: the aggregates' uuids. */
export type AggregatesPutBody_1_1 = string[]

/** PUT /resource_providers/{uuid}/aggregates, 1.19+. */
export interface AggregatesPutBody_1_19 {
  aggregates: string[]
  resource_provider_generation: number
}

/** A list of aggregate uuids, each once (placemat's batch uses it too). */
export const AGGREGATES_LIST: S = {
  type: 'array',
  items: {type: 'string', format: 'uuid'},
  uniqueItems: true,
}

/** PUT /resource_providers/{uuid}/aggregates body, 1.1-1.18: a bare list of uuids. */
export const AGGREGATES_PUT_1_1: Schema<AggregatesPutBody_1_1> = clone(AGGREGATES_LIST)

/** PUT /resource_providers/{uuid}/aggregates body, 1.19+: {aggregates, resource_provider_generation}. */
export const AGGREGATES_PUT_1_19: Schema<AggregatesPutBody_1_19> = {
  type: 'object',
  properties: {
    aggregates: clone(AGGREGATES_LIST),
    resource_provider_generation: {type: 'integer'},
  },
  required: ['aggregates', 'resource_provider_generation'],
  additionalProperties: false,
}

export const aggregatesPutSchema = (v: VersionLike): Schema<AggregatesPutBody_1_1 | AggregatesPutBody_1_19> =>
  v.gte(19) ? AGGREGATES_PUT_1_19 : AGGREGATES_PUT_1_1

deepFreeze(AGGREGATES_PUT_1_1, AGGREGATES_PUT_1_19)
