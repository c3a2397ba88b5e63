/** placemat's topology API: racks, rows and rooms, under /placemat/v1/topology. */
import {applyLayout, currentLayout, layoutRefusal, planLayout} from '../../core/topology.js'
import {topologyView} from '../../core/topology-view.js'
import {booleanParam, queryParams, readJson, type RouteDef} from '../context.js'
import {TOPOLOGY_LAYOUT_PUT} from '../schemas/topology.js'
import {PLACEMAT_PREFIX} from './placemat.js'

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/topology`,
    async handler(ctx) {
      const s = await ctx.store.refresh()
      return {generation: s.topologyGeneration, topology: topologyView(s)}
    },
  },
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/topology/layout`,
    async handler(ctx) {
      return currentLayout(await ctx.store.refresh())
    },
  },
  {
    // Replaces the whole layout, or with ?prune=false changes what it names and keeps the rest.
    // With `generation`, a concurrent edit is a 409; a change that breaks a hard group is a 409
    // placemat.affinity_violation unless ?allow_violations=true. ?dry_run=true only plans: its plan
    // lists the placement groups the change would break, and `error` is what the write would be
    // refused with (null when it would apply).
    method: 'PUT',
    url: `${PLACEMAT_PREFIX}/topology/layout`,
    body: true,
    async handler(ctx) {
      const body = readJson(ctx, TOPOLOGY_LAYOUT_PUT)
      const {generation, ...layout} = body
      const allowViolations = booleanParam(ctx, 'allow_violations')
      const prune = !queryParams(ctx.req).has('prune') || booleanParam(ctx, 'prune')
      if (booleanParam(ctx, 'dry_run')) {
        const plan = planLayout(await ctx.store.refresh(), layout, {prune})
        const refusal = layoutRefusal(plan, generation, allowViolations)
        return {applied: false, plan, error: refusal && {status: refusal.status, code: refusal.code, detail: refusal.detail}}
      }
      const plan = await ctx.store.write((s, now) => applyLayout(s, now, layout, generation, {allowViolations, prune}))
      return {applied: true, plan}
    },
  },
]
