/**
 * What any request must be before a route looks at it, whatever the route: no NUL in the URL,
 * and a content type for a body (Placement's RequireContentType for bodies; webob refuses NULs).
 */
import {sendError} from '../error-reply.js'
import type {Step} from './step.js'

export const admission: Step = (req, reply) => {
  if (req.url.includes('%00') || req.url.includes('\0')) {
    sendError(req, reply, 400, 'NUL characters are not allowed in the URL', null)
    return false
  }
  const clen = req.headers['content-length']
  if (clen !== undefined && Number(clen) > 0 && !req.headers['content-type']) {
    sendError(req, reply, 400, 'content-type header required when content-length > 0', null)
    return false
  }
  return true
}
