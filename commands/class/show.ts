import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {showClass} from '../../src/cli/services/classes.js'

export default class ClassShow extends PlacematCommand {
  static summary = 'Show a resource class (exit 3 when there is none of that name).'
  static description = 'JSON/YAML: the body of GET /resource_classes/{name}.'
  static examples = ['<%= config.bin %> class show CUSTOM_FPGA']
  static args = {name: Args.string({description: 'resource class name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(ClassShow)
    const body = await showClass(await this.client(), args.name)
    if (!this.textOutput) return this.outputRecord(body)
    this.outputRecord({name: body.name})
  }
}
