import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {deleteProviders} from '../../src/cli/services/providers.js'

export default class ProviderDelete extends PlacematCommand {
  static summary = 'Delete resource providers.'
  static printed = SENTENCES
  static description =
    'Each PROVIDER is a uuid or a name. A provider with children or with allocations cannot be deleted ' +
    '(exit 4); deletion stops at the first failure.'

  static examples = ['<%= config.bin %> provider delete compute-1', '<%= config.bin %> provider delete numa0 numa1 compute-1']

  static strict = false
  static args = {provider: Args.string({description: 'provider uuid or name (several may be given)', required: true})}

  async run(): Promise<void> {
    const {argv} = await this.parse(ProviderDelete)
    await deleteProviders(await this.client(), argv as string[])
  }
}
