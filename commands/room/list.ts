import {TopologyNodeCommand, layoutFlag} from '../../src/cli/topology/node-commands.js'

export default class RoomList extends TopologyNodeCommand {
  static summary = 'List the rooms: where each stands, its hosts, capacity and usage, its aggregate uuid.'
  static description = `One line per room (used/capacity per resource class of its hosts' whole trees).
On a plain OpenStack Placement endpoint the names come from the layout file (--layout FILE).`
  static examples = ['<%= config.bin %> room list', '<%= config.bin %> room list -f value -c name,uuid']
  static flags = {...layoutFlag}

  async run(): Promise<void> {
    const {flags} = await this.parse(RoomList)
    await this.list('room', flags.layout)
  }
}
