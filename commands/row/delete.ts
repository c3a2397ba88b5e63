import {Args} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'

export default class RowDelete extends TopologyEditCommand {
  static summary = 'Delete a row; its racks stay, standing alone.'
  static description = `The row's hosts leave its aggregate and its room's; the racks are kept
(delete them with \`rack delete\`). Exit 3 if there is no such row.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> row delete row-1a']
  static args = {name: Args.string({required: true, description: 'row name'})}
  static flags = {...editFlags}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(RowDelete)
    await this.edit(flags, (doc) => edits.rowDelete(doc, args.name))
  }
}
