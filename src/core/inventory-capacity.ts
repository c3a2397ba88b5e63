/** An inventory's capacity, a leaf every layer reads: what it can hold (not a flavor's headroom, not the `capacity` command). */
import type {Inventory} from './state/state.js'

/** Placement's Inventory.capacity: int((total - reserved) * allocation_ratio); Python's int() truncates toward zero. */
export const capacityOf = (inv: Pick<Inventory, 'total' | 'reserved' | 'allocation_ratio'>): number =>
  Math.trunc((inv.total - inv.reserved) * inv.allocation_ratio)
