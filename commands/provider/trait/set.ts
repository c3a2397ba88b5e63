import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../../src/cli/placemat-command.js'
import {resolveProvider} from '../../../src/cli/backend/provider-lookup.js'
import {setColumns, updateProviderSet} from '../../../src/cli/services/sets.js'

export default class ProviderTraitSet extends PlacematCommand {
  static summary = 'Replace the traits of a resource provider (none given: remove them all).'
  static description =
    'The provider generation is read and sent for you, and a concurrent update is retried. ' +
    "Prints the traits now on the provider (JSON/YAML: the PUT response body). osc-placement's form, " +
    '`provider trait set UUID --trait T1 --trait T2`, works as written.'

  static examples = [
    '<%= config.bin %> provider trait set compute-1 HW_CPU_X86_AVX2 CUSTOM_GOLD',
    '<%= config.bin %> provider trait set compute-1',
    '<%= config.bin %> provider trait set $UUID --trait HW_CPU_X86_AVX2 --trait CUSTOM_GOLD',
  ]

  static strict = false
  static printed = {columns: setColumns.traits}
  static args = {
    provider: Args.string({description: 'provider uuid or name', required: true}),
    trait: Args.string({description: 'trait name (several may be given)'}),
  }

  static flags = {
    trait: Flags.string({
      description: 'a trait as osc takes it, beside the arguments (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(ProviderTraitSet)
    const [ref, ...given] = argv as string[]
    const traits = [...given, ...(flags.trait ?? [])]
    const client = await this.client()
    const p = await resolveProvider(client, ref)
    const body = await updateProviderSet(client, p.uuid, 'traits', () => traits)
    this.output(
      body,
      body.traits!.map((name) => ({name})),
      setColumns.traits,
    )
  }
}
