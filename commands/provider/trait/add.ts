import {Args} from '@oclif/core'
import {PlacematCommand} from '../../../src/cli/placemat-command.js'
import {addTraits, setColumns} from '../../../src/cli/services/sets.js'

export default class ProviderTraitAdd extends PlacematCommand {
  static summary = 'Add traits to a resource provider, keeping the others.'
  static description =
    'Traits it already has are left as they are. Custom traits (CUSTOM_*) that do not exist yet are created ' +
    'first. The provider generation is read and sent for you, and a concurrent update is retried. Prints the ' +
    'traits now on the provider (JSON/YAML: as GET .../traits).'

  static examples = ['<%= config.bin %> provider trait add compute-1 HW_CPU_X86_AVX2 CUSTOM_GOLD']
  static strict = false
  static printed = {columns: setColumns.traits}
  static args = {
    provider: Args.string({description: 'provider uuid or name', required: true}),
    trait: Args.string({description: 'trait name (several may be given)', required: true}),
  }

  async run(): Promise<void> {
    const {argv} = await this.parse(ProviderTraitAdd)
    const [ref, ...traits] = argv as string[]
    const body = await addTraits(await this.client(), ref, traits)
    this.output(
      body,
      body.traits.map((name) => ({name})),
      setColumns.traits,
    )
  }
}
