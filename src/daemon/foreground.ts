/**
 * The daemon in the foreground, from start to exit: it serves, records itself for `daemon
 * status/stop`, tells systemd where it is (notify protocol), drains on SIGTERM and reloads on
 * SIGHUP (lifecycle.ts).
 */
import type {LogLevel} from '../http/access-log.js'
import {describeTarget, resolveTarget} from '../store/target.js'
import {removeRecord, writeRecord} from './control.js'
import {handleSignals, type DrainTimes} from './lifecycle.js'
import {startServer, type RunningServer, type ServerOptions} from './server.js'
import {serviceNotifier} from './service-notify.js'

export interface ForegroundOptions extends ServerOptions {
  shutdown: DrainTimes
  /** The log level the settings give on a reload (the configuration file read again). */
  reloadLogLevel?: () => LogLevel
  /**
   * Detached by `daemon start`: its stderr is its log file, so what the daemon logs is not said
   * there again in plain words (every line of the file is a JSON line).
   */
  detached?: boolean
}

/** Serves until a signal stops the process; throws only when the daemon cannot start. */
export async function runForeground(opts: ForegroundOptions, say: (line: string) => void): Promise<RunningServer> {
  const notifier = serviceNotifier(process.env, undefined, (err) => say(`warning: systemd notification failed: ${err.message}`))
  notifier.status(`opening database ${describeTarget(opts.db)}`)
  // What the daemon logs anyway; said on stderr too unless stderr is the log.
  const outside = opts.detached ? () => undefined : (line: string) => void process.stderr.write(`placemat: ${line}\n`)
  let server: RunningServer
  try {
    // Recorded once it listens (`daemon start` waits for its own record, not for any answer at the address).
    const onListening = (url: string) =>
      writeRecord(opts.db, {pid: process.pid, url, db: resolveTarget(opts.db), stopTimeoutMs: opts.shutdown.timeoutMs})
    server = await startServer({...opts, notifier, onListening, say: outside})
  } catch (err) {
    removeRecord(opts.db, process.pid)
    notifier.close()
    throw err
  }
  handleSignals({
    service: server.service,
    notifier,
    log: server.app.log,
    times: opts.shutdown,
    reloadSources: {
      policy: server.policy,
      logLevel: opts.reloadLogLevel,
      tls: opts.edge?.tls ? () => server.reloadTls() : undefined,
      flavors: server.flavors ? () => server.flavors!.load() : undefined,
    },
    async close() {
      removeRecord(opts.db, process.pid)
      await server.close()
    },
    exit: (code) => {
      server.flushLog()
      process.exit(code)
    },
    say: outside,
  })
  // Said once the signals are handled: whoever reads this line may stop the daemon at once.
  say(`placemat daemon listening on ${server.url} (database ${describeTarget(opts.db)}, auth ${opts.auth})`)
  notifier.ready(`serving ${server.url}`)
  notifier.startWatchdog()
  return server
}
