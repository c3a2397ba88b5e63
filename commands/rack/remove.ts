import {Args} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'
import {hostNames} from '../../src/cli/topology/edit.js'

export default class RackRemove extends TopologyEditCommand {
  static summary = 'Take hosts out of a rack (they leave the topology).'
  static description = `Each host leaves the rack's, row's and room's aggregates; its other
aggregates are kept. Exit 3 (and nothing changed) if a host is not in the rack.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> rack remove rack-1a-01 cn-0002']
  static strict = false
  static args = {
    name: Args.string({required: true, description: 'rack name'}),
    host: Args.string({required: true, description: 'host (root provider) name or uuid; several may be given'}),
  }
  static flags = {...editFlags}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(RackRemove)
    const [name, ...refs] = argv as string[]
    const hosts = await hostNames(await this.client(), refs)
    await this.edit(flags, (doc) => edits.rackRemove(doc, name, hosts))
  }
}
