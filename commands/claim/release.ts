import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {release} from '../../src/cli/services/claim.js'

export default class ClaimRelease extends PlacematCommand {
  static summary = 'Release everything a consumer holds (DELETE /allocations/{consumer}).'
  static printed = SENTENCES
  static description = 'A consumer that holds nothing is not found (exit 3). Prints nothing; --json prints {"released": CONSUMER}.'
  static examples = ['<%= config.bin %> claim release $SERVER']
  static args = {consumer: Args.string({description: 'consumer uuid', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(ClaimRelease)
    await release(await this.client(), args.consumer)
    if (!this.textOutput) this.outputRecord({released: args.consumer})
  }
}
