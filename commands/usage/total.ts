import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {usageTotal} from '../../src/cli/services/usage-total.js'
import {usageError} from '../../src/cli/failure.js'

export default class UsageTotal extends PlacematCommand {
  static summary = 'Show the total usage of a project (optionally of one user) across all providers.'
  static description =
    'What `openstack resource usage show PROJECT` gives (GET /usages). From Placement 1.38 usages are grouped by ' +
    'consumer type, each group with its consumer count; --consumer-type keeps one type ("all" adds every type ' +
    'together, "unknown" keeps the consumers without a type). Each line\'s CONSUMERS counts the consumers of its type ' +
    "that hold its class (GET /usages counts the whole type: read from the project's consumers, on plain Placement " +
    "from every provider's allocations). Lines by type, then class. For one provider's usage see `usage show PROVIDER`.\n\n" +
    'JSON/YAML: the body of GET /usages ({"usages": {TYPE: {CLASS: N, consumer_count: N}}} from 1.38).\n\n' +
    "osc-placement's `openstack resource usage show PROJECT --user-id USER` is `placemat usage total PROJECT --user-id USER`."

  static examples = [
    '<%= config.bin %> usage total --project 6c8d1e9b2c6f4b5e8a1d3f7c9b2e4a6d',
    '<%= config.bin %> usage total --project $PROJECT --user $USER --consumer-type INSTANCE',
    '<%= config.bin %> usage total --project $PROJECT --consumer-type all --json',
    '<%= config.bin %> usage total $PROJECT --user-id $USER',
  ]

  static args = {project: Args.string({description: 'project id, as osc takes it (or --project)'})}
  static flags = {
    project: Flags.string({description: 'project id (or the PROJECT argument)'}),
    user: Flags.string({description: "user id (osc's --user-id too)", aliases: ['user-id']}),
    'consumer-type': Flags.string({description: 'only this consumer type (or "all", "unknown")'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(UsageTotal)
    const project = args.project ?? flags.project
    if (project === undefined) throw usageError('give the project: PROJECT or --project')
    if (args.project !== undefined && flags.project !== undefined && args.project !== flags.project) {
      throw usageError(`two projects given: ${args.project} and --project ${flags.project}`)
    }
    const query = {project, user: flags.user, consumerType: flags['consumer-type']}
    const {body, rows, grouped} = await usageTotal(await this.endpoint(), query, {rows: this.printsRows})
    const columns = [
      ...(grouped ? [{key: 'consumer_type', header: 'type'}] : []),
      {key: 'resource_class', header: 'class'},
      {key: 'usage', align: 'right' as const},
      ...(grouped ? [{key: 'consumer_count', header: 'consumers', align: 'right' as const}] : []),
    ]
    this.output(body, rows, columns)
  }
}
