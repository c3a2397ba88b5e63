/** placemat's topology API: racks, rows and rooms, under /placemat/v1/topology. */
import {applyLayout, currentLayout, planLayout, type Layout} from '../../core/topology.js'
import {topologyView} from '../../core/topology-view.js'
import {PlacementError} from '../../core/errors.js'
import {queryParams, readJson, type RouteDef} from '../context.js'
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
    // Replaces the whole layout; ?dry_run=true only plans. With `generation`, a concurrent edit is a 409.
    method: 'PUT',
    url: `${PLACEMAT_PREFIX}/topology/layout`,
    body: true,
    async handler(ctx) {
      const body = readJson<Layout & {generation?: number}>(ctx, S.TOPOLOGY_LAYOUT_PUT)
      const {generation, ...layout} = body
      const dry = queryParams(ctx.req).get('dry_run')?.at(-1)
      if (dry !== undefined && dry !== 'true' && dry !== 'false') throw new PlacementError(400, 'dry_run must be true or false')
      if (dry === 'true') return {applied: false, plan: planLayout(await ctx.store.refresh(), layout)}
      const plan = await ctx.store.write((s, now) => applyLayout(s, now, layout, generation))
      return {applied: true, plan}
    },
  },
]
