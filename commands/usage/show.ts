import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {capacity} from '../../src/cli/services/inventory.js'
import {readUsages} from '../../src/cli/services/inventories.js'

export default class UsageShow extends PlacematCommand {
  static summary = 'Show what is used on a resource provider, per resource class.'
  static description =
    'The usage topic has two commands: `usage show PROVIDER` (one provider, what `openstack resource provider usage ' +
    "show` gives) and `usage total --project P` (a project's consumption across all providers, what `openstack " +
    'resource usage show` gives).\n\n' +
    'The table adds the capacity of each class ((total - reserved) * allocation_ratio) and what is free. ' +
    'JSON/YAML: the body of GET /resource_providers/{uuid}/usages ({resource_provider_generation, usages}).\n\n' +
    "osc-placement's `openstack resource provider usage show UUID` is `placemat provider usage show UUID` too."

  static examples = ['<%= config.bin %> usage show compute-1', '<%= config.bin %> usage show compute-1 --json']
  static hiddenAliases = ['provider:usage:show']

  static args = {provider: Args.string({description: 'provider uuid or name', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(UsageShow)
    const {name, usage: use, inventories} = await readUsages(await this.client(), args.provider, this.textOutput)
    const rows = Object.entries(use.usages as Record<string, number>).map(([rc, used]) => {
      const cap = inventories[rc] ? capacity(inventories[rc]) : undefined
      return {resource_class: rc, usage: used, capacity: cap, free: cap === undefined ? undefined : cap - used}
    })
    if (rows.length === 0 && this.textOutput && this.format === 'table') {
      // No table to print: Placement lists the classes a provider has inventory of, and it has none.
      this.log(
        `${name} has no inventory, so nothing is used on it (this counts the provider alone: its child providers' are in \`placemat provider tree ${name}\`).`,
      )
      return
    }
    this.output(use, rows, [
      {key: 'resource_class', header: 'class'},
      {key: 'usage', align: 'right'},
      {key: 'capacity', align: 'right'},
      {key: 'free', align: 'right'},
    ])
  }
}
