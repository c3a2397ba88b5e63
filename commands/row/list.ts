import {TopologyNodeCommand, layoutFlag} from '../../src/cli/topology/node-commands.js'

export default class RowList extends TopologyNodeCommand {
  static summary = 'List the rows: where each stands, its hosts, capacity and usage, its aggregate uuid.'
  static description = `One line per row (used/capacity per resource class of its hosts' whole trees).
On a plain OpenStack Placement endpoint the names come from the layout file (--layout FILE).`
  static examples = ['<%= config.bin %> row list', '<%= config.bin %> row list -f value -c name,uuid']
  static flags = {...layoutFlag}

  async run(): Promise<void> {
    const {flags} = await this.parse(RowList)
    await this.list('row', flags.layout)
  }
}
