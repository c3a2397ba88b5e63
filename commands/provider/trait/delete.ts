import {Args} from '@oclif/core'
import {PlacematCommand} from '../../../src/cli/placemat-command.js'
import {SENTENCES} from '../../../src/cli/output.js'
import {removeTraits} from '../../../src/cli/services/sets.js'

export default class ProviderTraitDelete extends PlacematCommand {
  static summary = 'Remove every trait of a resource provider.'
  static printed = SENTENCES
  static description =
    "osc-placement's `openstack resource provider trait delete UUID` (DELETE .../traits), printing nothing as it " +
    'does; `provider trait remove PROVIDER --all` does the same and prints the traits left (none).'

  static examples = ['<%= config.bin %> provider trait delete compute-1']
  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(ProviderTraitDelete)
    await removeTraits(await this.client(), args.provider, 'all')
  }
}
