/**
 * The access log: one JSON line per request, through fastify's logger (pino). A line holds the
 * method, the URL path (as received) and its query string apart, the status, the response time,
 * Placement's request id (and the client's global request id, when it sent one) and the client's
 * address (behind a trusted proxy, the one it forwarded): never a header, so never a token.
 */
import type {FastifyError, FastifyInstance, FastifyRequest} from 'fastify'
import {edgeOf, type EdgeOptions} from './edge.js'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

/**
 * fastify's logger options for the daemon at `level` (false: no logger at all). Lines go to
 * stdout (or `stream`) with an ISO 8601 time; header values that may hold a credential are
 * redacted should anything ever log a request's headers.
 */
export function loggerOptions(level: LogLevel, stream?: {write(line: string): void}, reloadable = false): false | Record<string, unknown> {
  // A daemon keeps a logger even when silent: a reload may raise its level.
  if (level === 'silent' && !reloadable) return false
  return {
    level,
    ...(stream ? {stream} : {}),
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
    redact: {
      paths: [
        'req.headers["x-auth-token"]',
        'req.headers.authorization',
        'req.headers.cookie',
        'headers["x-auth-token"]',
        'headers.authorization',
        'headers.cookie',
      ],
      censor: '[redacted]',
    },
  }
}

/** The error a request failed with, for its access line (5xx only). */
const failures = new WeakMap<FastifyRequest, Error>()

/** Logs each request once it is answered: info for 1xx-4xx, error for 5xx (with the error's message). */
export function accessLog(app: FastifyInstance, edge?: EdgeOptions): void {
  app.addHook('onError', (req, _reply, err: FastifyError, done) => {
    failures.set(req, err)
    done()
  })
  // At debug, a request is logged when it arrives too: one that never ends still shows.
  app.addHook('onRequest', (req, _reply, done) => {
    if (req.log.level === 'debug' || req.log.level === 'trace')
      req.log.debug({method: req.method, path: req.url.split('?')[0], remote_addr: req.ip}, 'request received')
    done()
  })
  app.addHook('onResponse', (req, reply, done) => {
    const url = req.originalUrl
    const q = url.indexOf('?')
    const status = reply.statusCode
    const line: Record<string, unknown> = {
      method: req.method,
      path: q < 0 ? url : url.slice(0, q),
      ...(q < 0 ? {} : {query: url.slice(q + 1)}),
      status,
      duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
      remote_addr: edgeOf(req, edge).client,
    }
    if (req.mv) line.microversion = req.mv.toString()
    if (status >= 500) {
      const err = failures.get(req)
      if (err) line.error = err.message
      req.log.error(line, 'request')
    } else {
      req.log.info(line, 'request')
    }
    done()
  })
}
