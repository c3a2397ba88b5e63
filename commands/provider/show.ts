import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {formatResources} from '../../src/cli/render/resources.js'
import type {Column} from '../../src/cli/placemat-command.js'
import {labelledAggregates, showProvider} from '../../src/cli/services/providers.js'

export default class ProviderShow extends PlacematCommand {
  static summary = 'Show a resource provider.'
  static description =
    'PROVIDER is a uuid or a name. Its aggregates are listed, each named beside its uuid where placemat has a name ' +
    'for it (a rack, row or room, or a name an apply file gave). With --allocations the consumers holding resources on it are included ' +
    '(JSON/YAML: an "allocations" key as in GET /resource_providers/{uuid}/allocations); with --ids, the consumers\' uuids ' +
    'alone, one a line, and with -c, the allocation columns asked for (consumer, resources, consumer_generation).'

  static examples = [
    '<%= config.bin %> provider show compute-1',
    '<%= config.bin %> provider show 4e8e5957-649f-477b-9e5b-f1f75b21c03c --allocations --json',
  ]

  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}
  static flags = {allocations: Flags.boolean({description: 'include the allocations held on the provider'})}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(ProviderShow)
    const {record, uuid, allocations} = await showProvider(await this.client(), args.provider, {allocations: flags.allocations})
    if (!this.textOutput) return this.outputRecord(record)
    const rows = Object.entries(allocations ?? {}).map(([consumer, a]) => ({
      uuid: consumer,
      consumer,
      resources: a.resources,
      consumer_generation: a.consumer_generation,
    }))
    const columns: Column<(typeof rows)[number]>[] = [
      {key: 'consumer'},
      {key: 'resources', get: (r) => formatResources(r.resources)},
      {key: 'consumer_generation', header: 'generation', align: 'right'},
    ]
    // For scripts, with --allocations: --ids lists the consumers' uuids, -c picks among the
    // allocation columns (consumer, resources, consumer_generation), the provider left out.
    if (allocations && (this.base.ids || this.base.columns)) {
      if (this.base.ids) {
        for (const r of rows) this.log(r.uuid)
        return
      }
      return this.output(undefined, rows, columns)
    }
    const {links: _links, allocations: _a, ...plain} = record
    // Its aggregates, each named beside its uuid where placemat has a name for it (tables only: JSON stays Placement's body).
    const listed = await labelledAggregates(await this.endpoint(), uuid)
    plain.aggregates = listed.map((a) => (a.label === null ? a.uuid : `${a.label} (${a.uuid})`)).join(', ')
    this.outputRecord(plain)
    if (allocations) {
      this.log('')
      this.output(undefined, rows, columns)
    }
  }
}
