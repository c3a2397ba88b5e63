import type {FastifyInstance} from 'fastify'
import {loggerOptions, type LogLevel} from '../http/access-log.js'
import {buildApp} from '../http/app.js'
import type {AuthMode, CandidateOptions} from '../http/context.js'
import {Store} from '../store/store.js'
import {ensureAdminToken} from './paths.js'

export interface ServerOptions {
  db: string
  host: string
  port: number
  auth: AuthMode
  corsOrigins?: string[]
  corsAllowHeaders?: string[]
  candidates?: CandidateOptions
  /** The log's level: JSON lines on stdout, one per request at info (default silent: no log). */
  logLevel?: LogLevel
  /** Serve /metrics without a token. */
  metricsPublic?: boolean
}

export interface RunningServer {
  app: FastifyInstance
  store: Store
  url: string
  close(): Promise<void>
}

/** Opens the store and serves the Placement API on host:port (port 0 picks a free one). */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const store = await Store.open(opts.db, {backgroundCheckpoint: true})
  const adminToken = opts.auth === 'token' ? ensureAdminToken(opts.db) : undefined
  const app = await buildApp({
    store,
    auth: opts.auth,
    adminToken,
    cors: opts.corsOrigins?.length ? {origins: opts.corsOrigins, allowHeaders: opts.corsAllowHeaders ?? []} : undefined,
    candidates: opts.candidates,
    logger: loggerOptions(opts.logLevel ?? 'silent'),
    metricsPublic: opts.metricsPublic,
  })
  await app.listen({host: opts.host, port: opts.port})
  const addr = app.server.address()
  const port = typeof addr === 'object' && addr ? addr.port : opts.port
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host
  return {
    app,
    store,
    url: `http://${host}:${port}`,
    async close() {
      await app.close()
      await store.close()
    },
  }
}
