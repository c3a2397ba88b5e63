/**
 * A serving daemon's signals. SIGTERM (and SIGINT) drain it: health answers 503 "stopping" at
 * once, so a balancer takes the node out; answers carry `Connection: close`; new requests are
 * still served for the shutdown delay (the balancer's time to notice), then the listener closes,
 * what is in flight is answered and committed, and the process exits, all within the shutdown
 * timeout or it exits 1 saying how many requests were left. SIGHUP reloads what can change
 * without a restart (the policy file, the log level, the TLS certificate, the flavor file), each on its own: a
 * bad file is refused, naming it, and what was in force stays.
 */
import type {FastifyBaseLogger} from 'fastify'
import type {LogLevel} from '../http/access-log.js'
import type {Policy} from '../http/policy/policy.js'
import type {ServiceState} from '../http/service-state.js'
import type {ServiceNotifier} from './service-notify.js'

export interface DrainTimes {
  /** How long health says "stopping" while the listener still accepts, ms. */
  delayMs: number
  /** From the signal to the exit, whatever is left, ms. */
  timeoutMs: number
}

/** What a reload reads again; each part reports on its own. */
export interface ReloadSources {
  policy: Policy
  /** The log level the settings give now (a configuration file read again); throws on a bad file. */
  logLevel?: () => LogLevel
  /** Rereads the certificate and key (HTTPS only); throws naming a file that cannot be used. */
  tls?: () => {changed: boolean}
  /** Rereads the flavor file (--flavors only): how many flavors it holds; throws naming a file that cannot be used. */
  flavors?: () => number
}

export interface ReloadReport {
  policy: {changed: string[]} | {error: string}
  logLevel?: {from: LogLevel; to: LogLevel} | {error: string}
  tls?: {changed: boolean} | {error: string}
  flavors?: {count: number} | {error: string}
}

const failed = (err: unknown) => ({error: (err as Error).message})

/** Applies a reload to a running app's policy, logger and certificate; never throws. */
export function reload(log: FastifyBaseLogger, sources: ReloadSources): ReloadReport {
  const report: ReloadReport = {policy: {changed: []}}
  try {
    report.policy = {changed: sources.policy.reload()}
  } catch (err) {
    report.policy = failed(err)
  }
  if (sources.logLevel) {
    try {
      const from = log.level as LogLevel
      const to = sources.logLevel()
      if (to !== from) log.level = to
      report.logLevel = {from, to}
    } catch (err) {
      report.logLevel = failed(err)
    }
  }
  if (sources.tls) {
    try {
      report.tls = sources.tls()
    } catch (err) {
      report.tls = failed(err)
    }
  }
  if (sources.flavors) {
    try {
      report.flavors = {count: sources.flavors()}
    } catch (err) {
      report.flavors = failed(err)
    }
  }
  return report
}

/** The reload's report in one line, for stderr and systemd's STATUS. */
export function describeReload(report: ReloadReport): string {
  const parts: string[] = []
  if ('error' in report.policy) parts.push(`policy not reloaded (${report.policy.error}); the rules in force stay`)
  else
    parts.push(
      report.policy.changed.length
        ? `policy: ${report.policy.changed.length} rule(s) changed (${report.policy.changed.join(', ')})`
        : 'policy unchanged',
    )
  if (report.logLevel) {
    if ('error' in report.logLevel) parts.push(`log level not reloaded (${report.logLevel.error})`)
    else
      parts.push(
        report.logLevel.from === report.logLevel.to
          ? `log level ${report.logLevel.to}`
          : `log level ${report.logLevel.from} -> ${report.logLevel.to}`,
      )
  }
  if (report.tls) {
    if ('error' in report.tls) parts.push(`TLS certificate not reloaded (${report.tls.error}); the one in use stays`)
    else parts.push(report.tls.changed ? 'TLS certificate replaced' : 'TLS certificate unchanged')
  }
  if (report.flavors) {
    if ('error' in report.flavors) parts.push(`flavors not reloaded (${report.flavors.error}); the catalog in force stays`)
    else parts.push(`flavors: ${report.flavors.count}`)
  }
  return parts.join('; ')
}

export const reloadFailed = (report: ReloadReport): boolean =>
  'error' in report.policy ||
  Boolean(report.logLevel && 'error' in report.logLevel) ||
  Boolean(report.tls && 'error' in report.tls) ||
  Boolean(report.flavors && 'error' in report.flavors)

export interface Lifecycle {
  service: ServiceState
  notifier: ServiceNotifier
  log: FastifyBaseLogger
  times: DrainTimes
  /** Stops the listener and waits for what is in flight, then closes the store. */
  close(): Promise<void>
  reloadSources: ReloadSources
  /** The process's end (process.exit, or a test's stand-in). */
  exit(code: number): void
  /** One line an operator sees outside the log (stderr). */
  say(line: string): void
}

/**
 * Installs the signal handlers and returns what they call, for tests to call directly:
 * `stop()` drains and exits; `reload()` reloads and reports.
 */
export function handleSignals(life: Lifecycle): {stop(signal: string): Promise<void>; reload(): ReloadReport} {
  let stopping: Promise<void> | undefined
  const stop = (signal: string): Promise<void> => {
    if (stopping) return stopping
    const {service, notifier, log, times} = life
    service.stopping = true
    const status = `stopping on ${signal}: ${service.inFlight} request(s) in flight; health answers 503`
    notifier.stopping(status)
    log.info(
      {event: 'stopping', signal, in_flight: service.inFlight, shutdown_delay_ms: times.delayMs, shutdown_timeout_ms: times.timeoutMs},
      status,
    )
    const deadline = setTimeout(() => {
      const line = `shutdown timeout (${times.timeoutMs / 1000} s) reached with ${service.inFlight} request(s) unanswered: exiting`
      log.error({event: 'shutdown_timeout', in_flight: service.inFlight}, line)
      life.say(line)
      life.exit(1)
    }, times.timeoutMs)
    deadline.unref()
    stopping = (async () => {
      await new Promise((r) => setTimeout(r, times.delayMs))
      notifier.status(`stopping: listener closed, finishing ${service.inFlight} request(s)`)
      try {
        await life.close()
      } catch (err) {
        log.error({event: 'stop_failed', err}, `stopping failed: ${(err as Error).message}`)
        life.say(`stopping failed: ${(err as Error).message}`)
        life.exit(1)
        return
      }
      clearTimeout(deadline)
      log.info({event: 'stopped'}, 'stopped: every request answered')
      notifier.close()
      life.exit(0)
    })()
    return stopping
  }
  const reloadNow = (): ReloadReport => {
    life.notifier.reloading()
    const report = reload(life.log, life.reloadSources)
    const line = `reload: ${describeReload(report)}`
    if (reloadFailed(report)) {
      life.log.error({event: 'reload', ...report}, line)
      life.say(line)
    } else life.log.info({event: 'reload', ...report}, line)
    life.notifier.ready(`serving (reloaded: ${describeReload(report)})`)
    return report
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => {
    // A second Ctrl-C ends a drain that takes too long.
    if (stopping) {
      life.say('second SIGINT: exiting without waiting')
      life.exit(1)
    }
    void stop('SIGINT')
  })
  process.on('SIGHUP', () => void reloadNow())
  return {stop, reload: reloadNow}
}
