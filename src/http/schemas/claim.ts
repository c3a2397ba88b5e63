/** placemat's claims and moves (POST /placemat/v1/claims, /placemat/v1/moves). Not part of Placement. */
import type {AffinityRule} from '../../core/affinity.js'
import {CONSUMER_TYPE_PATTERN, clone, type S, type Schema} from './common.js'
import {ALLOCATIONS_PUT_1_12, type Resources} from './allocation.js'
import {GROUP_NAME} from './group.js'

/** One claim: a consumer's allocations plus the topology rules checked at write time. */
export interface ClaimBody {
  consumer_uuid: string
  project_id: string
  user_id: string
  consumer_type?: string
  consumer_generation: number | null
  allocations: Record<string, {resources: Resources}>
  affinity?: AffinityRule[]
  group?: string
}

/** Several claims, written in one transaction. */
export interface ClaimsBatchBody {
  claims: ClaimBody[]
}

/** POST /placemat/v1/moves. */
export interface MovePostBody {
  consumer_uuid: string
  to: string
  consumer_type?: string
  consumer_generation?: number
  to_generation?: number | null
}

/** One claim of POST /placemat/v1/claims: a consumer's allocations plus topology rules checked at write time. */
export const CLAIM: Schema<ClaimBody> = {
  type: 'object',
  properties: {
    consumer_uuid: {type: 'string', format: 'uuid'},
    project_id: {type: 'string', minLength: 1, maxLength: 255},
    user_id: {type: 'string', minLength: 1, maxLength: 255},
    consumer_type: {type: 'string', pattern: CONSUMER_TYPE_PATTERN, minLength: 1, maxLength: 255},
    consumer_generation: {type: ['integer', 'null']},
    allocations: clone((ALLOCATIONS_PUT_1_12.properties as S).allocations),
    affinity: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          relation: {enum: ['same', 'different']},
          level: {enum: ['rack', 'row', 'room']},
          consumer: {type: 'string', format: 'uuid'},
        },
        required: ['relation', 'level', 'consumer'],
        additionalProperties: false,
      },
    },
    group: GROUP_NAME,
  },
  required: ['consumer_uuid', 'project_id', 'user_id', 'consumer_generation', 'allocations'],
  additionalProperties: false,
}

/** POST /placemat/v1/moves: a consumer's allocations to another consumer. */
export const MOVE_POST: Schema<MovePostBody> = {
  type: 'object',
  properties: {
    consumer_uuid: {type: 'string', format: 'uuid'},
    to: {type: 'string', format: 'uuid'},
    consumer_type: {type: 'string', pattern: CONSUMER_TYPE_PATTERN, minLength: 1, maxLength: 255},
    consumer_generation: {type: 'integer'},
    to_generation: {type: ['integer', 'null']},
  },
  required: ['consumer_uuid', 'to'],
  additionalProperties: false,
}

/** POST /placemat/v1/claims with several consumers, written in one transaction. */
export const CLAIMS_BATCH: Schema<ClaimsBatchBody> = {
  type: 'object',
  properties: {claims: {type: 'array', minItems: 1, items: CLAIM}},
  required: ['claims'],
  additionalProperties: false,
}
