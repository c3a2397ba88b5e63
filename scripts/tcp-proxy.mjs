// A TCP proxy on loopback for the fault run, the scale-out benchmark and the tests: it stands
// between the daemons and their database and plays the network's part. It can delay every chunk
// each way (this kernel has no netem), cut every connection (a failover, pg_terminate_backend),
// refuse new ones (the database down), swallow them (a partition or a frozen server), and be
// pointed at another server (a VIP moving to a promoted standby).
import net from 'node:net'

export class TcpProxy {
  /**
   * @param {{host?: string, port: number}} target where connections go
   * @param {{delayMs?: number}} options delayMs: added to each direction (a round trip gains twice)
   */
  constructor(target, options = {}) {
    this.target = {host: '127.0.0.1', ...target}
    this.delayMs = options.delayMs ?? 0
    /** 'pass' | 'refuse' | 'blackhole' */
    this.mode = 'pass'
    this.sockets = new Set()
    this.server = net.createServer((client) => this.accept(client))
    this.port = 0
  }

  /** Listens on a free loopback port (or `port`); resolves with it. */
  async listen(port = 0) {
    await new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(port, '127.0.0.1', resolve)
    })
    this.port = this.server.address().port
    return this.port
  }

  accept(client) {
    this.track(client)
    if (this.mode === 'refuse') return client.destroy()
    if (this.mode === 'blackhole') return client.pause()
    const upstream = net.connect(this.target.port, this.target.host)
    this.track(upstream)
    client.setNoDelay(true)
    upstream.setNoDelay(true)
    this.pipe(client, upstream)
    this.pipe(upstream, client)
  }

  track(socket) {
    this.sockets.add(socket)
    socket.on('error', () => socket.destroy())
    socket.on('close', () => this.sockets.delete(socket))
  }

  /**
   * Copies `from` to `to`, each chunk `delayMs` late, in order (one timer for the chunks due,
   * not one per chunk); either end closing closes both once what was sent has arrived.
   */
  pipe(from, to) {
    const queue = []
    let timer = null
    let closed = false
    const flush = () => {
      timer = null
      const now = performance.now()
      while (queue.length && queue[0].due <= now) if (!to.destroyed) to.write(queue.shift().chunk)
      if (queue.length) arm()
      else if (closed) to.destroy()
    }
    const arm = () => {
      timer = setTimeout(flush, Math.max(0, queue[0].due - performance.now()))
    }
    from.on('data', (chunk) => {
      if (!this.delayMs) return void to.write(chunk)
      queue.push({due: performance.now() + this.delayMs, chunk})
      if (!timer) arm()
    })
    from.on('close', () => {
      closed = true
      if (!timer) to.destroy()
    })
  }

  /** Closes every connection open now (new ones are taken as the mode says). */
  cutAll() {
    for (const s of this.sockets) s.destroy()
  }

  /** 'pass', 'refuse' (new connections closed at once) or 'blackhole' (taken and never answered). */
  setMode(mode) {
    this.mode = mode
  }

  /** Sends new connections to another server; open ones are cut (as a VIP moving). */
  repoint(target) {
    this.target = {host: '127.0.0.1', ...target}
    this.cutAll()
  }

  async close() {
    this.cutAll()
    await new Promise((r) => this.server.close(() => r()))
  }
}
