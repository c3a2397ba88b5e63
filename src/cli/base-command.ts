/**
 * The base of every placemat command: a failure ends as one line on stderr ("placemat: ...")
 * with the exit code failureReport computes. A command line oclif cannot parse is said in one
 * line too (an unknown flag with the closest one, a missing argument with what it is), exit 2,
 * never with the whole help text; oclif's own exits stay oclif's.
 */
import {Command} from '@oclif/core'
import {ExitCode, failureReport} from './failure.js'
import {closestNames} from './hooks/command-not-found.js'

/** oclif's parse errors: an unknown flag carries the flags typed, a missing argument the arguments' definitions. */
type ParseError = Error & {parse?: unknown; flags?: unknown; args?: unknown}

/** The one line for a command line that could not be parsed, or null to leave it to oclif. */
export function parseFailure(err: ParseError, command: {id?: string; flags?: Record<string, unknown>}, bin = 'placemat'): string | null {
  if (!err.parse) return null
  const help = `see \`${bin} ${(command.id ?? '').replace(/:/g, ' ')} --help\``
  if (Array.isArray(err.flags) && typeof err.flags[0] === 'string') {
    const typed: string = err.flags[0]
    const near = closestNames(typed.replace(/^-+/, ''), Object.keys(command.flags ?? {}))
    return `unknown flag ${typed}${near.length ? `; did you mean ${near.map((f) => `--${f}`).join(' or ')}?` : ''} (${help})`
  }
  const arg = Array.isArray(err.args) ? (err.args[0] as {name?: unknown; description?: string} | undefined) : undefined
  if (arg && typeof arg.name === 'string') {
    return `missing argument ${arg.name.toUpperCase()}${arg.description ? ` (${arg.description})` : ''}; ${help}`
  }
  // oclif words some failures as a heading and the failures under it ("The following error
  // occurred:" then "  --x=... must also be provided when using --y"): the failures are the line.
  const lines = err.message
    .split('\n')
    .map((l) => l.trim().replace(/^Error:\s*/, ''))
    .filter((l) => l && !/^See more help/.test(l))
  const said = lines.length > 1 && /:$/.test(lines[0]) ? lines.slice(1).join('; ') : (lines[0] ?? 'bad arguments')
  return `${said.replace(/^--([\w-]+)=\s/, '--$1 ')}; ${help}`
}

export abstract class BaseCommand extends Command {
  protected async catch(err: ParseError & {exitCode?: number}): Promise<any> {
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
