import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {groupsOf} from '../../src/cli/groups/groups.js'
import {groupFileFlags} from '../../src/cli/groups/flags.js'
import {consumerUuid} from '../../src/cli/backend/consumer-lookup.js'

export default class GroupRemove extends PlacematCommand {
  static summary = 'Remove consumers from a placement group (their allocations stay).'
  static printed = SENTENCES
  static examples = ['<%= config.bin %> group remove db-replicas $SERVER1']
  static strict = false
  static args = {
    name: Args.string({description: 'group name', required: true}),
    consumer: Args.string({description: 'consumer uuids', required: true}),
  }

  static flags = {...groupFileFlags}

  async run(): Promise<void> {
    const {args, argv, flags} = await this.parse(GroupRemove)
    const consumers = (argv as string[]).slice(1).map((c) => consumerUuid(c))
    const g = await (await groupsOf(await this.backend(), flags)).members(args.name, {remove: consumers})
    if (!this.textOutput) return this.outputRecord(g as unknown as Record<string, unknown>)
    this.log(`Group ${g.name}: ${g.members.length} member(s).`)
  }
}
