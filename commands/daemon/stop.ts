import {isAlive, readRecord, stopDaemon} from '../../src/daemon/control.js'
import {failure} from '../../src/cli/failure.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {daemonDatabase, daemonDbFlags, localDbFlag} from '../../src/cli/local-db-flag.js'

export default class DaemonStop extends BaseCommand {
  static summary = 'Stop the detached daemon serving a database.'
  static flags = {db: localDbFlag('SQLite database file, or a postgres:// or mysql:// URL'), ...daemonDbFlags}

  async run(): Promise<void> {
    const {flags, metadata} = await this.parse(DaemonStop)
    const db = daemonDatabase(flags, !metadata.flags.db?.setFromDefault)
    const record = readRecord(db)
    if (!record || !isAlive(record.pid)) {
      this.log('no daemon running')
      return
    }
    if (!(await stopDaemon(record, db))) throw failure(`pid ${record.pid} did not stop`)
    this.log(`stopped daemon pid ${record.pid}`)
  }
}
