/**
 * Content negotiation (Placement's wsgi_wrapper checks): a route that reads a body takes only
 * application/json (415), and a GET answers only a client that accepts JSON (406).
 */
import {PlacementError} from '../../core/errors.js'
import {refuse, routeOf, type Step} from './step.js'

function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase()
}

/** True when an Accept header admits application/json (webob's acceptable_offers). */
function acceptsJson(accept: string | undefined): boolean {
  if (!accept || accept.trim() === '') return true
  for (const range of accept.split(',')) {
    const [type, ...params] = range.trim().toLowerCase().split(';')
    let q = 1
    for (const p of params) {
      const [k, v] = p.trim().split('=')
      if (k === 'q') q = Number(v)
    }
    if (q <= 0) continue
    if (type === 'application/json' || type === 'application/*' || type === '*/*') return true
  }
  return false
}

/** 415 for a body that is not application/json, on a route that reads one. */
export const mediaType: Step = (req, reply) => {
  const def = routeOf(req)
  if (!def?.body || mediaTypeOf(req.headers['content-type']) === 'application/json') return true
  const given = mediaTypeOf(req.headers['content-type']) || 'None'
  return refuse(req, reply, new PlacementError(415, `The media type ${given} is not supported, use application/json`))
}

/** 406 for a GET whose Accept rules JSON out (a few routes do not ask). */
export const acceptable: Step = (req, reply) => {
  const def = routeOf(req)
  if (def?.method !== 'GET' || def.anyAccept || acceptsJson(req.headers.accept)) return true
  return refuse(req, reply, new PlacementError(406, 'Only application/json is provided'))
}
