import {Args, Flags} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'
import {hostNames} from '../../src/cli/topology/edit.js'

export default class RackCreate extends TopologyEditCommand {
  static summary = 'Create a rack (an aggregate), optionally with hosts and in a row.'
  static description = `The rack's hosts become members of its aggregate (and of its row's and
room's, with --row). A host is in one rack: a host already in another rack
is moved. Exit 4 if the rack exists, 3 if the row or a host does not.

${PLAIN_NOTE}`
  static examples = [
    '<%= config.bin %> rack create rack-1a-01 --hosts cn-0001,cn-0002 --row row-1a',
    '<%= config.bin %> rack create rack-spare',
  ]
  static args = {name: Args.string({required: true, description: 'rack name'})}
  static flags = {
    hosts: Flags.string({description: 'comma separated hosts (root providers, by name or uuid)'}),
    row: Flags.string({description: 'the row the rack is in (default: it stands alone)'}),
    ...editFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(RackCreate)
    const refs =
      flags.hosts
        ?.split(',')
        .map((h) => h.trim())
        .filter(Boolean) ?? []
    const hosts = refs.length ? await hostNames(await this.client(), refs) : []
    await this.edit(flags, (doc) => edits.rackCreate(doc, args.name, {hosts, row: flags.row}))
  }
}
