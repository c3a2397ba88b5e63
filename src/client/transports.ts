import {unreachable, type ApiResponse, type Transport} from './client.js'
import {fetchResent} from './resend.js'

/** A response body as JSON when it says it is JSON (and parses), else as text; nothing when empty. */
export function parseBody(text: string, contentType: string | undefined): unknown {
  if (!text) return undefined
  if (contentType?.includes('json')) {
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  return text
}

/** Talks HTTP to a placemat daemon or any Placement endpoint. */
export class HttpTransport implements Transport {
  readonly description: string

  constructor(
    readonly baseUrl: string,
    readonly token: string | undefined,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '')
    this.description = this.baseUrl
  }

  async send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<ApiResponse> {
    const h = {...headers}
    if (this.token) h['x-auth-token'] = this.token
    let res: Response
    try {
      res = await fetchResent(this.baseUrl + path, {method, headers: h, body})
    } catch (err) {
      throw unreachable(this.baseUrl, err)
    }
    const text = await res.text()
    const headersOut: Record<string, string> = {}
    res.headers.forEach((v, k) => (headersOut[k] = v))
    return {status: res.status, body: parseBody(text, headersOut['content-type']), headers: headersOut}
  }

  async close(): Promise<void> {}

  async address(): Promise<{url: string; token: string | undefined}> {
    return {url: this.baseUrl, token: this.token}
  }
}
