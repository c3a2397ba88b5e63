import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {createClasses} from '../../src/cli/services/classes.js'

/** Each name given, and whether this call created it. */
const COLUMNS = [{key: 'name'}, {key: 'created'}]

export default class ClassCreate extends PlacematCommand {
  static summary = 'Create custom resource classes.'
  static description =
    'Names must start with CUSTOM_ and use A-Z, 0-9 and _. An existing class is a conflict (exit 4) unless ' +
    '--exist-ok is given, which makes the command idempotent (PUT /resource_classes/{name}, what ' +
    '`openstack resource class set` does). Prints the classes, each with "created" true or false.'

  static examples = ['<%= config.bin %> class create CUSTOM_FPGA', '<%= config.bin %> class create CUSTOM_A CUSTOM_B --exist-ok']

  static strict = false
  static printed = {columns: COLUMNS}
  static args = {name: Args.string({description: 'class name (several may be given)', required: true})}
  static flags = {'exist-ok': Flags.boolean({description: 'no error when the class already exists'})}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(ClassCreate)
    const rows = await createClasses(await this.client(), argv as string[], flags['exist-ok'])
    this.output({resource_classes: rows}, rows, COLUMNS)
  }
}
