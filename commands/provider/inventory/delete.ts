import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../../src/cli/placemat-command.js'
import {SENTENCES} from '../../../src/cli/output.js'
import {deleteInventories} from '../../../src/cli/services/inventories.js'

/** osc-placement's `openstack resource provider inventory delete`: one class, or without --resource-class all of them. */
export default class ProviderInventoryDelete extends PlacematCommand {
  static summary = "Delete a provider's inventory of a class, or all its inventories (osc-placement's form)."
  static hidden = true
  static printed = SENTENCES
  static description =
    "`openstack resource provider inventory delete` as osc-placement takes it: --resource-class deletes that class's " +
    "inventory; without it every inventory of the provider is deleted. placemat's own form, `inventory delete " +
    'PROVIDER CLASS...` (or --all), asks for the classes or --all. A class that still has allocations cannot be deleted (exit 4).'

  static examples = [
    '<%= config.bin %> provider inventory delete $UUID --resource-class DISK_GB',
    '<%= config.bin %> provider inventory delete $UUID',
  ]

  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}
  static flags = {
    'resource-class': Flags.string({
      description: 'the class whose inventory is deleted (repeatable; none: all)',
      multiple: true,
      multipleNonGreedy: true,
    }),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(ProviderInventoryDelete)
    const classes = flags['resource-class'] ?? []
    await deleteInventories(await this.client(), args.provider, classes.length ? classes : 'all')
  }
}
