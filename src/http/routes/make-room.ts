/**
 * POST /placemat/v1/make-room: the fewest consumer moves after which one goal holds
 * (core/make-room/plan.ts), worked out on the State as it is now and answered as a plan's record
 * (core/make-room/record.ts), the shape `placemat make-room --json` prints. Nothing is moved: the
 * planner works on numbers and a copy, and the moves are the writes to make, in order. One goal:
 *
 *   {"flavor": NAME | {...}, "count": K, "in"?: "rack:r7", "max_moves"?: N}   K more of a flavor fit
 *   {"free_hosts": N, "in"?: "rack:r7", "max_moves"?: N}                      N hosts of the domain empty
 *   {"drain": "rack:r7", "max_moves"?: N}                                     every consumer placed outside it
 *
 * The flavor by name comes from the daemon's catalog (`daemon start --flavors FILE`; 404 without
 * one, 400 for a name it does not hold), or is given whole as one entry of a flavor file is. 200
 * also when the goal cannot be met (`possible: false`, with `why`); 400 for a body that is not one
 * goal, 404 for a domain with no hosts.
 */
import {PlacementError} from '../../core/errors.js'
import {FlavorFileError, flavorOfValue} from '../../core/headroom/flavor-file.js'
import {flavorRequest, type FlavorRequest} from '../../core/headroom/flavors.js'
import {lostDomainOf} from '../../core/headroom/what-if-headroom.js'
import type {LostDomain} from '../../core/headroom/what-if.js'
import type {PlanGoal} from '../../core/make-room/record.js'
import {planAside} from '../plan-aside.js'
import {readJson, type Ctx, type RouteDef} from '../context.js'
import {MAKE_ROOM_POST, type MakeRoomPostBody} from '../schemas/make-room.js'
import {PLACEMAT_PREFIX} from './placemat.js'

export const routes: RouteDef[] = [
  {
    method: 'POST',
    url: `${PLACEMAT_PREFIX}/make-room`,
    body: true,
    asks: true,
    async handler(ctx) {
      const body = readJson(ctx, MAKE_ROOM_POST)
      const {goal, flavor} = goalOf(ctx, body)
      const s = await ctx.store.refresh()
      // Planned on the State as it was read, beside the event loop (plan-aside.ts): claims go on.
      return planAside(s, goal, flavor, body.max_moves === undefined ? {} : {maxMoves: body.max_moves})
    },
  },
]

const GOALS = ['flavor', 'free_hosts', 'drain'] as const

const badRequest = (detail: string): never => {
  throw new PlacementError(400, detail)
}

const domainOf = (key: string, v: string): LostDomain =>
  lostDomainOf(v) ?? badRequest(`Invalid ${key} ${v}: host:NAME, rack:NAME, row:NAME or room:NAME.`)

/** The one goal the body asks (with the flavor's request), or a 400 saying how it is not one. */
function goalOf(ctx: Ctx, body: MakeRoomPostBody): {goal: PlanGoal; flavor?: FlavorRequest} {
  const given = GOALS.filter((k) => body[k] !== undefined)
  if (given.length !== 1)
    badRequest(given.length ? `Give one goal, not ${given.join(' and ')}.` : 'Give one goal: flavor (with count), free_hosts or drain.')
  if (body.count !== undefined && given[0] !== 'flavor') badRequest('count goes with flavor (free_hosts is its own count).')
  const within = body.in === undefined ? null : domainOf('in', body.in)
  if (given[0] === 'drain') {
    if (within) badRequest('drain names its domain: give no in with it.')
    return {goal: {goal: 'drain', in: domainOf('drain', body.drain!)}}
  }
  if (given[0] === 'free_hosts') return {goal: {goal: 'free_hosts', count: body.free_hosts!, in: within}}
  if (body.count === undefined) badRequest('flavor needs count: how many more of it should fit.')
  const flavor = flavorOf(ctx, body.flavor!)
  return {goal: {goal: 'flavor', flavor: flavor.flavor, count: body.count!, in: within}, flavor}
}

/** The flavor's request: by name from the daemon's catalog, or read from the body as a flavor file's entry is. */
function flavorOf(ctx: Ctx, flavor: string | Record<string, unknown>): FlavorRequest {
  if (typeof flavor !== 'string') {
    try {
      return flavorRequest(flavorOfValue(flavor, 'flavor'))
    } catch (err) {
      if (err instanceof FlavorFileError) badRequest(err.message)
      throw err
    }
  }
  const catalog = ctx.options.flavors?.flavors
  if (!catalog) throw new PlacementError(404, 'This daemon has no flavor catalog: start it with --flavors FILE, or give the flavor itself.')
  return (
    catalog.find((f) => f.flavor === flavor) ??
    badRequest(`No flavor named ${flavor} in the catalog; it has ${catalog.map((f) => f.flavor).join(', ') || 'none'}.`)
  )
}
