/**
 * systemd's notify protocol (sd_notify(3)): a `Type=notify` unit learns from the daemon when it
 * serves (READY=1), what it waits for (STATUS=), that it stops (STOPPING=1) or reloads
 * (RELOADING=1), and that it is alive (WATCHDOG=1 every half WatchdogSec). Messages are
 * datagrams to the AF_UNIX socket NOTIFY_SOCKET names ('@' for the abstract namespace).
 *
 * Node has no AF_UNIX datagram socket of its own. node-unix-socket gives one from a prebuilt
 * N-API binary (nothing compiled at install). Spawning `systemd-notify` instead would send from
 * a short-lived child: systemd attributes a message by its sender's pid, so it needs
 * NotifyAccess=all and can still drop a message whose sender has already exited.
 */
import {createRequire} from 'node:module'

/** Where notifications go: the socket's datagram sender, or nothing outside systemd. */
export interface NotifySink {
  send(message: string): void
  close(): void
}

export interface ServiceNotifier {
  /** Serving: READY=1 with a status line. */
  ready(status: string): void
  status(status: string): void
  reloading(): void
  stopping(status: string): void
  /** WATCHDOG=1 every half of WATCHDOG_USEC while the event loop turns (none without a watchdog). */
  startWatchdog(): void
  close(): void
}

/** The notifier outside systemd: no socket, nothing sent. */
export const NOOP: ServiceNotifier = {ready() {}, status() {}, reloading() {}, stopping() {}, startWatchdog() {}, close() {}}

/** A status line fits one datagram field: no newline (it would start another assignment). */
const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ').slice(0, 400)

/**
 * The watchdog period, ms, when systemd set one for this process: WATCHDOG_USEC, and
 * WATCHDOG_PID if set naming this process (a child must not ping for its parent).
 */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv, pid = process.pid): number | undefined {
  const usec = Number(env.WATCHDOG_USEC)
  if (!Number.isFinite(usec) || usec <= 0) return undefined
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== pid) return undefined
  return Math.max(1, Math.floor(usec / 1000 / 2))
}

/** The socket address NOTIFY_SOCKET names: a path, or '@name' for the abstract namespace. */
export function notifyAddress(value: string | undefined): string | undefined {
  if (!value) return undefined
  if (value.startsWith('@')) return '\0' + value.slice(1)
  return value.startsWith('/') ? value : undefined
}

/** The notifier for this process's environment; a no-op outside a notify unit. */
export function serviceNotifier(env: NodeJS.ProcessEnv = process.env, sink?: NotifySink, onError?: (err: Error) => void): ServiceNotifier {
  const address = notifyAddress(env.NOTIFY_SOCKET)
  if (!address && !sink) return NOOP
  let out: NotifySink
  try {
    out = sink ?? datagramSink(address!)
  } catch (err) {
    onError?.(err as Error)
    return NOOP
  }
  const send = (message: string) => {
    try {
      out.send(message)
    } catch (err) {
      onError?.(err as Error)
    }
  }
  const interval = watchdogIntervalMs(env)
  let watchdog: NodeJS.Timeout | undefined
  return {
    ready: (status) => send(`READY=1\nSTATUS=${oneLine(status)}\nMAINPID=${process.pid}`),
    status: (status) => send(`STATUS=${oneLine(status)}`),
    reloading: () => send(`RELOADING=1\nMONOTONIC_USEC=${monotonicUsec()}`),
    stopping: (status) => send(`STOPPING=1\nSTATUS=${oneLine(status)}`),
    startWatchdog() {
      if (interval === undefined || watchdog) return
      send('WATCHDOG=1')
      watchdog = setInterval(() => send('WATCHDOG=1'), interval)
      watchdog.unref()
    },
    close() {
      if (watchdog) clearInterval(watchdog)
      out.close()
    },
  }
}

/** CLOCK_MONOTONIC in microseconds, which RELOADING=1 carries (systemd 253 and later read it). */
const monotonicUsec = () => (process.hrtime.bigint() / 1000n).toString()

/** A datagram socket sending to `address` (loaded only under systemd: other runs never need it). */
function datagramSink(address: string): NotifySink {
  const require = createRequire(import.meta.url)
  const {DgramSocket} = require('node-unix-socket') as typeof import('node-unix-socket')
  const socket = new DgramSocket()
  return {
    send(message) {
      const buf = Buffer.from(message)
      socket.sendTo(buf, 0, buf.length, address)
    },
    close: () => socket.close(),
  }
}
