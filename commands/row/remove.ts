import {Args} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'

export default class RowRemove extends TopologyEditCommand {
  static summary = 'Take racks out of a row (they stand alone, hosts and all).'
  static description = `The racks' hosts leave the row's and room's aggregates and stay in their
rack's. Exit 3 (and nothing changed) if a rack is not in the row.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> row remove row-1a rack-1a-04']
  static strict = false
  static args = {
    name: Args.string({required: true, description: 'row name'}),
    rack: Args.string({required: true, description: 'rack name; several may be given'}),
  }
  static flags = {...editFlags}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(RowRemove)
    const [name, ...racks] = argv as string[]
    await this.edit(flags, (doc) => edits.rowRemove(doc, name, racks))
  }
}
