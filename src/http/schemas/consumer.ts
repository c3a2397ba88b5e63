/** placemat's consumers (GET /placemat/v1/consumers). Not part of Placement. */
import type {S} from './common.js'

/** GET /placemat/v1/consumers: the filters of `placemat consumer list`. */
export const CONSUMERS_QUERY: S = {
  type: 'object',
  properties: {
    in_tree: {type: 'string', format: 'uuid'},
    project_id: {type: 'string', minLength: 1, maxLength: 255},
    group: {type: 'string', minLength: 1, maxLength: 200},
  },
  additionalProperties: false,
}
