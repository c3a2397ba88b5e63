/**
 * Hosts in and out of service (placemat's own, core/host-status.ts):
 *
 *   GET /placemat/v1/hosts                 every host (core/host.ts), by name: its record with
 *                                          the number of its consumers
 *   GET /placemat/v1/hosts/{uuid}          the host: disabled or not, why, where, its consumers,
 *                                          capacity and usage of its tree
 *   PUT /placemat/v1/hosts/{uuid}/status   {disabled, reason?, resource_provider_generation?}:
 *                                          COMPUTE_STATUS_DISABLED set (with the reason) or removed,
 *                                          in one write; answers the host
 *
 * 404 for no such provider, 400 for a provider that is not a root, 409
 * placement.concurrent_update when a generation is given and is not the host's.
 */
import {PlacementError} from '../../core/errors.js'
import {hostListing, hostRecord, setHostStatus} from '../../core/host-status.js'
import {canonicalUuid, isUuidLike, readJson, type Ctx, type RouteDef} from '../context.js'
import {HOST_STATUS_PUT} from '../schemas/host.js'
import {PLACEMAT_PREFIX} from './placemat.js'

const HOST = `${PLACEMAT_PREFIX}/hosts/:uuid`

function hostParam(ctx: Ctx): string {
  const raw = ctx.params.uuid
  if (!isUuidLike(raw)) throw new PlacementError(400, `Malformed host uuid: ${raw}`)
  return canonicalUuid(raw)
}

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/hosts`,
    async handler(ctx) {
      const s = await ctx.store.refresh()
      return {hosts: hostListing(s)}
    },
  },
  {
    method: 'GET',
    url: HOST,
    async handler(ctx) {
      const uuid = hostParam(ctx)
      const s = await ctx.store.refresh()
      return hostRecord(s, uuid)
    },
  },
  {
    method: 'PUT',
    url: `${HOST}/status`,
    body: true,
    async handler(ctx) {
      const uuid = hostParam(ctx)
      const b = readJson(ctx, HOST_STATUS_PUT)
      return ctx.store.write((s, now) => {
        setHostStatus(s, now, uuid, {disabled: b.disabled, reason: b.reason, generation: b.resource_provider_generation})
        return hostRecord(s, uuid)
      })
    },
  },
]
