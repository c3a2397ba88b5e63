import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {allocationColumns, allocationDocument, allocationRows} from '../../src/cli/render/allocation-tables.js'
import {shownConsumer} from '../../src/cli/services/allocations.js'

export default class AllocationShow extends PlacematCommand {
  static summary = 'Show the allocations of a consumer.'
  static description =
    'One line per provider, by uuid (TYPE empty for a consumer of no type). A consumer the endpoint knows nothing of is exit 3, ' +
    'as for consumer show (Placement answers it with empty allocations); one placemat keeps a record of shows none (exit 0). ' +
    'JSON/YAML: the body of GET /allocations/{consumer} ({allocations, project_id, user_id, consumer_generation, consumer_type}), ' +
    'but a consumer of no type has consumer_type null (Placement says "unknown", which it refuses when sent back), as `placemat export` writes it.\n\n' +
    "osc-placement's `openstack resource provider allocation show CONSUMER` is `placemat provider allocation show CONSUMER` too."

  static examples = [
    '<%= config.bin %> allocation show 9a1f2b0c-6c3e-4f1e-8b7e-2d4c6a8e0f13',
    '<%= config.bin %> allocation show $SERVER --json',
  ]
  static hiddenAliases = ['provider:allocation:show']
  static args = {consumer: Args.string({description: 'consumer uuid (e.g. an instance or migration)', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(AllocationShow)
    const body = await shownConsumer(await this.endpoint(), args.consumer)
    this.output(allocationDocument(body), allocationRows(body), allocationColumns)
  }
}
