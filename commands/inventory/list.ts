import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {inventoryColumns, inventoryRows} from '../../src/cli/services/inventory.js'
import {readInventories} from '../../src/cli/services/inventories.js'

export default class InventoryList extends PlacematCommand {
  static summary = 'List the inventories of a resource provider, with what is used of each.'
  static description =
    'JSON/YAML: the body of GET /resource_providers/{uuid}/inventories ({resource_provider_generation, inventories}) ' +
    'plus "usages" from GET /resource_providers/{uuid}/usages. CAPACITY is (total - reserved) * allocation_ratio.\n\n' +
    "osc-placement's `openstack resource provider inventory list UUID` is `placemat provider inventory list UUID` too."

  static examples = ['<%= config.bin %> inventory list compute-1', '<%= config.bin %> inventory list compute-1 --json']
  static hiddenAliases = ['provider:inventory:list']

  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(InventoryList)
    const body = await readInventories(await this.client(), args.provider)
    this.output(body, inventoryRows(body.inventories, body.usages), inventoryColumns)
  }
}
