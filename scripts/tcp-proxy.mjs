// A TCP proxy on loopback for the fault run, the scale-out benchmark and the tests: it stands
// between the daemons and their database and plays the network's part. It can delay every chunk
// each way (this kernel has no netem), cut every connection (a failover, pg_terminate_backend),
// refuse new ones (the database down), swallow them (a partition or a frozen server), drop what
// servers answer (a COMMIT done whose answer is lost on its way), and be pointed at another server
// (a VIP moving to a promoted standby).
import net from 'node:net'
import {PreciseClock, nowMs} from './precise-clock.mjs'

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
    /**
     * While set (a RegExp), a connection whose client sends a chunk it matches gets no more of
     * what its server answers: the client waits, never told (a COMMIT's answer lost on its way).
     */
    this.dropRepliesAfter = null
    this.sockets = new Set()
    this.server = net.createServer((client) => this.accept(client))
    this.port = 0
    /**
     * Chunks on their way, every direction of every connection in one line: the delay is the same
     * for all, so they fall due in the order they came.
     */
    this.inFlight = []
    this.clock = null
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
    const conn = {dropping: false}
    this.pipe(client, upstream, (chunk) => {
      if (this.dropRepliesAfter?.test(chunk.toString('latin1'))) conn.dropping = true
      return true
    })
    this.pipe(upstream, client, () => !conn.dropping)
  }

  track(socket) {
    this.sockets.add(socket)
    socket.on('error', () => socket.destroy())
    socket.on('close', () => this.sockets.delete(socket))
  }

  /**
   * Copies `from` to `to` what `passes` lets through, each chunk `delayMs` late, in order; either
   * end closing closes both once what was sent has arrived.
   */
  pipe(from, to, passes = () => true) {
    from.on('data', (chunk) => {
      if (!passes(chunk)) return
      if (!this.delayMs) return void to.write(chunk)
      this.send({due: nowMs() + this.delayMs, to, chunk})
    })
    from.on('close', () => {
      if (!this.delayMs) return void to.destroy()
      this.send({due: nowMs() + this.delayMs, to, chunk: null})
    })
  }

  send(entry) {
    this.inFlight.push(entry)
    this.clock ??= new PreciseClock(() => this.deliver())
    if (this.inFlight.length === 1) this.clock.wakeAt(entry.due)
  }

  /** Delivers what fell due (a null chunk closes its socket), and asks to be woken for the rest. */
  deliver() {
    const now = nowMs()
    let k = 0
    for (; k < this.inFlight.length && this.inFlight[k].due <= now; k++) {
      const {to, chunk} = this.inFlight[k]
      if (to.destroyed) continue
      if (chunk === null) to.destroy()
      else to.write(chunk)
    }
    this.inFlight.splice(0, k)
    if (this.inFlight.length) this.clock.wakeAt(this.inFlight[0].due)
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
    await this.clock?.close()
  }
}

/**
 * Run on its own (`node scripts/tcp-proxy.mjs --target PORT --delay-ms D`), the proxy is a process
 * of its own, so a busy caller's event loop does not add to its delays. It prints
 * `listening PORT`; a line `delay D` on its stdin sets the delay of each direction anew.
 */
if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name) => {
    const k = process.argv.indexOf(`--${name}`)
    return k > 0 ? process.argv[k + 1] : undefined
  }
  const proxy = new TcpProxy({port: Number(arg('target'))}, {delayMs: Number(arg('delay-ms') ?? 0)})
  const port = await proxy.listen(Number(arg('port') ?? 0))
  process.stdout.write(`listening ${port}\n`)
  let pending = ''
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (text) => {
    pending += text
    let nl
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).trim()
      pending = pending.slice(nl + 1)
      const m = /^delay ([\d.]+)$/.exec(line)
      if (m) proxy.delayMs = Number(m[1])
      process.stdout.write(m ? `delay ${proxy.delayMs}\n` : `unknown command: ${line}\n`)
    }
  })
  process.stdin.on('end', () => void proxy.close().then(() => process.exit(0)))
}
