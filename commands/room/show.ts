import {TopologyNodeCommand, layoutFlag, nameArg} from '../../src/cli/topology/node-commands.js'

export default class RoomShow extends TopologyNodeCommand {
  static summary = 'Show one room: its uuid, where it stands, its hosts, capacity and usage.'
  static description = `Exit 3 if there is no such room. On a plain OpenStack Placement endpoint the names come
from the layout file (--layout FILE).`
  static examples = ['<%= config.bin %> room show NAME', '<%= config.bin %> room show NAME -f value -c uuid']
  static args = nameArg('room')
  static flags = {...layoutFlag}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(RoomShow)
    await this.show('room', args.name, flags.layout)
  }
}
