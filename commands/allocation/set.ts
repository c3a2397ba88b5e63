import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {allocationColumns, allocationDocument, allocationRows} from '../../src/cli/render/allocation-tables.js'
import {
  amendAmounts,
  amountsOf,
  parseAllocationArgs,
  resolveAllocationProviders,
  updateConsumer,
} from '../../src/cli/services/allocations.js'

export default class AllocationSet extends PlacematCommand {
  static summary = 'Replace the allocations of a consumer.'
  static description =
    '--allocation rp=PROVIDER,CLASS=AMOUNT,... as osc-placement takes it (repeatable; PROVIDER is a uuid or a name). ' +
    'Without --amend this is a full replacement: classes and providers not given are released. With --amend the ' +
    'given amounts are laid over the current ones (CLASS=0 releases a class).\n\n' +
    'The consumer generation is read and sent for you (a concurrent update is retried). --project and --user are ' +
    'needed for a new consumer and default to the current ones; --consumer-type defaults to the current one ' +
    '(a new consumer without one gets no type: an empty TYPE, consumer_type null).\n\n' +
    'Prints the allocations now (JSON/YAML: as GET /allocations/{consumer}, consumer_type null for none, as allocation show prints it). Not enough capacity is a conflict (exit 4).\n\n' +
    "osc-placement's `openstack resource provider allocation set CONSUMER` is `placemat provider allocation set CONSUMER` too (--allocation, --project-id, --user-id, --consumer-type)."

  static examples = [
    '<%= config.bin %> allocation set $SERVER --allocation rp=compute-1,VCPU=2,MEMORY_MB=4096 --project $PROJECT --user $USER --consumer-type INSTANCE',
    '<%= config.bin %> allocation set $SERVER --allocation rp=compute-1,VCPU=2 --allocation rp=shared-disk,DISK_GB=40',
    '<%= config.bin %> allocation set $SERVER --amend --allocation rp=compute-1,VCPU=4',
  ]

  static hiddenAliases = ['provider:allocation:set']
  static printed = {columns: allocationColumns}
  static args = {consumer: Args.string({description: 'consumer uuid', required: true})}
  static flags = {
    allocation: Flags.string({
      description: 'rp=PROVIDER,CLASS=AMOUNT[,CLASS=AMOUNT...] (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
      required: true,
    }),
    project: Flags.string({
      description: "project id of the consumer (default: the current one; osc's --project-id too)",
      aliases: ['project-id'],
    }),
    user: Flags.string({description: "user id of the consumer (default: the current one; osc's --user-id too)", aliases: ['user-id']}),
    'consumer-type': Flags.string({description: 'consumer type, e.g. INSTANCE or MIGRATION (default: the current one)'}),
    amend: Flags.boolean({description: 'keep the current allocations not named; CLASS=0 releases a class'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(AllocationSet)
    const client = await this.client()
    const wanted = await resolveAllocationProviders(client, parseAllocationArgs(flags.allocation, flags.amend))
    const own = {project: flags.project, user: flags.user, consumerType: flags['consumer-type']}
    const body = await updateConsumer(client, args.consumer, own, (current) =>
      flags.amend ? amendAmounts(amountsOf(current), wanted) : wanted,
    )
    this.output(allocationDocument(body), allocationRows(body), allocationColumns)
  }
}
