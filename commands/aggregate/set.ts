import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {setAggregates, setColumns} from '../../src/cli/services/sets.js'

export default class AggregateSet extends PlacematCommand {
  static summary = 'Replace the aggregates of a resource provider (none given: take it out of all).'
  static description =
    'Aggregates are uuids. The provider generation (Placement 1.19) is read and sent for you and a concurrent update ' +
    'is retried, unless --generation is given: then it is sent as is and a mismatch fails (exit 4). ' +
    'Prints the aggregates now (JSON/YAML: the PUT response body).\n\n' +
    "osc-placement's form works as written, `openstack resource provider` as `placemat provider`: " +
    '`placemat provider aggregate set UUID --aggregate A --aggregate B --generation N`.'

  static examples = [
    '<%= config.bin %> aggregate set compute-1 0a7a5ee4-3f0c-4b4e-9b1d-2a0f3c1ee8d1 5f1c2c4e-1111-4e9e-a1b1-8d1c7f0e2a10',
    '<%= config.bin %> aggregate set compute-1',
    '<%= config.bin %> aggregate set compute-1 $AGG --generation 7',
    '<%= config.bin %> provider aggregate set $UUID --aggregate $AGG1 --aggregate $AGG2 --generation 7',
  ]

  static hiddenAliases = ['provider:aggregate:set']

  static strict = false
  static printed = {columns: setColumns.aggregates}
  static args = {
    provider: Args.string({description: 'provider uuid or name', required: true}),
    aggregate: Args.string({description: 'aggregate uuid (several may be given)'}),
  }

  static flags = {
    aggregate: Flags.string({
      description: 'an aggregate uuid as osc takes it, beside the arguments (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    generation: Flags.integer({description: 'the provider generation to expect (no retry)'}),
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(AggregateSet)
    const [ref, ...given] = argv as string[]
    const aggregates = [...given, ...(flags.aggregate ?? [])]
    const body = await setAggregates(await this.client(), ref, aggregates, flags.generation)
    this.output(
      body,
      body.aggregates.map((uuid) => ({uuid})),
      setColumns.aggregates,
    )
  }
}
