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
  /** When a request last arrived or was answered (performance.now()). */
  private lastActive = -Infinity
  private readonly open = new WeakSet<object>()

  /** Counts requests and, once stopping, closes each connection after its answer. */
  attach(app: FastifyInstance): void {
    app.addHook('onRequest', (req, _reply, done) => {
      this.open.add(req)
      this.lastActive = performance.now()
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
    this.lastActive = performance.now()
    if (--this.inFlight > 0) return
    const waiting = this.idle
    this.idle = []
    for (const resolve of waiting) resolve()
  }

  /**
   * Resolves once no request has been in flight for `ms` on end, counted from the call at the
   * earliest (background work waits for it; a request may be waiting unread in its socket).
   */
  async quiet(ms: number): Promise<void> {
    const asked = performance.now()
    for (;;) {
      await this.whenIdle()
      const left = Math.max(this.lastActive, asked) + ms - performance.now()
      if (left <= 0 && this.inFlight <= 0) return
      await new Promise((resolve) => setTimeout(resolve, Math.max(left, 1)))
    }
  }

  /** Resolves once no request is in flight. */
  whenIdle(): Promise<void> {
    if (this.inFlight <= 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }
}
