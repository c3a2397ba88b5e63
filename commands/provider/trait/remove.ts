import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../../src/cli/placemat-command.js'
import {removeTraits, setColumns} from '../../../src/cli/services/sets.js'
import {usageError} from '../../../src/cli/failure.js'

export default class ProviderTraitRemove extends PlacematCommand {
  static summary = 'Remove traits from a resource provider, or all of them with --all.'
  static description =
    'Traits it does not have are ignored. --all is `openstack resource provider trait delete` ' +
    '(DELETE .../traits). The provider generation is read and sent for you, and a concurrent update is retried. ' +
    'Prints the traits left on the provider (JSON/YAML: as GET .../traits).'

  static examples = [
    '<%= config.bin %> provider trait remove compute-1 CUSTOM_GOLD',
    '<%= config.bin %> provider trait remove compute-1 --all',
  ]
  static strict = false
  static printed = {columns: setColumns.traits}
  static args = {
    provider: Args.string({description: 'provider uuid or name', required: true}),
    trait: Args.string({description: 'trait name (several may be given)'}),
  }

  static flags = {all: Flags.boolean({description: 'remove every trait of the provider'})}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(ProviderTraitRemove)
    const [ref, ...traits] = argv as string[]
    if (flags.all === traits.length > 0) throw usageError('give the traits to remove, or --all')
    const body = await removeTraits(await this.client(), ref, flags.all ? 'all' : traits)
    this.output(
      body,
      body.traits.map((name) => ({name})),
      setColumns.traits,
    )
  }
}
