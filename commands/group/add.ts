import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {allowViolationsFlag, groupFileFlags, refusedForGroups} from '../../src/cli/groups/flags.js'
import {groupsOf} from '../../src/cli/groups/groups.js'
import {consumerUuid} from '../../src/cli/backend/consumer-lookup.js'

export default class GroupAdd extends PlacematCommand {
  static summary = 'Add consumers to a placement group.'
  static printed = SENTENCES
  static description = `Consumers that already hold allocations are checked where they are: if that
breaks the group's rule, nothing is added (exit 4, naming the members and
where they are) unless --allow-violations.`

  static examples = ['<%= config.bin %> group add db-replicas $SERVER1 $SERVER2']
  static strict = false
  static args = {
    name: Args.string({description: 'group name', required: true}),
    consumer: Args.string({description: 'consumer uuids', required: true}),
  }

  static flags = {...allowViolationsFlag, ...groupFileFlags}

  async run(): Promise<void> {
    const {args, argv, flags} = await this.parse(GroupAdd)
    const consumers = (argv as string[]).slice(1).map((c) => consumerUuid(c))
    const groups = await groupsOf(await this.backend(), flags)
    const g = await refusedForGroups(() => groups.members(args.name, {add: consumers}, {allowViolations: flags['allow-violations']}))
    if (!this.textOutput) return this.outputRecord(g as unknown as Record<string, unknown>)
    this.log(
      `Group ${g.name}: ${g.members.length} member(s); ${g.violations.length ? `${g.violations.length} breach(es) of ${g.rule}` : 'the rule holds'}.`,
    )
  }
}
