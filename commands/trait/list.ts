import {Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {listTraits} from '../../src/cli/services/traits.js'

export default class TraitList extends PlacematCommand {
  static summary = 'List traits.'
  static description = 'JSON/YAML: the body of GET /traits ({"traits": [...]}).'
  static examples = [
    '<%= config.bin %> trait list --name startswith:CUSTOM_',
    '<%= config.bin %> trait list --name in:HW_CPU_X86_AVX2,HW_CPU_X86_SSE42 --json',
    '<%= config.bin %> trait list --associated',
  ]

  static flags = {
    name: Flags.string({description: 'startswith:PREFIX or in:T1,T2,...'}),
    associated: Flags.boolean({description: 'only traits some provider has'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TraitList)
    const body = await listTraits(await this.client(), {name: flags.name, associated: flags.associated})
    this.output(
      body,
      body.traits.map((name) => ({name})),
      [{key: 'name'}],
    )
  }
}
