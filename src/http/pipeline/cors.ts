/**
 * CORS (oslo.middleware's, only when configured): a preflight is answered here, before the
 * version, authentication and routing; an allowed origin is echoed on every other answer.
 */
import type {AppOptions} from '../context.js'
import {MIN_VERSION} from '../microversion.js'
import type {Step} from './step.js'

export function cors(config: NonNullable<AppOptions['cors']>): Step {
  const allowHeaders = () => config.allowHeaders.map((x) => x.toLowerCase())
  return (req, reply) => {
    const origin = req.headers.origin
    if (typeof origin !== 'string') return true
    const allowed = config.origins.includes(origin) || config.origins.includes('*')
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      reply.header('openstack-api-version', `placement ${MIN_VERSION[0]}.${MIN_VERSION[1]}`)
      reply.header('vary', 'openstack-api-version')
      if (allowed) {
        reply.header('access-control-allow-origin', origin)
        reply.header('access-control-allow-methods', String(req.headers['access-control-request-method']))
        const wanted = String(req.headers['access-control-request-headers'] ?? '')
          .split(',')
          .map((h) => h.trim().toLowerCase())
          .filter(Boolean)
        const ok = wanted.filter((h) => allowHeaders().includes(h))
        if (ok.length) reply.header('access-control-allow-headers', ok.join(','))
        reply.header('vary', 'Origin')
      }
      reply.code(200).send()
      return false
    }
    if (allowed) {
      reply.header('access-control-allow-origin', origin)
      reply.header('vary', 'Origin')
    }
    return true
  }
}
