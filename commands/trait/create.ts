import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {createTraits} from '../../src/cli/services/traits.js'

/** Each name given, and whether this call created it. */
const COLUMNS = [{key: 'name'}, {key: 'created'}]

export default class TraitCreate extends PlacematCommand {
  static summary = 'Create custom traits (idempotent).'
  static description =
    'Names must start with CUSTOM_ and use A-Z, 0-9 and _. Creating an existing trait is not an error. ' +
    'Prints the traits, each with "created" true or false.'

  static examples = ['<%= config.bin %> trait create CUSTOM_RAID CUSTOM_GOLD']
  static strict = false
  static printed = {columns: COLUMNS}
  static args = {name: Args.string({description: 'trait name (several may be given)', required: true})}

  async run(): Promise<void> {
    const {argv} = await this.parse(TraitCreate)
    const rows = await createTraits(await this.client(), argv as string[])
    this.output({traits: rows}, rows, COLUMNS)
  }
}
