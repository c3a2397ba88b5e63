import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/base.js'
import {resolveProvider} from '../../src/cli/services/providers.js'

export default class AggregateList extends PlacematCommand {
  static summary = 'List the aggregates a resource provider is a member of.'
  static description =
    'JSON/YAML: the body of GET /resource_providers/{uuid}/aggregates ({aggregates, resource_provider_generation}). ' +
    'The members of an aggregate: `provider list --member-of AGGREGATE`. In tables, a rack, row or room of ' +
    'placemat is named beside its uuid.'

  static examples = ['<%= config.bin %> aggregate list compute-1', '<%= config.bin %> provider list --member-of $AGGREGATE']
  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(AggregateList)
    const client = await this.client()
    const p = await resolveProvider(client, args.provider)
    const [body, names] = await Promise.all([client.get(`/resource_providers/${p.uuid}/aggregates`), this.topologyNames()])
    const rows = (body.aggregates as string[]).map((uuid) => ({uuid, name: names.get(uuid) ?? ''}))
    this.output(body, rows, [{key: 'uuid', header: 'aggregate'}, {key: 'name'}])
  }

  /** "rack k1" for each of placemat's racks, rows and rooms (tables only: JSON stays Placement's body). */
  private async topologyNames(): Promise<Map<string, string>> {
    if (!this.textOutput) return new Map()
    const nodes = await (await this.backend()).topologyNodes()
    return new Map(nodes.map((n) => [n.uuid, `${n.level} ${n.name}`]))
  }
}
