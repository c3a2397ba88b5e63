/** `placemat daemon start --foreground` in a child process on a random port, its output kept. */
import {spawn, type ChildProcess} from 'node:child_process'
import net from 'node:net'
import {BIN, ROOT, childEnv} from './cli.js'

export const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const {port} = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })

export interface ForegroundDaemon {
  child: ChildProcess
  url: string
  stdout: () => string
  stderr: () => string
  exited: Promise<number | null>
  /** Ends the process whatever it is doing (a test's cleanup). */
  kill(): void
}

/** Whether something accepts connections on the port (plain HTTP or TLS alike). */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)))
    socket.on('error', () => resolve(false))
  })

/** Starts the daemon and resolves once it listens, or rejects with its output. */
export async function startForeground(args: string[], env: Record<string, string> = {}): Promise<ForegroundDaemon> {
  const port = await freePort()
  const child = spawn(process.execPath, [BIN, 'daemon', 'start', '--foreground', '--port', String(port), ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  const d: ForegroundDaemon = {
    child,
    url: `http://127.0.0.1:${port}`,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    },
  }
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${err}${out}`)
    if (await accepts(port)) return d
    await new Promise((r) => setTimeout(r, 50))
  }
  d.kill()
  throw new Error(`daemon did not listen: ${err}${out}`)
}

/** Polls `check` until it holds (a generous bound: a slow machine waits, it does not fail). */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}
