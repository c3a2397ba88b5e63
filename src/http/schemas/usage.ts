/** placement/schemas/usage.py: GET /usages' query. */
import {CONSUMER_TYPE_GET_PATTERN, clone, deepFreeze, type S, type VersionLike} from './common.js'

/** GET /usages query, 1.9-1.37: project_id (required), user_id. */
export const USAGES_GET_QUERY_1_9: S = {
  type: 'object',
  properties: {
    project_id: {type: 'string', minLength: 1, maxLength: 255},
    user_id: {type: 'string', minLength: 1, maxLength: 255},
  },
  required: ['project_id'],
  additionalProperties: false,
}

/** GET /usages query, 1.38+: adds consumer_type. */
export const USAGES_GET_QUERY_1_38: S = (() => {
  const s = clone(USAGES_GET_QUERY_1_9)
  ;(s.properties as S).consumer_type = {
    type: 'string',
    pattern: CONSUMER_TYPE_GET_PATTERN,
    minLength: 1,
    maxLength: 255,
  }
  return s
})()

export const usagesGetQuerySchema = (v: VersionLike): S => (v.gte(38) ? USAGES_GET_QUERY_1_38 : USAGES_GET_QUERY_1_9)

deepFreeze(USAGES_GET_QUERY_1_9, USAGES_GET_QUERY_1_38)
