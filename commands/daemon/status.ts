import {Flags} from '@oclif/core'
import {isAlive, readRecord, waitReady} from '../../src/daemon/control.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {daemonDatabase, daemonDbFlags, localDbFlag} from '../../src/cli/local-db-flag.js'
import {describeTarget} from '../../src/store/target.js'

export default class DaemonStatus extends BaseCommand {
  static summary = 'Tell whether a daemon serves a database (exit 0 running, 1 not).'
  static flags = {
    db: localDbFlag('SQLite database file, or a postgres:// or mysql:// URL'),
    ...daemonDbFlags,
    json: Flags.boolean({description: 'print a JSON object'}),
  }

  async run(): Promise<void> {
    const {flags, metadata} = await this.parse(DaemonStatus)
    const db = daemonDatabase(flags, !metadata.flags.db?.setFromDefault)
    const record = readRecord(db)
    const running = Boolean(record && isAlive(record.pid))
    const ready = running ? await waitReady(record!.url, 2000) : false
    const answering = ready === 'ready'
    const status = {
      running,
      answering,
      ...(ready === 'starting' ? {starting: true} : {}),
      pid: running ? record!.pid : null,
      url: running ? record!.url : null,
      db: describeTarget(db),
    }
    if (flags.json) this.log(JSON.stringify(status, null, 2))
    else {
      const how = answering ? 'answering' : ready === 'starting' ? 'waiting for its database' : 'not answering'
      this.log(running ? `running: pid ${status.pid} at ${status.url} (${how})` : 'not running')
    }
    if (!running) this.exit(1)
  }
}
