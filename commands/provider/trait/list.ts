import {Args} from '@oclif/core'
import {PlacematCommand} from '../../../src/cli/base.js'
import {resolveProvider} from '../../../src/cli/services/providers.js'

export default class ProviderTraitList extends PlacematCommand {
  static summary = 'List the traits of a resource provider.'
  static description = 'JSON/YAML: the body of GET /resource_providers/{uuid}/traits ({traits, resource_provider_generation}).'
  static examples = ['<%= config.bin %> provider trait list compute-1']
  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(ProviderTraitList)
    const client = await this.client()
    const p = await resolveProvider(client, args.provider)
    const body = await client.get(`/resource_providers/${p.uuid}/traits`)
    this.output(body, (body.traits as string[]).map((name) => ({name})), [{key: 'name'}])
  }
}
