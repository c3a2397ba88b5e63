import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/base.js'
import {resolveProvider} from '../../src/cli/services/providers.js'

export default class AggregateList extends PlacematCommand {
  static summary = 'List the aggregates a resource provider is a member of.'
  static description =
    'JSON/YAML: the body of GET /resource_providers/{uuid}/aggregates ({aggregates, resource_provider_generation}). ' +
    'The members of an aggregate: `provider list --member-of AGGREGATE`.'

  static examples = ['<%= config.bin %> aggregate list compute-1', '<%= config.bin %> provider list --member-of $AGGREGATE']
  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(AggregateList)
    const client = await this.client()
    const p = await resolveProvider(client, args.provider)
    const body = await client.get(`/resource_providers/${p.uuid}/aggregates`)
    this.output(body, (body.aggregates as string[]).map((uuid) => ({uuid})), [{key: 'uuid', header: 'aggregate'}])
  }
}
