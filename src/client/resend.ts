/**
 * fetch, sent once more when the kept-alive connection it reused had been closed by the server
 * (undici's "other side closed", node:http's ECONNRESET): servers that close after every answer
 * (uwsgi's http-socket, in front of Keystone and of Placement) race with the client's reuse of
 * the connection.
 */
export const closedUnderUs = (err: unknown): boolean => {
  // fetch's error carries the socket's as its cause; node:http's is the socket's own.
  const e = err as {code?: string; cause?: {code?: string}}
  const code = e?.cause?.code ?? e?.code
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET'
}

export async function fetchResent(url: string, init: RequestInit & {timeoutMs?: number} = {}): Promise<Response> {
  const {timeoutMs, ...rest} = init
  const send = () => fetch(url, timeoutMs ? {...rest, signal: AbortSignal.timeout(timeoutMs)} : rest)
  try {
    return await send()
  } catch (err) {
    if (!closedUnderUs(err)) throw err
    return send()
  }
}
