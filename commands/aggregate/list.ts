import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/base.js'
import {aggregateNames, resolveProvider} from '../../src/cli/services/providers.js'

export default class AggregateList extends PlacematCommand {
  static summary = 'List the aggregates a resource provider is a member of.'
  static description =
    'JSON/YAML: the body of GET /resource_providers/{uuid}/aggregates ({aggregates, resource_provider_generation}). ' +
    'The members of an aggregate: `provider list --member-of AGGREGATE`. In tables, a rack, row or room of ' +
    'placemat is named beside its uuid ("rack k1"), and so is an aggregate an apply file named (placemat keeps ' +
    'those names; plain Placement keeps none).'

  static examples = ['<%= config.bin %> aggregate list compute-1', '<%= config.bin %> provider list --member-of $AGGREGATE']
  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(AggregateList)
    const client = await this.client()
    const p = await resolveProvider(client, args.provider)
    const [body, names] = await Promise.all([client.get(`/resource_providers/${p.uuid}/aggregates`), this.textOutput ? aggregateNames(await this.backend()) : new Map()])
    const rows = (body.aggregates as string[]).map((uuid) => ({uuid, name: names.get(uuid) ?? ''}))
    this.output(body, rows, [{key: 'uuid', header: 'aggregate'}, {key: 'name'}])
  }
}
