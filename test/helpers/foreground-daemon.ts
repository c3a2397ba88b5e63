/**
 * `placemat daemon start --foreground` of the real binary on any free port (--port 0): resolves
 * with the address it says it listens on, or rejects with what it said when it exits first.
 * Every daemon started is stopped when the test file ends, whatever happened.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {afterAll} from 'vitest'
import {BIN, ROOT, childEnv} from './cli.js'

export {freePort} from './ports.js'

export interface ForegroundDaemon {
  child: ChildProcess
  url: string
  /** stdout and stderr so far, together and each alone (stdout: the JSON log). */
  output(): string
  stdout(): string
  stderr(): string
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>
  stop(): Promise<void>
}

const running = new Set<ChildProcess>()
afterAll(async () => {
  await Promise.all([...running].map((c) => stopChild(c)))
})

function stopChild(child: ChildProcess): Promise<void> {
  running.delete(child)
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000)
    child.once('exit', () => {
      clearTimeout(kill)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

/** Starts the daemon with `args` (after `daemon start --foreground --port 0`, or the port given) in `env` (childEnv's, plus these). */
export function startForeground(args: string[], env: Record<string, string> = {}, port = 0): Promise<ForegroundDaemon> {
  const child = spawn(process.execPath, [BIN, 'daemon', 'start', '--foreground', '--port', String(port), ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let out = ''
  let stdout = ''
  let stderr = ''
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  child.stderr!.on('data', (d) => {
    out += d
    stderr += d
  })
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d
      stdout += d
      const m = /placemat daemon listening on (https?:\/\/\S+)/.exec(out)
      if (m)
        resolve({child, url: m[1], output: () => out, stdout: () => stdout, stderr: () => stderr, exited, stop: () => stopChild(child)})
    })
    child.once('exit', (code) => {
      running.delete(child)
      reject(new Error(`the daemon exited ${code}: ${out}`))
    })
  })
}

/** The daemon's exit code and output when it is expected not to start. */
export function failedStart(args: string[], env: Record<string, string> = {}): Promise<{code: number | null; output: string}> {
  return startForeground(args, env).then(
    async (d) => {
      await d.stop()
      throw new Error(`the daemon started at ${d.url}: ${d.output()}`)
    },
    (err: Error) => {
      const m = /^the daemon exited (\S+): ([\s\S]*)$/.exec(err.message)
      return {code: m && m[1] !== 'null' ? Number(m[1]) : null, output: m ? m[2] : err.message}
    },
  )
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
