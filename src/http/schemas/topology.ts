/** placemat's topology (under /placemat/v1/topology): racks, rows and rooms. Not part of Placement. */
import type {Layout} from '../../core/topology.js'
import type {Schema} from './common.js'

/** PUT /placemat/v1/topology/layout: the layout, and the topology's generation when it is guarded. */
export type TopologyLayoutPutBody = Layout & {generation?: number}

const TOPOLOGY_NAME = {type: 'string', minLength: 1, maxLength: 255}
const RACK_LAYOUT = {
  type: 'object',
  properties: {name: TOPOLOGY_NAME, hosts: {type: 'array', items: {type: 'string', minLength: 1}}},
  required: ['name'],
  additionalProperties: false,
}
const ROW_LAYOUT = {
  type: 'object',
  properties: {name: TOPOLOGY_NAME, racks: {type: 'array', items: RACK_LAYOUT}},
  required: ['name'],
  additionalProperties: false,
}

/** PUT /placemat/v1/topology/layout: rooms > rows > racks > hosts (rows and racks may stand alone). */
export const TOPOLOGY_LAYOUT_PUT: Schema<TopologyLayoutPutBody> = {
  type: 'object',
  properties: {
    generation: {type: 'integer'},
    rooms: {
      type: 'array',
      items: {
        type: 'object',
        properties: {name: TOPOLOGY_NAME, rows: {type: 'array', items: ROW_LAYOUT}},
        required: ['name'],
        additionalProperties: false,
      },
    },
    rows: {type: 'array', items: ROW_LAYOUT},
    racks: {type: 'array', items: RACK_LAYOUT},
  },
  additionalProperties: false,
}
