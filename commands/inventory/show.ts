import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {readInventory} from '../../src/cli/services/inventories.js'

export default class InventoryShow extends PlacematCommand {
  static summary = 'Show the inventory of one resource class of a provider.'
  static description =
    'JSON/YAML: the body of GET /resource_providers/{uuid}/inventories/{class} plus "used" (from the provider\'s usages) ' +
    'and "capacity" ((total - reserved) * allocation_ratio).\n\n' +
    "osc-placement's `openstack resource provider inventory show UUID CLASS` is `placemat provider inventory show UUID CLASS` too."

  static examples = ['<%= config.bin %> inventory show compute-1 VCPU', '<%= config.bin %> inventory show compute-1 MEMORY_MB --json']
  static hiddenAliases = ['provider:inventory:show']

  static args = {
    provider: Args.string({description: 'provider uuid or name', required: true}),
    class: Args.string({description: 'resource class', required: true}),
  }

  async run(): Promise<void> {
    const {args} = await this.parse(InventoryShow)
    this.outputRecord(await readInventory(await this.client(), args.provider, args.class))
  }
}
