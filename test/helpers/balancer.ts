/**
 * A load balancer for tests, as haproxy with `retry-on conn-failure 503` would be: round robin over
 * the nodes, a request tried again on the next node when the one it went to refused the connection,
 * lost it, or answered 503 (draining, starting, or its database away), up to `attempts` tries, with
 * a pause after each round of the nodes; then it answers 503 itself. The body is kept to be sent
 * again. A fresh connection per try, as a balancer that closes them on `Connection: close` would.
 */
import http from 'node:http'

/**
 * Set on an answer when a try before it lost its connection: a request sent again may find its
 * work done (a DELETE then answers 404), as behind any balancer that retries a lost request.
 */
export const RESENT_AFTER_LOST = 'x-test-resent-after-lost'

export interface Balancer {
  url: string
  /** Tries sent again to another node (after a 503, or a connection that failed), and requests answered 503 after the last try. */
  stats: {retried: number; after503: number; afterConnection: number; gaveUp: number; titles503: Record<string, number>}
  close(): Promise<void>
}

export async function startBalancer(nodes: string[], opts: {attempts?: number; pauseMs?: number} = {}): Promise<Balancer> {
  const attempts = opts.attempts ?? 10
  const pauseMs = opts.pauseMs ?? 200
  const stats = {retried: 0, after503: 0, afterConnection: 0, gaveUp: 0, titles503: {} as Record<string, number>}
  let next = 0
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks)
    const headers = {...req.headers}
    delete headers.host
    delete headers.connection
    // Tries whose connection was lost: the node may have done the request before it went away.
    let lost = 0
    for (let attempt = 0; ; attempt++) {
      const node = nodes[next++ % nodes.length]
      const answer = await send(node, req.method ?? 'GET', req.url ?? '/', headers, body)
      const last = attempt + 1 >= attempts
      if (answer !== null && (answer.status !== 503 || last)) {
        const out = {...answer.headers}
        delete out.connection
        delete out['transfer-encoding']
        delete out['keep-alive']
        if (lost) out[RESENT_AFTER_LOST] = String(lost)
        res.writeHead(answer.status, out).end(answer.body)
        return
      }
      if (answer === null) lost++
      if (last) {
        stats.gaveUp++
        res.writeHead(503, {'content-type': 'application/json', 'retry-after': '1'})
        res.end(JSON.stringify({errors: [{status: 503, title: 'Service Unavailable', detail: `no node answered in ${attempts} tries`}]}))
        return
      }
      stats.retried++
      if (answer === null) stats.afterConnection++
      else {
        stats.after503++
        const title = titleOf(answer.body)
        stats.titles503[title] = (stats.titles503[title] ?? 0) + 1
      }
      // A pause after each round of the nodes: a node restarting gets the time to listen again.
      if ((attempt + 1) % nodes.length === 0)
        await new Promise((r) => setTimeout(r, Math.min(pauseMs * ((attempt + 1) / nodes.length), 500)))
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as {port: number}).port
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

/** One try: the node's answer, or null when the connection failed before one came. */
function send(
  node: string,
  method: string,
  path: string,
  headers: http.OutgoingHttpHeaders,
  body: Buffer,
): Promise<{status: number; headers: http.IncomingHttpHeaders; body: Buffer} | null> {
  return new Promise((resolve) => {
    const req = http.request(
      `${node}${path}`,
      {method, headers: {...headers, 'content-length': String(body.length)}, agent: false, timeout: 60_000},
      (res) => {
        const parts: Buffer[] = []
        res.on('data', (c) => parts.push(c))
        res.on('end', () => resolve({status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(parts)}))
        res.on('error', () => resolve(null))
      },
    )
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', () => resolve(null))
    req.end(body)
  })
}

/** The title of a Placement error body, for counting 503s by what they said. */
function titleOf(body: Buffer): string {
  try {
    const e = JSON.parse(body.toString()).errors?.[0]
    return `${e?.title ?? '?'}: ${
      String(e?.detail ?? '')
        .split('\n')
        .filter(Boolean)
        .at(-1)
        ?.slice(0, 80) ?? ''
    }`
  } catch {
    return body.toString().slice(0, 80)
  }
}
