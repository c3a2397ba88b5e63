import {DETACHED_FROM} from '../../src/daemon/control.js'
import {logLine} from '../../src/daemon/log-line.js'
import {daemonStartFlags} from '../../src/cli/daemon-start-flags.js'
import {failure, failureReport, Failure} from '../../src/cli/failure.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {describeTarget} from '../../src/store/backends.js'
import {startDaemon} from '../../src/cli/services/daemon-start.js'

export default class DaemonStart extends BaseCommand {
  static summary = 'Start the placemat daemon (the Placement API on SQLite).'
  static description =
    'Serves the OpenStack Placement HTTP API (microversions 1.0 to 1.39). Without --foreground it detaches, ' +
    'writing a pid file and a log file beside the database.'

  static examples = [
    '<%= config.bin %> daemon start',
    '<%= config.bin %> daemon start --foreground --db /tmp/p.db --port 8000 --auth noauth2',
  ]

  static flags = daemonStartFlags

  /** A daemon `daemon start` detached: its stdout and stderr are its log file, JSON lines only. */
  private readonly detached = Boolean(process.env[DETACHED_FROM])

  private warning(line: string): void {
    process.stderr.write(this.detached ? logLine('warn', line) : `placemat: warning: ${line}\n`)
  }

  /** A detached daemon's failure to start is the last line of its log, the one its parent relays. */
  protected override async catch(err: Parameters<BaseCommand['catch']>[0]): Promise<any> {
    const report = this.detached ? failureReport(err) : null
    if (!report) return super.catch(err)
    process.stderr.write(logLine('fatal', report.message, {event: 'start_failed', exit: report.exit}))
    this.exit(report.exit)
  }

  async run(): Promise<void> {
    const {flags, metadata} = await this.parse(DaemonStart)
    const {started, url, log, db} = await startDaemon(flags, {
      detached: this.detached,
      dbGiven: !metadata.flags.db?.setFromDefault,
      argv: process.argv.slice(2).filter((a) => a !== 'daemon' && a !== 'start'),
      warn: (line) => this.warning(line),
      say: (line) => (this.detached ? process.stdout.write(logLine('info', line)) : this.log(line)),
    })
    // The daemon's own words and exit code: 3 for a database that needs migrations, as in the foreground.
    if (started.state === 'exited')
      throw new Failure('error', started.said ?? `the daemon exited (code ${started.code}); see ${log}`, started.code)
    if (started.state === 'silent') throw failure(`the daemon did not answer at ${url}; see ${log}`)
    if (started.state === 'starting') {
      this.log(
        `placemat daemon listening on ${url} (pid ${started.record.pid}), waiting for its database ${describeTarget(db)}; see ${log}`,
      )
      return
    }
    this.log(`placemat daemon listening on ${url} (pid ${started.record.pid}, database ${started.record.db})`)
  }
}
