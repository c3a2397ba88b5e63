/**
 * The base of every placemat command: a failure ends as one line on stderr ("placemat: ...")
 * with the exit code failureReport computes. A command line oclif cannot parse is said in one
 * line too (an unknown flag with the closest one, a missing argument with what it is), exit 2,
 * never with the whole help text; oclif's own exits stay oclif's.
 */
import {Command} from '@oclif/core'
import {ExitCode, failureReport} from './failure.js'
import {closestNames} from './hooks/command-not-found.js'

/** The one line for a command line that could not be parsed, or null to leave it to oclif. */
export function parseFailure(err: Error & {parse?: unknown}, command: {id?: string; flags?: Record<string, unknown>; args?: Record<string, {description?: string}>}, bin = 'placemat'): string | null {
  if (!err.parse) return null
  const help = `see \`${bin} ${(command.id ?? '').replace(/:/g, ' ')} --help\``
  const unknown = /Nonexistent flags?: (.+)/.exec(err.message)
  if (unknown) {
    const typed = unknown[1].split(/,\s*/)[0].trim()
    const near = closestNames(typed.replace(/^-+/, ''), Object.keys(command.flags ?? {}))
    return `unknown flag ${typed}${near.length ? `; did you mean ${near.map((f) => `--${f}`).join(' or ')}?` : ''} (${help})`
  }
  const missing = /Missing (\d+ )?required args?/.test(err.message)
  if (missing) {
    const name = /^\s*(\w+)\s/m.exec(err.message.split('\n').slice(1).join('\n'))?.[1]
    const arg = name ? command.args?.[name] ?? command.args?.[name.toLowerCase()] : undefined
    return `missing argument${name ? ` ${name.toUpperCase()}` : ''}${arg?.description ? ` (${arg.description})` : ''}; ${help}`
  }
  return `${err.message.split('\n')[0].replace(/^Error:\s*/, '')}; ${help}`
}

export abstract class BaseCommand extends Command {
  protected async catch(err: Error & {exitCode?: number; parse?: unknown}): Promise<any> {
    const parse = parseFailure(err, this.ctor as never, this.config.bin)
    if (parse) {
      process.stderr.write(`${this.config.bin}: ${parse}\n`)
      this.exit(ExitCode.USAGE)
    }
    const report = failureReport(err)
    if (!report) return super.catch(err)
    process.stderr.write(`placemat: ${report.message}${this.hint(err)}\n`)
    this.exit(report.exit)
  }

  /** More to say after a failure's message (e.g. how to start a daemon nothing answered at). */
  protected hint(_err: Error): string {
    return ''
  }
}
