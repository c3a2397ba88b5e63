/**
 * Where the daemon is in its life, as the HTTP layer sees it: serving, or stopping (SIGTERM):
 * health then answers 503 "stopping" so a balancer takes the node out, every answer carries
 * `Connection: close` so kept-alive clients reconnect elsewhere, and the requests still in
 * flight are counted until the last is answered.
 */
import type {FastifyInstance} from 'fastify'

export class ServiceState {
  stopping = false
  /** Requests received and not yet answered. */
  inFlight = 0
  /** A request arrived while another was in flight, since overlapped() last answered. */
  private overlap = false
  private idle: Array<() => void> = []
  private readonly open = new WeakSet<object>()

  /** Counts requests and, once stopping, closes each connection after its answer. */
  attach(app: FastifyInstance): void {
    app.addHook('onRequest', (req, _reply, done) => {
      this.open.add(req)
      if (++this.inFlight > 1) this.overlap = true
      done()
    })
    app.addHook('onSend', (_req, reply, payload, done) => {
      if (this.stopping) reply.header('connection', 'close')
      done(null, payload)
    })
    // An aborted request may also end in onResponse: each is counted out once.
    app.addHook('onResponse', (req, _reply, done) => {
      if (this.open.delete(req)) this.answered()
      done()
    })
    app.addHook('onRequestAbort', (req, done) => {
      if (this.open.delete(req)) this.answered()
      done()
    })
  }

  /**
   * Whether requests overlapped (one arrived while another was in flight) since the last call,
   * or do now: others are being served, and a write's sync should leave the event loop to them.
   */
  overlapped(): boolean {
    const was = this.overlap || this.inFlight > 1
    this.overlap = false
    return was
  }

  private answered(): void {
    if (--this.inFlight > 0) return
    const waiting = this.idle
    this.idle = []
    for (const resolve of waiting) resolve()
  }

  /** Resolves once no request is in flight. */
  whenIdle(): Promise<void> {
    if (this.inFlight <= 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }
}
