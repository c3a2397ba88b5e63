import {Args} from '@oclif/core'
import {PlacematCommand} from '../../../src/cli/placemat-command.js'
import {readTraits} from '../../../src/cli/services/sets.js'

export default class ProviderTraitList extends PlacematCommand {
  static summary = 'List the traits of a resource provider.'
  static description = 'JSON/YAML: the body of GET /resource_providers/{uuid}/traits ({traits, resource_provider_generation}).'
  static examples = ['<%= config.bin %> provider trait list compute-1']
  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(ProviderTraitList)
    const body = await readTraits(await this.client(), args.provider)
    this.output(
      body,
      body.traits.map((name) => ({name})),
      [{key: 'name'}],
    )
  }
}
