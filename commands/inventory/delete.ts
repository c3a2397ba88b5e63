import {Args, Flags} from '@oclif/core'
import {PlacematCommand, ExitCode} from '../../src/cli/base.js'
import {SENTENCES} from '../../src/cli/output.js'
import {resolveProvider} from '../../src/cli/services/providers.js'
import {retryOnConcurrentUpdate} from '../../src/cli/services/retry.js'
import {notFoundError, usageError} from '../../src/cli/failure.js'

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
    const client = await this.client()
    const p = await resolveProvider(client, ref)
    const base = `/resource_providers/${p.uuid}/inventories`
    if (flags.all) return client.delete(base)
    if (classes.length === 1) return client.delete(`${base}/${encodeURIComponent(classes[0])}`)
    await retryOnConcurrentUpdate(async () => {
      const current = await client.get(base)
      const missing = classes.filter((rc) => !(rc in current.inventories))
      if (missing.length) throw notFoundError(`no inventory of ${missing.join(', ')} on resource provider ${p.uuid}`)
      const inventories = {...current.inventories}
      for (const rc of classes) delete inventories[rc]
      await client.put(base, {resource_provider_generation: current.resource_provider_generation, inventories})
    })
  }
}
