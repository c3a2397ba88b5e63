/**
 * One host in full (core/host-view.ts):
 *
 *   GET /placemat/v1/hosts/{uuid}/description   what GET /placemat/v1/hosts/{uuid} answers, and
 *                                               its tree's providers (inventories with capacity
 *                                               and usage, traits, named aggregates) and its
 *                                               consumers (what each holds there, its groups)
 *
 * 404 for no such provider, 400 for a provider that is not a root.
 */
import {PlacementError} from '../../core/errors.js'
import {describeHost} from '../../core/host-view.js'
import {canonicalUuid, isUuidLike, type RouteDef} from '../context.js'
import {PLACEMAT_PREFIX} from './placemat.js'

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/hosts/:uuid/description`,
    async handler(ctx) {
      const raw = ctx.params.uuid
      if (!isUuidLike(raw)) throw new PlacementError(400, `Malformed host uuid: ${raw}`)
      const s = await ctx.store.refresh()
      return describeHost(s, canonicalUuid(raw))
    },
  },
]
