/**
 * Named aggregates (placemat's own, core/aggregate-names.ts):
 *
 *   GET /placemat/v1/aggregates   {aggregates: [{uuid, name, level}]}: racks, rows and rooms
 *                                 (level rack, row or room) and the aggregates apply files named
 *                                 (level null). `apply` writes the names (a batch's
 *                                 set_aggregate_names operation). `names`: [{uuid, name}],
 *                                 every name apply files gave, also one a rack, row or room
 *                                 shadows in `aggregates` (`placemat export` carries them).
 */
import {keptAggregateNames, namedAggregates} from '../../core/aggregate-names.js'
import type {RouteDef} from '../context.js'
import {PLACEMAT_PREFIX} from './placemat.js'

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/aggregates`,
    async handler(ctx) {
      const s = await ctx.store.refresh()
      return {aggregates: namedAggregates(s), names: keptAggregateNames(s)}
    },
  },
]
