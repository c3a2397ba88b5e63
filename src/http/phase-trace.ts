/**
 * The HTTP side of the phase profile (src/store/phase-profile.ts), only with PLACEMAT_PROFILE set:
 * each PUT /allocations/{consumer} is traced from Node's request event to its response's finish,
 * and GET /placemat/v1/profile answers the traces finished since it was last asked (then forgets them).
 */
import type http from 'node:http'
import {takeTraces, traceEnd, traceStart} from '../store/phase-profile.js'

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void

/** `handler`, tracing claims and answering GET /placemat/v1/profile. */
export function traced(handler: Handler): Handler {
  return (req, res) => {
    const url = req.url ?? ''
    if (url === '/placemat/v1/profile' && req.method === 'GET') {
      res.writeHead(200, {'content-type': 'application/json'}).end(JSON.stringify(takeTraces()))
      return
    }
    if (req.method === 'PUT' && url.startsWith('/allocations/')) {
      traceStart()
      res.once('finish', traceEnd)
    }
    handler(req, res)
  }
}
