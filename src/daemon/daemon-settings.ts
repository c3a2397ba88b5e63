/**
 * What `daemon start`'s flags and placement.conf mean for a foreground daemon, in one place:
 * a flag over the file, the file over the default. The command parses; this decides.
 */
import path from 'node:path'
import type {LogLevel} from '../http/access-log.js'
import type {AuthMode} from '../http/context.js'
import type {PolicyOptions} from '../http/policy/policy.js'
import type {Durability} from '../store/backends.js'
import {readConfigFile, type ConfigFileSettings} from './config-file.js'
import type {EdgeSettings} from './edge-options.js'
import type {ForegroundOptions} from './foreground.js'

/** The flag values a foreground daemon is made of (daemon start's, parsed). */
export interface StartFlags {
  db: string
  host: string
  port: number
  'config-file'?: string
  'cors-origin'?: string[]
  'cors-allow-headers'?: string
  'max-candidates'?: number
  randomize: boolean
  'answer-cache': boolean
  'warm-up': boolean
  strategy: string
  'log-level'?: string
  'metrics-public': boolean
  flavors?: string
  durability: string
  'request-timeout': number
  'db-wait'?: number
  'db-connect-timeout': number
  'db-statement-timeout': number
  'db-lock-timeout': number
  'shutdown-delay': number
  'shutdown-timeout': number
}

/** A drain that leaves no time after its delay is refused (the message says why). */
export function drainProblem(flags: Pick<StartFlags, 'shutdown-delay' | 'shutdown-timeout'>): string | undefined {
  if (flags['shutdown-delay'] < flags['shutdown-timeout']) return undefined
  return `--shutdown-delay (${flags['shutdown-delay']} s) must be shorter than --shutdown-timeout (${flags['shutdown-timeout']} s): the drain needs time after it`
}

export function foregroundOptions(
  flags: StartFlags,
  conf: ConfigFileSettings,
  decided: {auth: AuthMode; policy: PolicyOptions; edge: EdgeSettings},
): ForegroundOptions {
  const configFile = flags['config-file']
  return {
    db: flags.db,
    host: flags.host,
    port: flags.port,
    auth: decided.auth,
    corsOrigins: flags['cors-origin'] ?? conf.corsOrigins,
    corsAllowHeaders:
      flags['cors-allow-headers']
        ?.split(',')
        .map((h) => h.trim())
        .filter(Boolean) ?? conf.corsAllowHeaders,
    keystone: conf.keystone,
    incompleteConsumer: conf.incompleteConsumer,
    candidates: {
      maxCandidates: flags['max-candidates'] ?? conf.maxCandidates ?? -1,
      randomize: flags.randomize || conf.randomize,
      strategy: flags.strategy as 'breadth-first' | 'depth-first',
      answerCache: flags['answer-cache'],
    },
    logLevel: (flags['log-level'] ?? conf.logLevel ?? 'info') as LogLevel,
    // A level given as a flag stays; one from the file follows the file on a reload.
    reloadLogLevel: flags['log-level'] ? undefined : () => (configFile ? readConfigFile(configFile).logLevel : undefined) ?? 'info',
    metricsPublic: flags['metrics-public'],
    flavors: flags.flavors === undefined ? undefined : path.resolve(flags.flavors),
    warmUp: flags['warm-up'] && process.env.PLACEMAT_WARM_UP !== '0',
    policy: decided.policy,
    durability: flags.durability as Durability,
    edge: decided.edge,
    timeouts: {requestMs: flags['request-timeout'] * 1000, headersMs: Math.min(30, flags['request-timeout']) * 1000},
    database: {
      waitMs: flags['db-wait'] === undefined ? undefined : flags['db-wait'] * 1000,
      timeouts: {
        connectMs: flags['db-connect-timeout'] * 1000,
        statementMs: flags['db-statement-timeout'] * 1000,
        lockMs: flags['db-lock-timeout'] * 1000,
      },
    },
    shutdown: {delayMs: flags['shutdown-delay'] * 1000, timeoutMs: flags['shutdown-timeout'] * 1000},
  }
}
