import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {PROVIDER_KEYS, createProvider} from '../../src/cli/services/providers.js'

export default class ProviderCreate extends PlacematCommand {
  static summary = 'Create a resource provider.'
  static description = 'Prints the new provider (POST /resource_providers). The parent may be given by uuid or name.'
  static examples = [
    '<%= config.bin %> provider create compute-1',
    '<%= config.bin %> provider create compute-1_numa0 --parent compute-1',
    '<%= config.bin %> provider create sharing-disk --uuid 4e8e5957-649f-477b-9e5b-f1f75b21c03c --json',
  ]

  static printed = {keys: PROVIDER_KEYS}
  static args = {name: Args.string({description: 'name of the provider (unique)', required: true})}
  static flags = {
    uuid: Flags.string({description: 'uuid to give the provider (default: a new one)'}),
    parent: Flags.string({
      description: "parent provider (uuid or name): makes it a nested provider (osc's --parent-provider too)",
      aliases: ['parent-provider'],
    }),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(ProviderCreate)
    const p = await createProvider(await this.client(), {name: args.name, uuid: flags.uuid, parent: flags.parent})
    if (!this.textOutput) return this.outputRecord(p)
    const {links: _links, ...plain} = p
    this.outputRecord(plain)
  }
}
