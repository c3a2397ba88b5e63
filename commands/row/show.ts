import {TopologyNodeCommand, layoutFlag, nameArg} from '../../src/cli/topology/node-commands.js'

export default class RowShow extends TopologyNodeCommand {
  static summary = 'Show one row: its uuid, where it stands, its hosts, capacity and usage.'
  static description = `Exit 3 if there is no such row. On a plain OpenStack Placement endpoint the names come
from the layout file (--layout FILE).`
  static examples = ['<%= config.bin %> row show NAME', '<%= config.bin %> row show NAME -f value -c uuid']
  static args = nameArg('row')
  static flags = {...layoutFlag}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(RowShow)
    await this.show('row', args.name, flags.layout)
  }
}
