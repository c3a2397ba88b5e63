/**
 * The --db transport: the daemon's own app run in process on a SQLite file. It lives with the
 * CLI's backends because it builds the server; the client only knows the Transport it implements.
 */
import type {FastifyInstance} from 'fastify'
import type {Store, OpenOptions} from '../../store/store.js'
import type {ApiResponse, Transport} from '../../client/client.js'
import {parseBody} from '../../client/transports.js'

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
    const [{Store}, {buildApp}, {keepHeapNearLive, testPauseInTransaction, youngGenerationHint}, {daemonFiles}] = await Promise.all([
      import('../../store/store.js'),
      import('../../http/app.js'),
      import('../../daemon/node-flags.js'),
      import('../../daemon/paths.js'),
    ])
    keepHeapNearLive()
    // The image the file's daemon left at its last clean stop, read when it fits (never written
    // here: the daemon's is the one image of a file).
    const store = await Store.open(file, {beforeCommit: testPauseInTransaction(), stateImage: daemonFiles(file).state, ...options})
    const hint = youngGenerationHint(store.state.providers.size)
    if (hint) process.stderr.write(`placemat: ${hint}\n`)
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
