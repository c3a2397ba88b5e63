import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/base.js'

export default class ClassShow extends PlacematCommand {
  static summary = 'Show a resource class (exit 3 when there is none of that name).'
  static description = 'JSON/YAML: the body of GET /resource_classes/{name}.'
  static examples = ['<%= config.bin %> class show CUSTOM_FPGA']
  static args = {name: Args.string({description: 'resource class name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(ClassShow)
    const client = await this.client()
    const body = await client.get(`/resource_classes/${encodeURIComponent(args.name)}`)
    if (!this.textOutput) return this.outputRecord(body)
    this.outputRecord({name: body.name})
  }
}
