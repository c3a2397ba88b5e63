import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {deleteTraits} from '../../src/cli/services/traits.js'

export default class TraitDelete extends PlacematCommand {
  static summary = 'Delete custom traits.'
  static printed = SENTENCES
  static description =
    'Standard traits cannot be deleted (exit 6), nor a trait some provider has (exit 4); deletion stops at the first failure.'

  static examples = ['<%= config.bin %> trait delete CUSTOM_RAID']
  static strict = false
  static args = {name: Args.string({description: 'trait name (several may be given)', required: true})}

  async run(): Promise<void> {
    const {argv} = await this.parse(TraitDelete)
    await deleteTraits(await this.client(), argv as string[])
  }
}
