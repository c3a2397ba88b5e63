import {Flags} from '@oclif/core'
import {isAlive, readRecord, stopDaemon} from '../../src/daemon/control.js'
import {defaultDbFile} from '../../src/daemon/paths.js'
import {failure} from '../../src/cli/failure.js'
import {BaseCommand} from '../../src/cli/command.js'

export default class DaemonStop extends BaseCommand {
  static summary = 'Stop the detached daemon serving a database.'
  static flags = {db: Flags.string({description: 'SQLite database file, or a postgres:// URL', default: defaultDbFile()})}

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
