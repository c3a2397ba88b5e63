/** placement/schemas/reshaper.py: POST /reshaper (1.30+). */
import type {ReshaperBody} from '../../core/placement/reshaper.js'
import {UUID_PATTERN, clone, deepFreeze, type S, type Schema, type VersionLike} from './common.js'
import {INVENTORIES_PUT} from './inventory.js'
import {ALLOCATIONS_POST_1_28, ALLOCATIONS_POST_1_34, ALLOCATIONS_POST_1_38} from './allocation.js'

/** POST /reshaper: every provider's inventories and every consumer's allocations (core/placement/reshaper.ts). */
export type {ReshaperBody}

const reshaperAllocations = (post: S): S => {
  const s = clone(post)
  s.minProperties = 0
  return s
}

/** POST /reshaper body, 1.30-1.33: inventories per provider (non-empty) and allocations (may be empty). */
export const RESHAPER_POST_1_30: Schema<ReshaperBody> = {
  type: 'object',
  properties: {
    inventories: {
      type: 'object',
      patternProperties: {
        [UUID_PATTERN]: INVENTORIES_PUT,
      },
      minProperties: 1,
      additionalProperties: false,
    },
    allocations: reshaperAllocations(ALLOCATIONS_POST_1_28),
  },
  required: ['inventories', 'allocations'],
  additionalProperties: false,
}

/** POST /reshaper body, 1.34-1.37: allocations as POST /allocations 1.34 (mappings allowed). */
export const RESHAPER_POST_1_34: Schema<ReshaperBody> = (() => {
  const s = clone(RESHAPER_POST_1_30)
  ;(s.properties as S).allocations = reshaperAllocations(ALLOCATIONS_POST_1_34)
  return s
})()

/** POST /reshaper body, 1.38+: allocations as POST /allocations 1.38 (consumer_type required). */
export const RESHAPER_POST_1_38: Schema<ReshaperBody> = (() => {
  const s = clone(RESHAPER_POST_1_34)
  ;(s.properties as S).allocations = reshaperAllocations(ALLOCATIONS_POST_1_38)
  return s
})()

export const reshaperPostSchema = (v: VersionLike): Schema<ReshaperBody> =>
  v.gte(38) ? RESHAPER_POST_1_38 : v.gte(34) ? RESHAPER_POST_1_34 : RESHAPER_POST_1_30

deepFreeze(RESHAPER_POST_1_30, RESHAPER_POST_1_34, RESHAPER_POST_1_38)
