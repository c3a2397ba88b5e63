/** Tables of one consumer's allocations, as `allocation show/set/unset` print them. */
import {compareText} from '../../core/listing-order.js'
import type {ConsumerAllocations} from '../backend/backend.js'
import {typeOf} from '../backend/consumer-lookup.js'
import type {Column} from '../output.js'
import {formatResources} from './resources.js'

export interface AllocationRow {
  resource_provider: string
  generation?: number
  resources: Record<string, number>
  project_id?: string
  user_id?: string
  /** null for a consumer of no type (an empty cell, as consumer list prints it). */
  consumer_type?: string | null
}

export const allocationColumns: Column<AllocationRow>[] = [
  {key: 'resource_provider', header: 'provider'},
  {key: 'generation', align: 'right'},
  {key: 'resources', get: (r) => formatResources(r.resources)},
  {key: 'project_id', header: 'project'},
  {key: 'user_id', header: 'user'},
  {key: 'consumer_type', header: 'type'},
]

/**
 * A consumer's allocations as the commands print them as JSON/YAML: GET /allocations/{consumer}'s
 * body, but a consumer of no type has consumer_type null (Placement says "unknown", which it
 * refuses when sent back), as `placemat export` writes it.
 */
export const allocationDocument = (c: ConsumerAllocations) => (c.consumer_type === undefined ? c : {...c, consumer_type: typeOf(c)})

/** One row per provider, by uuid. */
export function allocationRows(c: ConsumerAllocations): AllocationRow[] {
  const byUuid = Object.entries(c.allocations ?? {}).sort(([a], [b]) => compareText(a, b))
  return byUuid.map(([rp, a]) => ({
    resource_provider: rp,
    generation: a.generation,
    resources: a.resources,
    project_id: c.project_id,
    user_id: c.user_id,
    consumer_type: typeOf(c),
  }))
}
