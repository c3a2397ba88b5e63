/** Records tests build by hand, shared by HTTP and unit tests (no app, no store). */
import type {Inventory} from '../../src/core/state/state.js'

/** An inventory record with Placement's defaults (max_unit: the total). */
export const inv = (total: number, extra: Partial<Inventory> = {}): Inventory => ({
  total,
  reserved: 0,
  min_unit: 1,
  max_unit: total,
  step_size: 1,
  allocation_ratio: 1,
  ...extra,
})
