/**
 * Microversions (Placement's MicroversionMiddleware and version_handler): the version a request
 * asks for, refused when out of range, and each route's lowest version.
 */
import {PlacementError} from '../../core/errors.js'
import {sendError} from '../error-reply.js'
import {MIN_VERSION, Version, negotiate} from '../microversion.js'
import {refuse, routeOf, type Step} from './step.js'

/** The version asked for (the minimum when none is), echoed on the answer; 400 or 406 when it cannot be served. */
export const negotiateVersion: Step = (req, reply) => {
  const negotiated = negotiate(req.headers['openstack-api-version'])
  if (!negotiated.ok) {
    req.mv = new Version(MIN_VERSION[0], MIN_VERSION[1])
    sendError(req, reply, negotiated.status, negotiated.detail, null, {}, false)
    return false
  }
  req.mv = negotiated.version
  reply.header('openstack-api-version', `placement ${req.mv}`)
  reply.header('vary', 'openstack-api-version')
  return true
}

/** Below a route's lowest microversion the route does not exist: 404, as Placement's version_handler answers. */
export const routeVersion: Step = (req, reply) => {
  const def = routeOf(req)
  if (def?.minVersion !== undefined && req.mv.lt(def.minVersion)) return refuse(req, reply, new PlacementError(404, ''))
  return true
}
