import {TopologyNodeCommand, layoutFlag} from '../../src/cli/topology/node-commands.js'

export default class RackList extends TopologyNodeCommand {
  static summary = 'List the racks: where each stands, its hosts, capacity and usage, its aggregate uuid.'
  static description = `One line per rack (used/capacity per resource class of its hosts' whole trees).
On a plain OpenStack Placement endpoint the names come from the layout file (--layout FILE).`
  static examples = ['<%= config.bin %> rack list', '<%= config.bin %> rack list -f value -c name,uuid']
  static flags = {...layoutFlag}

  async run(): Promise<void> {
    const {flags} = await this.parse(RackList)
    await this.list('rack', flags.layout)
  }
}
