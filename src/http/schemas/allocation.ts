/** placement/schemas/allocation.py: PUT /allocations/{consumer_uuid} and POST /allocations. */
import {
  CONSUMER_TYPE_PATTERN,
  GROUP_PAT_1_33,
  RC_PATTERN,
  UUID_PATTERN,
  clone,
  deepFreeze,
  type S,
  type Schema,
  type VersionLike,
} from './common.js'

/** Amounts by resource class. */
export type Resources = Record<string, number>

/** PUT /allocations/{consumer_uuid}, 1.0-1.11: a list (project_id and user_id required from 1.8). */
export interface AllocationListBody {
  allocations: Array<{resource_provider: {uuid: string}; resources: Resources}>
  project_id?: string
  user_id?: string
}

/**
 * One consumer's allocations keyed by provider, 1.12+: PUT /allocations/{consumer_uuid}'s
 * body and each consumer's entry in POST /allocations (1.13+) and the reshaper.
 * consumer_generation is there from 1.28, mappings from 1.34, consumer_type from 1.38.
 */
export interface ConsumerAllocationsBody {
  allocations: Record<string, {resources: Resources; generation?: number}>
  project_id: string
  user_id: string
  consumer_generation?: number | null
  consumer_type?: string
  mappings?: Record<string, string[]>
}

/** POST /allocations (1.13+): consumer uuid -> its allocations. */
export type AllocationsPostBody = Record<string, ConsumerAllocationsBody>

/** PUT /allocations/{consumer_uuid} body, 1.0-1.7: list form. */
export const ALLOCATIONS_PUT_1_0: Schema<AllocationListBody> = {
  type: 'object',
  properties: {
    allocations: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          resource_provider: {
            type: 'object',
            properties: {
              uuid: {type: 'string', format: 'uuid'},
            },
            additionalProperties: false,
            required: ['uuid'],
          },
          resources: {
            type: 'object',
            minProperties: 1,
            patternProperties: {
              [RC_PATTERN]: {type: 'integer', minimum: 1},
            },
            additionalProperties: false,
          },
        },
        required: ['resource_provider', 'resources'],
        additionalProperties: false,
      },
    },
  },
  required: ['allocations'],
  additionalProperties: false,
}

/** PUT /allocations/{consumer_uuid} body, 1.8-1.11: list form plus required project_id, user_id. */
export const ALLOCATIONS_PUT_1_8: Schema<AllocationListBody> = (() => {
  const s: S = clone(ALLOCATIONS_PUT_1_0)
  const props = s.properties as S
  props.project_id = {type: 'string', minLength: 1, maxLength: 255}
  props.user_id = {type: 'string', minLength: 1, maxLength: 255}
  ;(s.required as string[]).push('project_id', 'user_id')
  return s
})()

/** PUT /allocations/{consumer_uuid} body, 1.12-1.27: dict form keyed by provider uuid, non-empty. */
export const ALLOCATIONS_PUT_1_12: Schema<ConsumerAllocationsBody> = {
  type: 'object',
  properties: {
    allocations: {
      type: 'object',
      minProperties: 1,
      patternProperties: {
        [UUID_PATTERN]: {
          type: 'object',
          properties: {
            generation: {type: 'integer'},
            resources: {
              type: 'object',
              minProperties: 1,
              patternProperties: {
                [RC_PATTERN]: {type: 'integer', minimum: 1},
              },
              additionalProperties: false,
            },
          },
          required: ['resources'],
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    project_id: {type: 'string', minLength: 1, maxLength: 255},
    user_id: {type: 'string', minLength: 1, maxLength: 255},
  },
  additionalProperties: false,
  required: ['allocations', 'project_id', 'user_id'],
}

/** ALLOCATIONS_PUT_1_12 with empty allocations allowed: one consumer's entry in POST /allocations 1.13-1.27. */
export const DELETABLE_ALLOCATIONS: Schema<ConsumerAllocationsBody> = (() => {
  const s = clone(ALLOCATIONS_PUT_1_12)
  ;((s.properties as S).allocations as S).minProperties = 0
  return s
})()

/** POST /allocations body, 1.13-1.27: {consumer_uuid: DELETABLE_ALLOCATIONS}. */
export const ALLOCATIONS_POST_1_13: Schema<AllocationsPostBody> = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  patternProperties: {
    [UUID_PATTERN]: DELETABLE_ALLOCATIONS,
  },
}

const CONSUMER_GENERATION = {type: ['integer', 'null'], additionalProperties: false}

/** PUT /allocations/{consumer_uuid} body, 1.28-1.33: adds required consumer_generation (int or null); empty allocations allowed. */
export const ALLOCATIONS_PUT_1_28: Schema<ConsumerAllocationsBody> = (() => {
  const s = clone(DELETABLE_ALLOCATIONS)
  ;(s.properties as S).consumer_generation = clone(CONSUMER_GENERATION)
  ;(s.required as string[]).push('consumer_generation')
  return s
})()

/** POST /allocations body, 1.28-1.33: each consumer also requires consumer_generation. */
export const ALLOCATIONS_POST_1_28: Schema<AllocationsPostBody> = (() => {
  const s = clone(ALLOCATIONS_POST_1_13)
  s.patternProperties = {[UUID_PATTERN]: clone(ALLOCATIONS_PUT_1_28)}
  return s
})()

/** The optional "mappings" member (1.34+): request group suffix -> non-empty list of provider uuids. */
export const MAPPINGS: S = {
  type: 'object',
  minProperties: 1,
  patternProperties: {
    [GROUP_PAT_1_33]: {
      type: 'array',
      minItems: 1,
      items: {type: 'string', format: 'uuid'},
    },
  },
}

/** PUT /allocations/{consumer_uuid} body, 1.34-1.37: adds optional mappings. */
export const ALLOCATIONS_PUT_1_34: Schema<ConsumerAllocationsBody> = (() => {
  const s = clone(ALLOCATIONS_PUT_1_28)
  ;(s.properties as S).mappings = clone(MAPPINGS)
  return s
})()

/** POST /allocations body, 1.34-1.37. */
export const ALLOCATIONS_POST_1_34: Schema<AllocationsPostBody> = (() => {
  const s = clone(ALLOCATIONS_POST_1_28)
  s.patternProperties = {[UUID_PATTERN]: clone(ALLOCATIONS_PUT_1_34)}
  return s
})()

/** PUT /allocations/{consumer_uuid} body, 1.38+: adds required consumer_type. */
export const ALLOCATIONS_PUT_1_38: Schema<ConsumerAllocationsBody> = (() => {
  const s = clone(ALLOCATIONS_PUT_1_34)
  ;(s.properties as S).consumer_type = {
    type: 'string',
    pattern: CONSUMER_TYPE_PATTERN,
    minLength: 1,
    maxLength: 255,
  }
  ;(s.required as string[]).push('consumer_type')
  return s
})()

/** POST /allocations body, 1.38+. */
export const ALLOCATIONS_POST_1_38: Schema<AllocationsPostBody> = (() => {
  const s = clone(ALLOCATIONS_POST_1_34)
  s.patternProperties = {[UUID_PATTERN]: clone(ALLOCATIONS_PUT_1_38)}
  return s
})()

/** PUT /allocations/{consumer_uuid} before 1.12: the list form. */
export const allocationsPutListSchema = (v: VersionLike): Schema<AllocationListBody> =>
  v.gte(8) ? ALLOCATIONS_PUT_1_8 : ALLOCATIONS_PUT_1_0

/** PUT /allocations/{consumer_uuid} from 1.12: keyed by provider. */
export const allocationsPutDictSchema = (v: VersionLike): Schema<ConsumerAllocationsBody> =>
  v.gte(38) ? ALLOCATIONS_PUT_1_38 : v.gte(34) ? ALLOCATIONS_PUT_1_34 : v.gte(28) ? ALLOCATIONS_PUT_1_28 : ALLOCATIONS_PUT_1_12

export const allocationsPutSchema = (v: VersionLike): Schema<AllocationListBody | ConsumerAllocationsBody> =>
  v.gte(12) ? allocationsPutDictSchema(v) : allocationsPutListSchema(v)

/** POST /allocations exists from 1.13. */
export const allocationsPostSchema = (v: VersionLike): Schema<AllocationsPostBody> =>
  v.gte(38) ? ALLOCATIONS_POST_1_38 : v.gte(34) ? ALLOCATIONS_POST_1_34 : v.gte(28) ? ALLOCATIONS_POST_1_28 : ALLOCATIONS_POST_1_13

deepFreeze(
  ALLOCATIONS_PUT_1_0,
  ALLOCATIONS_PUT_1_8,
  ALLOCATIONS_PUT_1_12,
  DELETABLE_ALLOCATIONS,
  ALLOCATIONS_POST_1_13,
  ALLOCATIONS_PUT_1_28,
  ALLOCATIONS_POST_1_28,
  MAPPINGS,
  ALLOCATIONS_PUT_1_34,
  ALLOCATIONS_POST_1_34,
  ALLOCATIONS_PUT_1_38,
  ALLOCATIONS_POST_1_38,
)
