import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {checkTrait} from '../../src/cli/services/traits.js'

export default class TraitShow extends PlacematCommand {
  static summary = 'Tell whether a trait exists (exit 0 and its name, or exit 3).'
  static description = 'JSON/YAML: {"name": NAME}.'
  static examples = ['<%= config.bin %> trait show HW_CPU_X86_AVX2']
  static args = {name: Args.string({description: 'trait name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(TraitShow)
    await checkTrait(await this.client(), args.name)
    this.outputRecord({name: args.name})
  }
}
