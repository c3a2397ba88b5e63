import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {providerAggregates} from '../../src/cli/services/providers.js'
import {readAggregates} from '../../src/cli/services/sets.js'

export default class AggregateList extends PlacematCommand {
  static summary = 'List the aggregates a resource provider is a member of.'
  static description =
    'JSON/YAML: the body of GET /resource_providers/{uuid}/aggregates ({aggregates, resource_provider_generation}). ' +
    'The members of an aggregate: `provider list --member-of AGGREGATE`. In tables, a rack, row or room of ' +
    'placemat is named beside its uuid ("rack k1"), and so is an aggregate an apply file named (placemat keeps ' +
    'those names; plain Placement keeps none). Tables list those an apply file named first, by name, then racks, rows ' +
    'and rooms, then the others by uuid, whatever order the provider was given them in.\n\n' +
    "osc-placement's `openstack resource provider aggregate list UUID` is `placemat provider aggregate list UUID` too " +
    "(-c uuid prints osc's one column)."

  static examples = ['<%= config.bin %> aggregate list compute-1', '<%= config.bin %> provider list --member-of $AGGREGATE']
  static hiddenAliases = ['provider:aggregate:list']
  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(AggregateList)
    const body = await readAggregates(await this.client(), args.provider)
    // Tables: named ones first, by name, then racks, rows and rooms, then the rest by uuid (JSON stays Placement's body).
    const listed = this.printsRows ? await providerAggregates(await this.backend(), body.aggregates) : []
    const rows = listed.map((a) => ({uuid: a.uuid, name: a.label ?? ''}))
    this.output(body, rows, [{key: 'uuid', header: 'aggregate'}, {key: 'name'}])
  }
}
