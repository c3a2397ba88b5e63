/** placemat's placement groups (under /placemat/v1/groups). Not part of Placement. */
import {GROUP_NAME_PATTERN, type GroupSpec} from '../../core/group-writes.js'
import type {Schema} from './common.js'

/** POST /placemat/v1/groups. */
export interface GroupPostBody {
  name: string
  policy: GroupSpec['policy']
  level: GroupSpec['level']
  max_per?: number
  max_skew?: number
  soft?: boolean
  members?: string[]
}

/** POST /placemat/v1/groups/check: consumer -> the providers it would be placed on. */
export interface GroupCheckPostBody {
  placements: Record<string, string[]>
}

/** POST /placemat/v1/groups/{name}/members. */
export interface GroupMembersPostBody {
  add?: string[]
  remove?: string[]
  generation?: number
}

/** A placement group's name. */
export const GROUP_NAME = {type: 'string', pattern: GROUP_NAME_PATTERN}

const CONSUMER_LIST = {type: 'array', items: {type: 'string', format: 'uuid'}, maxItems: 100000}

/** POST /placemat/v1/groups (the numbers a policy needs are checked by the domain). */
export const GROUP_POST: Schema<GroupPostBody> = {
  type: 'object',
  properties: {
    name: GROUP_NAME,
    policy: {enum: ['affinity', 'anti-affinity', 'max-per', 'spread']},
    level: {enum: ['host', 'rack', 'row', 'room']},
    max_per: {type: 'integer', minimum: 1},
    max_skew: {type: 'integer', minimum: 1},
    soft: {type: 'boolean'},
    members: CONSUMER_LIST,
  },
  required: ['name', 'policy', 'level'],
  additionalProperties: false,
}

/** POST /placemat/v1/groups/check: consumers placed on providers, as a write would place them. */
export const GROUP_CHECK_POST: Schema<GroupCheckPostBody> = {
  type: 'object',
  properties: {
    placements: {
      type: 'object',
      patternProperties: {'^[0-9a-fA-F-]{36}$': {type: 'array', items: {type: 'string', format: 'uuid'}, maxItems: 1000}},
      additionalProperties: false,
    },
  },
  required: ['placements'],
  additionalProperties: false,
}

/** POST /placemat/v1/groups/{name}/members */
export const GROUP_MEMBERS_POST: Schema<GroupMembersPostBody> = {
  type: 'object',
  properties: {add: CONSUMER_LIST, remove: CONSUMER_LIST, generation: {type: 'integer'}},
  additionalProperties: false,
}
