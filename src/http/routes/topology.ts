/** placemat's topology API: racks, rows and rooms, under /placemat/v1/topology. */
import {applyLayout, currentLayout, planLayout, type Layout} from '../../core/topology.js'
import {topologyView} from '../../core/topology-view.js'
import {booleanParam, readJson, type RouteDef} from '../context.js'
import * as S from '../schemas.js'
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
    // Replaces the whole layout; ?dry_run=true only plans (its plan lists the placement groups the
    // change would break). With `generation`, a concurrent edit is a 409; a change that breaks a
    // hard group is a 409 placemat.affinity_violation unless ?allow_violations=true.
    method: 'PUT',
    url: `${PLACEMAT_PREFIX}/topology/layout`,
    body: true,
    async handler(ctx) {
      const body = readJson<Layout & {generation?: number}>(ctx, S.TOPOLOGY_LAYOUT_PUT)
      const {generation, ...layout} = body
      const allowViolations = booleanParam(ctx, 'allow_violations')
      if (booleanParam(ctx, 'dry_run')) return {applied: false, plan: planLayout(await ctx.store.refresh(), layout)}
      const plan = await ctx.store.write((s, now) => applyLayout(s, now, layout, generation, {allowViolations}))
      return {applied: true, plan}
    },
  },
]
