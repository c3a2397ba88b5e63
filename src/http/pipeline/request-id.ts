/**
 * Every answer, refusals included, carries the x-openstack-request-id its log lines carry
 * (Placement's RequestId middleware). A client's own X-OpenStack-Request-ID (nova's global
 * request id) is taken as the global request id when it has oslo.middleware's form (`req-` and a
 * lower-case UUID), and every log line of the request carries it; any other value is ignored.
 * The answer keeps placemat's own id, as Placement's does.
 */
import type {Step} from './step.js'

const GLOBAL_REQUEST_ID = /^req-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$/

export const requestId: Step = (req, reply) => {
  req.requestId = req.id
  reply.header('x-openstack-request-id', req.requestId)
  const global = req.headers['x-openstack-request-id']
  if (typeof global === 'string' && GLOBAL_REQUEST_ID.test(global)) {
    req.log = reply.log = req.log.child({global_request_id: global})
  }
  return true
}
