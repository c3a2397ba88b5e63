/**
 * keystonemiddleware's auth_token (`--auth keystone`): Keystone validates the token (and a
 * service token) and tells who presents it. The only step that waits; 401 with Keystone's
 * WWW-Authenticate for a token it refuses, 503 when it cannot be asked. Public routes need none.
 */
import type {KeystoneValidator} from '../auth/keystone.js'
import {sendError} from '../error-reply.js'
import {isPublic, presentedToken, unauthenticated, type Step} from './step.js'

export function authKeystone(keystone: KeystoneValidator): Step {
  return (req, reply) => {
    if (isPublic(req)) return true
    const refused = () => unauthenticated(req, reply, {'www-authenticate': keystone.wwwAuthenticate})
    const token = presentedToken(req)
    if (!token) return refused()
    const service = req.headers['x-service-token']
    return keystone.validate(token, typeof service === 'string' ? service : undefined).then(
      (creds) => {
        if (!creds) return refused()
        req.credentials = creds
        return true
      },
      (err: Error) => {
        req.log.error(err)
        sendError(req, reply, 503, 'The identity service (Keystone) cannot be reached to validate the token.', null)
        return false
      },
    )
  }
}
