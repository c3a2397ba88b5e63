// --delay-ms: a TCP proxy (scripts/tcp-proxy.mjs) as a process of its own in front of PostgreSQL,
// each direction delayed so that a round trip through it gains what was asked, as measured.
import {spawn} from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import {ROOT} from '../lib/daemon.mjs'
import {pingMs} from './postgres.mjs'
import {progress, running} from './running.mjs'

/** The delay proxy (scripts/tcp-proxy.mjs) as a process of its own, in front of `targetPort`. */
async function startDelayProxy(targetPort) {
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts', 'tcp-proxy.mjs'), '--target', String(targetPort)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  running.proxyPid = child.pid
  const lines = readline.createInterface({input: child.stdout})
  const next = () =>
    new Promise((resolve, reject) => {
      lines.once('line', resolve)
      child.once('exit', (code) => reject(new Error(`the delay proxy exited (${code})`)))
    })
  const first = await next()
  const port = Number(/^listening (\d+)$/.exec(first)?.[1])
  if (!port) throw new Error(`the delay proxy said: ${first}`)
  const proxy = {
    port,
    delayMs: 0,
    async setDelay(ms) {
      child.stdin.write(`delay ${ms}\n`)
      proxy.delayMs = Number(/^delay ([\d.]+)$/.exec(await next())?.[1])
    },
    async close() {
      child.stdin.end()
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)))
    },
  }
  return proxy
}

/** The delay proxy in front of `dbPort`, set to add `delayMs` to a round trip: it, and `select 1`'s round trip through it and direct. */
export async function calibratedDelayProxy(dbPort, delayMs) {
  const proxy = await startDelayProxy(dbPort)
  const directRtt = await pingMs(dbPort)
  let proxyRtt = null
  // The proxy's own hops cost a little: its per-direction delay is set so that a round trip
  // through it gains what was asked, as measured.
  let each = delayMs / 2
  for (let i = 0; i < 4; i++) {
    await proxy.setDelay(each)
    proxyRtt = await pingMs(proxy.port)
    each = Math.max(0, each - (proxyRtt - directRtt - delayMs) / 2)
  }
  progress(
    `delay proxy on 127.0.0.1:${proxy.port} (${proxy.delayMs.toFixed(3)} ms each way): select 1 takes ${proxyRtt.toFixed(2)} ms through it, ${directRtt.toFixed(2)} ms direct (asked for +${delayMs} ms)`,
  )
  return {proxy, proxyRtt, directRtt}
}
