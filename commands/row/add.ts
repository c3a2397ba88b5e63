import {Args} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'

export default class RowAdd extends TopologyEditCommand {
  static summary = 'Put racks in a row; this is how a rack moves between rows.'
  static description = `A rack is in one row: a rack in another row is moved, and its hosts' row
and room aggregates follow (they leave the old row's and room's and join the
new ones'; their rack aggregate and other aggregates are kept).

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> row add row-1b rack-1a-04']
  static strict = false
  static args = {
    name: Args.string({required: true, description: 'row name'}),
    rack: Args.string({required: true, description: 'rack name; several may be given'}),
  }
  static flags = {...editFlags}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(RowAdd)
    const [name, ...racks] = argv as string[]
    await this.edit(flags, (doc) => edits.rowAdd(doc, name, racks))
  }
}
