import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {createClasses} from '../../src/cli/services/classes.js'

export default class ClassSet extends PlacematCommand {
  static summary = 'Make sure custom resource classes exist: create those that do not (idempotent).'
  static printed = SENTENCES
  static description =
    "osc-placement's `openstack resource class set NAME` (PUT /resource_classes/{name}), printing nothing as it does; " +
    '`class create NAME --exist-ok` does the same and prints each class with "created" true or false.'

  static examples = ['<%= config.bin %> class set CUSTOM_FPGA']

  static strict = false
  static args = {name: Args.string({description: 'class name (several may be given)', required: true})}

  async run(): Promise<void> {
    const {argv} = await this.parse(ClassSet)
    await createClasses(await this.client(), argv as string[], true)
  }
}
