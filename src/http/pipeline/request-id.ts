/** Every answer, refusals included, carries the x-openstack-request-id its log lines carry (Placement's RequestId middleware). */
import type {Step} from './step.js'

export const requestId: Step = (req, reply) => {
  req.requestId = req.id
  reply.header('x-openstack-request-id', req.requestId)
  return true
}
