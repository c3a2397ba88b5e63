import {Args} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'

export default class RackDelete extends TopologyEditCommand {
  static summary = 'Delete a rack; its hosts leave the topology.'
  static description = `The rack's hosts leave its aggregate and its row's and room's (their other
aggregates are kept). Exit 3 if there is no such rack.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> rack delete rack-1a-01']
  static args = {name: Args.string({required: true, description: 'rack name'})}
  static flags = {...editFlags}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(RackDelete)
    await this.edit(flags, (doc) => edits.rackDelete(doc, args.name))
  }
}
