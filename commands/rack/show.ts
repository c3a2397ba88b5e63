import {TopologyNodeCommand, layoutFlag, nameArg} from '../../src/cli/topology/node-commands.js'

export default class RackShow extends TopologyNodeCommand {
  static summary = 'Show one rack: its uuid, where it stands, its hosts, capacity and usage.'
  static description = `Exit 3 if there is no such rack. On a plain OpenStack Placement endpoint the names come
from the layout file (--layout FILE).`
  static examples = ['<%= config.bin %> rack show NAME', '<%= config.bin %> rack show NAME -f value -c uuid']
  static args = nameArg('rack')
  static flags = {...layoutFlag}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(RackShow)
    await this.show('rack', args.name, flags.layout)
  }
}
