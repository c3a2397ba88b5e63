/**
 * Placement's policy (oslo.policy): the rule of the route against who is asking, decided
 * before the body is read, so a caller who may not use a route never sends it a byte. Skipped
 * for public routes and where every request is trusted (no credentials: the CLI's own file).
 */
import {PlacementError} from '../../core/errors.js'
import {ruleOfRoute} from '../policy/defaults.js'
import {policyTarget} from '../policy/credentials.js'
import type {Policy} from '../policy/policy.js'
import {refuse, routeOf, type Step} from './step.js'

export function authorize(policy: Policy): Step {
  return (req, reply) => {
    const def = routeOf(req)
    if (!def || def.public || !req.credentials) return true
    const rule = ruleOfRoute(def.method, def.url)
    if (policy.authorize(rule, req.credentials, policyTarget(def, req))) return true
    return refuse(req, reply, new PlacementError(403, `Policy does not allow ${rule} to be performed.`))
  }
}
