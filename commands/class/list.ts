import {Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {listClasses} from '../../src/cli/services/classes.js'

export default class ClassList extends PlacematCommand {
  static summary = 'List resource classes (standard and custom).'
  static description = 'JSON/YAML: the body of GET /resource_classes.'
  static examples = ['<%= config.bin %> class list', '<%= config.bin %> class list --custom']
  static flags = {custom: Flags.boolean({description: 'only the custom classes (CUSTOM_*)'})}

  async run(): Promise<void> {
    const {flags} = await this.parse(ClassList)
    const body = await listClasses(await this.client(), {custom: flags.custom})
    this.output(body, body.resource_classes, [{key: 'name'}])
  }
}
