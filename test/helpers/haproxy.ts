/** Debian's haproxy, started by a test in the foreground on a configuration it writes. */
import {spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'

export const HAPROXY = '/usr/sbin/haproxy'
export const haproxyAvailable = fs.existsSync(HAPROXY)

/** A port nothing listens on now (taken from the kernel, then let go). */
import {freePort} from './ports.js'

export {freePort}

/** Whether something accepts connections on host:port. */
const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({host, port}, () => {
      s.destroy()
      resolve(true)
    })
    s.on('error', () => resolve(false))
  })

export interface Haproxy {
  port: number
  /** What haproxy said on stderr. */
  output: string[]
  stop(): Promise<void>
}

/**
 * Starts haproxy on `frontend` (the configuration's text, given the port it is to bind) in the
 * foreground (-db), and resolves once the port accepts connections; rejects with what haproxy
 * said if it exits first.
 */
export async function startHaproxy(dir: string, name: string, config: (port: number) => string): Promise<Haproxy> {
  const port = await freePort()
  const file = path.join(dir, `${name}.cfg`)
  fs.writeFileSync(file, config(port))
  const check = spawn(HAPROXY, ['-c', '-f', file], {stdio: ['ignore', 'pipe', 'pipe']})
  const checked = await new Promise<{code: number | null; text: string}>((resolve) => {
    let text = ''
    check.stdout!.on('data', (d) => (text += d))
    check.stderr!.on('data', (d) => (text += d))
    check.on('exit', (code) => resolve({code, text}))
  })
  if (checked.code !== 0) throw new Error(`haproxy refuses ${file}: ${checked.text}`)
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', file], {stdio: ['ignore', 'pipe', 'pipe']})
  const output: string[] = []
  child.stdout!.on('data', (d) => output.push(String(d)))
  child.stderr!.on('data', (d) => output.push(String(d)))
  let exited = false
  child.on('exit', () => (exited = true))
  const stop = async () => {
    if (exited) return
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await gone
  }
  const until = Date.now() + 30_000
  while (!(await accepts('127.0.0.1', port))) {
    if (exited || Date.now() > until) {
      await stop()
      throw new Error(`haproxy did not listen on ${port}: ${output.join('')}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {port, output, stop}
}
