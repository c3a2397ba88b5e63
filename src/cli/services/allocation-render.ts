/** Tables of one consumer's allocations, as `allocation show/set/unset` print them. */
import type {Column} from '../output.js'
import {formatResources, type ConsumerAllocations, type Resources} from './allocations.js'

export interface AllocationRow {
  resource_provider: string
  generation?: number
  resources: Resources
  project_id?: string
  user_id?: string
  consumer_type?: string
}

export const allocationColumns: Column<AllocationRow>[] = [
  {key: 'resource_provider', header: 'provider'},
  {key: 'generation', align: 'right'},
  {key: 'resources', get: (r) => formatResources(r.resources)},
  {key: 'project_id', header: 'project'},
  {key: 'user_id', header: 'user'},
  {key: 'consumer_type', header: 'type'},
]

export function allocationRows(c: ConsumerAllocations): AllocationRow[] {
  return Object.entries(c.allocations ?? {}).map(([rp, a]) => ({
    resource_provider: rp,
    generation: a.generation,
    resources: a.resources,
    project_id: c.project_id,
    user_id: c.user_id,
    consumer_type: c.consumer_type,
  }))
}
