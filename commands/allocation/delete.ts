import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {deleteAllocations} from '../../src/cli/services/allocations.js'

export default class AllocationDelete extends PlacematCommand {
  static summary = 'Delete all the allocations of consumers.'
  static printed = SENTENCES
  static description =
    'A consumer without allocations is not found (exit 3); deletion stops at the first failure.\n\n' +
    "osc-placement's `openstack resource provider allocation delete CONSUMER` is `placemat provider allocation delete CONSUMER` too."
  static examples = ['<%= config.bin %> allocation delete $SERVER', '<%= config.bin %> allocation delete $SERVER $MIGRATION']
  static hiddenAliases = ['provider:allocation:delete']
  static strict = false
  static args = {consumer: Args.string({description: 'consumer uuid (several may be given)', required: true})}

  async run(): Promise<void> {
    const {argv} = await this.parse(AllocationDelete)
    await deleteAllocations(await this.client(), argv as string[])
  }
}
