import type {Agent} from 'node:http'
import {unreachable, type ApiResponse, type Transport} from './client.js'
import {closedUnderUs} from './resend.js'

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

/** What one exchange answered: the status, the body as text, the headers (lower case, repeated ones joined). */
interface Answer {
  status: number
  text: string
  headers: Record<string, string>
}

/**
 * Talks HTTP to a placemat daemon or any Placement endpoint, over node:http (node:https for an
 * https URL), its connections kept alive for the command's next request and closed with it.
 * Not fetch: loading undici, Node's fetch, was about 90 of a `provider list`'s 290 ms.
 */
export class HttpTransport implements Transport {
  readonly description: string
  /** node:http, or node:https (with TLS, some 20 ms to load) for an https URL, loaded at the first request. */
  private client: Promise<{request: typeof import('node:http').request; agent: Agent}> | undefined

  constructor(
    readonly baseUrl: string,
    readonly token: string | undefined,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '')
    this.description = this.baseUrl
  }

  private http() {
    this.client ??= (this.baseUrl.startsWith('https:') ? import('node:https') : import('node:http')).then((m) => ({
      request: m.request as typeof import('node:http').request,
      agent: new m.Agent({keepAlive: true}),
    }))
    return this.client
  }

  async send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<ApiResponse> {
    const h: Record<string, string> = {...headers}
    if (this.token) h['x-auth-token'] = this.token
    if (body !== undefined) h['content-length'] = String(Buffer.byteLength(body))
    const url = this.baseUrl + path
    let answer: Answer
    try {
      answer = await this.exchange(method, url, h, body).catch((err) => {
        // A kept-alive connection the server closed as it was reused: sent once more.
        if (!closedUnderUs(err)) throw err
        return this.exchange(method, url, h, body)
      })
    } catch (err) {
      throw unreachable(this.baseUrl, err)
    }
    return {status: answer.status, body: parseBody(answer.text, answer.headers['content-type']), headers: answer.headers}
  }

  private async exchange(method: string, url: string, headers: Record<string, string>, body: string | undefined): Promise<Answer> {
    const {request, agent} = await this.http()
    return new Promise((resolve, reject) => {
      const req = request(url, {method, headers, agent}, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => {
          const out: Record<string, string> = {}
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v
          resolve({status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: out})
        })
      })
      req.on('error', reject)
      req.end(body)
    })
  }

  async close(): Promise<void> {
    if (this.client) (await this.client).agent.destroy()
  }

  async address(): Promise<{url: string; token: string | undefined}> {
    return {url: this.baseUrl, token: this.token}
  }
}
