/**
 * Placement's noauth2 (`--auth noauth2`): any token is accepted and read as USER[:PROJECT],
 * with roles from x-roles (policy/credentials.ts). Public routes need none.
 */
import {noauthCredentials} from '../policy/credentials.js'
import {isPublic, presentedToken, unauthenticated, type Step} from './step.js'

export const authNoauth2: Step = (req, reply) => {
  if (isPublic(req)) return true
  const token = presentedToken(req)
  if (token === undefined) return unauthenticated(req, reply)
  req.credentials = noauthCredentials(token, req.headers)
  return true
}
