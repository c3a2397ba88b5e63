/** The one way an error reaches a client: Placement's JSON error body, or webob's HTML page. */
import type {FastifyReply, FastifyRequest} from 'fastify'
import {ErrorCode, type ErrorCodeValue} from '../core/errors.js'
import {detailText, errorBody} from './errors.js'
import {maxVersionString, minVersionString} from './microversion.js'

/**
 * Sends Placement's error body (or webob's HTML page when the client prefers HTML). The error
 * code is given from microversion 1.23, when the version is known; a 406 for a version out of
 * range names the range.
 */
export function sendError(
  req: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
  code: string | null,
  headers: Record<string, string> = {},
  versionKnown = true,
  title?: string,
) {
  const detail = detailText(status, message, req.method)
  const withCode = versionKnown && req.mv?.gte(23) ? (code ?? ErrorCode.DEFAULT) : null
  const extra = !versionKnown && status === 406 ? {max_version: maxVersionString(), min_version: minVersionString()} : {}
  for (const [k, v] of Object.entries(headers)) reply.header(k, v)
  reply.code(status)
  if (prefersHtml(req.headers.accept)) {
    reply.type('text/html; charset=UTF-8')
    return reply.send(
      `<html>\n <head>\n  <title>${status}</title>\n </head>\n <body>\n  <h1>${status}</h1>\n  ${escapeHtml(detail)}\n </body>\n</html>`,
    )
  }
  reply.header('content-type', 'application/json')
  // A Buffer: fastify adds no charset to it, even where the onSend hook does not run (framework errors).
  return reply.send(Buffer.from(JSON.stringify(errorBody(status, detail, req.requestId, withCode as ErrorCodeValue | null, extra, title))))
}

function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false
  const a = accept.toLowerCase()
  return a.includes('text/html') && !a.includes('application/json') && !a.includes('*/*')
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
