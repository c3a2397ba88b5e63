import {isAlive, readRecord, stopDaemon} from '../../src/daemon/control.js'
import {failure} from '../../src/cli/failure.js'
import {BaseCommand} from '../../src/cli/command.js'
import {localDbFlag} from '../../src/cli/local-db-flag.js'

export default class DaemonStop extends BaseCommand {
  static summary = 'Stop the detached daemon serving a database.'
  static flags = {db: localDbFlag('SQLite database file, or a postgres:// URL')}

  async run(): Promise<void> {
    const {flags} = await this.parse(DaemonStop)
    const record = readRecord(flags.db)
    if (!record || !isAlive(record.pid)) {
      this.log('no daemon running')
      return
    }
    if (!(await stopDaemon(record, flags.db))) throw failure(`pid ${record.pid} did not stop`)
    this.log(`stopped daemon pid ${record.pid}`)
  }
}
