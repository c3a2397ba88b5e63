import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {resolveProvider} from '../../src/cli/backend/provider-lookup.js'
import {setColumns, updateProviderSet} from '../../src/cli/services/sets.js'

export default class AggregateRemove extends PlacematCommand {
  static summary = 'Remove a resource provider from aggregates, keeping its others.'
  static description =
    'Aggregates it is not a member of are ignored. The provider generation is read and sent for you, and a ' +
    'concurrent update is retried. Prints the aggregates left (JSON/YAML: as GET .../aggregates).'

  static examples = ['<%= config.bin %> aggregate remove compute-1 0a7a5ee4-3f0c-4b4e-9b1d-2a0f3c1ee8d1']
  static strict = false
  static printed = {columns: setColumns.aggregates}
  static args = {
    provider: Args.string({description: 'provider uuid or name', required: true}),
    aggregate: Args.string({description: 'aggregate uuid (several may be given)', required: true}),
  }

  async run(): Promise<void> {
    const {argv} = await this.parse(AggregateRemove)
    const [ref, ...aggregates] = argv as string[]
    const client = await this.client()
    const p = await resolveProvider(client, ref)
    const gone = new Set(aggregates.map((a) => a.toLowerCase()))
    const body = await updateProviderSet(client, p.uuid, 'aggregates', (cur) => cur.filter((a) => !gone.has(a.toLowerCase())))
    this.output(
      body,
      body.aggregates!.map((uuid) => ({uuid})),
      setColumns.aggregates,
    )
  }
}
