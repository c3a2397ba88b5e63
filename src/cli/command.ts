/**
 * The base of every placemat command: a failure ends as one line on stderr ("placemat: ...")
 * with the exit code failureReport computes; oclif's own exits and parse errors stay oclif's.
 */
import {Command} from '@oclif/core'
import {failureReport} from './failure.js'

export abstract class BaseCommand extends Command {
  protected async catch(err: Error & {exitCode?: number}): Promise<any> {
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
