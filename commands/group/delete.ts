import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {groupsOf} from '../../src/cli/groups/groups.js'
import {groupFileFlags} from '../../src/cli/groups/flags.js'

export default class GroupDelete extends PlacematCommand {
  static summary = 'Delete placement groups (their members keep their allocations).'
  static printed = SENTENCES
  static examples = ['<%= config.bin %> group delete db-replicas']
  static strict = false
  static args = {name: Args.string({description: 'group name (several may be given)', required: true})}
  static flags = {...groupFileFlags}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(GroupDelete)
    const groups = await groupsOf(await this.backend(), flags)
    for (const name of argv as string[]) await groups.delete(name)
    if (this.textOutput) this.log(`Deleted ${(argv as string[]).join(', ')}.`)
    else this.outputRecord({deleted: argv})
  }
}
