import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {deleteClasses} from '../../src/cli/services/classes.js'

export default class ClassDelete extends PlacematCommand {
  static summary = 'Delete custom resource classes.'
  static printed = SENTENCES
  static description =
    'Standard classes cannot be deleted (exit 6), nor a class some provider has inventory of (exit 4); ' +
    'deletion stops at the first failure.'

  static examples = ['<%= config.bin %> class delete CUSTOM_FPGA']
  static strict = false
  static args = {name: Args.string({description: 'class name (several may be given)', required: true})}

  async run(): Promise<void> {
    const {argv} = await this.parse(ClassDelete)
    await deleteClasses(await this.client(), argv as string[])
  }
}
