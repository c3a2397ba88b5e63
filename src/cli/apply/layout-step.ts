/**
 * The racks, rows and rooms of a datacenter file, which `placemat apply` applies after the
 * file's providers: planned first on the State the providers' writes leave, so that a layout
 * that cannot be applied (an unknown host, a host in two racks) is refused before anything is
 * written; then applied as `placemat topology apply` applies a layout.
 */
import {layoutNodes, planLayout, type Layout, type TopologyPlan} from '../../core/topology.js'
import type {State} from '../../core/state/state.js'
import {asRefusal} from './check.js'

/** The layout to apply, if any: one that names no rack, row or room changes nothing unless it prunes. */
export const layoutToApply = (layout: Layout | undefined, prune: boolean): Layout | undefined =>
  layout && (prune || layoutNodes(layout).size > 0) ? layout : undefined

/**
 * The layout's plan on `after`, the State as the providers' writes leave it (the copy they were
 * checked on); a layout that cannot be applied there is refused (exit 6) with nothing written.
 */
export async function planLayoutAfter(after: State, layout: Layout, prune: boolean): Promise<TopologyPlan> {
  let plan: TopologyPlan | undefined
  await asRefusal(() => {
    plan = planLayout(after, layout, {prune})
  })
  return plan!
}
