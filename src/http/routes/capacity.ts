/**
 * GET /placemat/v1/capacity?flavor=NAME&level=LEVEL (each repeatable): the headroom of the
 * daemon's flavor catalog (core/headroom.ts) on the State as it is now, as `placemat capacity
 * --json` prints it. 404 without a catalog (`daemon start --flavors FILE`), 400 for a flavor the
 * catalog does not hold or a level that is none of host, rack, row, room and cloud.
 */
import {PlacementError} from '../../core/errors.js'
import {flavorWarnings} from '../../core/flavors.js'
import {HEADROOM_LEVELS, headroom, type HeadroomLevel} from '../../core/headroom.js'
import {queryParams, type AppOptions, type RouteDef} from '../context.js'
import {PLACEMAT_PREFIX} from './placemat.js'

export function routes(options: AppOptions): RouteDef[] {
  return [
    {
      method: 'GET',
      url: `${PLACEMAT_PREFIX}/capacity`,
      async handler(ctx) {
        const catalog = options.flavors?.flavors
        if (!catalog) throw new PlacementError(404, 'This daemon has no flavor catalog: start it with --flavors FILE.')
        const q = queryParams(ctx.req)
        const names = (q.get('flavor') ?? []).flatMap((v) => v.split(',')).filter(Boolean)
        const unknown = names.filter((n) => !catalog.some((f) => f.flavor === n))
        if (unknown.length)
          throw new PlacementError(
            400,
            `No flavor named ${unknown.join(', ')} in the catalog; it has ${catalog.map((f) => f.flavor).join(', ') || 'none'}.`,
          )
        const levels = (q.get('level') ?? []).flatMap((v) => v.split(',')).filter(Boolean)
        const bad = levels.find((l) => !HEADROOM_LEVELS.includes(l as HeadroomLevel))
        if (bad !== undefined) throw new PlacementError(400, `Invalid level ${bad}: one of ${HEADROOM_LEVELS.join(', ')}.`)
        const flavors = names.length ? catalog.filter((f) => names.includes(f.flavor)) : catalog
        const s = await ctx.store.refresh()
        const answer = headroom(s, flavors, levels.length ? {levels: levels as HeadroomLevel[]} : {})
        return {...answer, warnings: flavorWarnings(flavors)}
      },
    },
  ]
}
