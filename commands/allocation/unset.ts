import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {allocationColumns, allocationDocument, allocationRows} from '../../src/cli/render/allocation-tables.js'
import {amountsOf, unsetAmounts, updateConsumer} from '../../src/cli/services/allocations.js'
import {resolveProviderUuids} from '../../src/cli/backend/provider-lookup.js'
import {notFoundError} from '../../src/cli/failure.js'
import {hasAllocations} from '../../src/cli/backend/consumer-lookup.js'

export default class AllocationUnset extends PlacematCommand {
  static summary = 'Release some of the allocations of a consumer.'
  static description =
    "As osc-placement's unset: --provider releases everything the consumer holds on those providers; " +
    '--resource-class releases those classes (on every provider, or only on the --provider ones); neither releases ' +
    'everything. What the consumer does not hold is ignored. Project, user, consumer type and generation are kept ' +
    'and sent for you (a concurrent update is retried). A consumer without allocations is not found (exit 3).\n\n' +
    'Prints the allocations left (JSON/YAML: as GET /allocations/{consumer}, consumer_type null for none, as allocation show prints it).\n\n' +
    "osc-placement's `openstack resource provider allocation unset CONSUMER` is `placemat provider allocation unset CONSUMER` too (--provider, --resource-class)."

  static examples = [
    '<%= config.bin %> allocation unset $SERVER --provider old-compute',
    '<%= config.bin %> allocation unset $SERVER --resource-class VGPU',
    '<%= config.bin %> allocation unset $SERVER --provider compute-1 --resource-class DISK_GB',
  ]

  static hiddenAliases = ['provider:allocation:unset']
  static printed = {columns: allocationColumns}
  static args = {consumer: Args.string({description: 'consumer uuid', required: true})}
  static flags = {
    provider: Flags.string({description: 'provider (uuid or name) to release from (repeatable)', multiple: true, multipleNonGreedy: true}),
    'resource-class': Flags.string({description: 'resource class to release (repeatable)', multiple: true, multipleNonGreedy: true}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(AllocationUnset)
    const client = await this.client()
    const refs = flags.provider ?? []
    const uuids = [...(await resolveProviderUuids(client, refs)).values()]
    const body = await updateConsumer(client, args.consumer, {}, (current) => {
      if (!hasAllocations(current)) throw notFoundError(`consumer ${args.consumer} has no allocations`)
      return unsetAmounts(amountsOf(current), uuids, flags['resource-class'] ?? [])
    })
    this.output(allocationDocument(body), allocationRows(body), allocationColumns)
  }
}
