import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {PROVIDER_KEYS, updateProvider} from '../../src/cli/services/providers.js'
import {usageError} from '../../src/cli/failure.js'

export default class ProviderSet extends PlacematCommand {
  static summary = 'Rename or re-parent a resource provider.'
  static description =
    'Changes what is given and keeps the rest (PUT /resource_providers/{uuid}). Moving a provider to another ' +
    'parent, or making it a root with --no-parent, needs Placement 1.37 or later.'

  static examples = [
    '<%= config.bin %> provider set compute-1 --name compute-001',
    '<%= config.bin %> provider set compute-1_numa0 --parent compute-2',
    '<%= config.bin %> provider set compute-1_numa0 --no-parent',
  ]

  static printed = {keys: PROVIDER_KEYS}
  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}
  static flags = {
    name: Flags.string({description: 'new name'}),
    parent: Flags.string({
      description: "new parent provider (uuid or name; osc's --parent-provider too)",
      aliases: ['parent-provider'],
      exclusive: ['no-parent'],
    }),
    'no-parent': Flags.boolean({description: 'make the provider the root of its own tree'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(ProviderSet)
    if (flags.name === undefined && flags.parent === undefined && !flags['no-parent']) {
      throw usageError('nothing to change: give --name, --parent or --no-parent')
    }
    const parent = flags.parent !== undefined ? flags.parent : flags['no-parent'] ? null : undefined
    const out = await updateProvider(await this.client(), args.provider, {name: flags.name, parent})
    if (!this.textOutput) return this.outputRecord(out)
    const {links: _links, ...plain} = out
    this.outputRecord(plain)
  }
}
