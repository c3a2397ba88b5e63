import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {deleteInventories} from '../../src/cli/services/inventories.js'
import {usageError} from '../../src/cli/failure.js'

export default class InventoryDelete extends PlacematCommand {
  static summary = 'Delete inventories of a resource provider: some classes, or all with --all.'
  static printed = SENTENCES
  static description =
    'One class is deleted with DELETE .../inventories/{class}; several at once in one write (the others kept, with ' +
    'the provider generation; retried on a concurrent update); --all with DELETE .../inventories. A class that still ' +
    'has allocations cannot be deleted (exit 4). Deleting a class the provider has no inventory of is not found (exit 3).'

  static examples = [
    '<%= config.bin %> inventory delete compute-1 DISK_GB',
    '<%= config.bin %> inventory delete compute-1 CUSTOM_A CUSTOM_B',
    '<%= config.bin %> inventory delete compute-1 --all',
  ]

  static strict = false
  static args = {
    provider: Args.string({description: 'provider uuid or name', required: true}),
    class: Args.string({description: 'resource class (several may be given)'}),
  }

  static flags = {all: Flags.boolean({description: 'delete every inventory of the provider'})}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(InventoryDelete)
    const [ref, ...classes] = argv as string[]
    if (flags.all === classes.length > 0) throw usageError('give the classes to delete, or --all')
    await deleteInventories(await this.client(), ref, flags.all ? 'all' : classes)
  }
}
