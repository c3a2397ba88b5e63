import type {FastifyInstance} from 'fastify'
import type {Store, OpenOptions} from '../store/store.js'
import {UnreachableError, type ApiResponse, type Transport} from './client.js'
import {fetchResent} from './resend.js'

function parseBody(text: string, contentType: string | undefined): unknown {
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
      const cause = (err as {cause?: {code?: string}}).cause
      throw new UnreachableError(`cannot reach ${this.baseUrl} (${cause?.code ?? (err as Error).message})`)
    }
    const text = await res.text()
    const headersOut: Record<string, string> = {}
    res.headers.forEach((v, k) => (headersOut[k] = v))
    return {status: res.status, body: parseBody(text, headersOut['content-type']), headers: headersOut}
  }

  async close(): Promise<void> {}
}

/** Runs the daemon's own app in process on a SQLite file: same routes, same transactions. */
export class LocalTransport implements Transport {
  readonly description: string

  private constructor(
    readonly store: Store,
    private readonly app: FastifyInstance,
  ) {
    this.description = store.file
  }

  static async open(file: string, options: OpenOptions = {}): Promise<LocalTransport> {
    // Loaded on demand: HTTP-only invocations never pay for the app, kysely and SQLite.
    const [{Store}, {buildApp}, {keepHeapNearLive, testPauseInTransaction}] = await Promise.all([
      import('../store/store.js'),
      import('../http/app.js'),
      import('../daemon/node-flags.js'),
    ])
    keepHeapNearLive()
    const store = await Store.open(file, {pauseInTransactionMs: testPauseInTransaction(), ...options})
    const app = await buildApp({store, auth: 'trusted'})
    await app.ready()
    return new LocalTransport(store, app)
  }

  async send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<ApiResponse> {
    const res = await this.app.inject({method: method as any, url: path, headers, payload: body})
    const headersOut: Record<string, string> = {}
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headersOut[k] = String(v)
    return {status: res.statusCode, body: parseBody(res.body, headersOut['content-type']), headers: headersOut}
  }

  async close(): Promise<void> {
    await this.app.close()
    await this.store.close()
  }
}
