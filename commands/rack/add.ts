import {Args} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'
import {hostNames} from '../../src/cli/topology/edit.js'

export default class RackAdd extends TopologyEditCommand {
  static summary = 'Put hosts in a rack (a host in another rack is moved).'
  static description = `Each host joins the rack's aggregate and its row's and room's, and leaves
the aggregates of the rack (row, room) it was in; its other aggregates are
kept. Hosts already in the rack are left as they are.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> rack add rack-1a-01 cn-0009 cn-0010']
  static strict = false
  static args = {
    name: Args.string({required: true, description: 'rack name'}),
    host: Args.string({required: true, description: 'host (root provider) name or uuid; several may be given'}),
  }
  static flags = {...editFlags}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(RackAdd)
    const [name, ...refs] = argv as string[]
    const hosts = await hostNames(await this.client(), refs)
    await this.edit(flags, (doc) => edits.rackAdd(doc, name, hosts))
  }
}
