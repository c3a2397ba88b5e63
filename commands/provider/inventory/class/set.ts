import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../../../src/cli/placemat-command.js'
import {INVENTORY_DEFAULTS, INVENTORY_FIELDS, collectChanges, type InventoryField} from '../../../../src/cli/services/inventory.js'
import {setInventories} from '../../../../src/cli/services/inventories.js'

/** The fields in the order osc-placement prints them. */
const OSC_FIELDS = ['allocation_ratio', 'min_unit', 'max_unit', 'reserved', 'step_size', 'total'] as const

const field = (description: string, osc: string) => Flags.string({description, aliases: [osc]})

/** osc-placement's `openstack resource provider inventory class set`: one class's inventory replaced, the others kept. */
export default class ProviderInventoryClassSet extends PlacematCommand {
  static summary = "Replace a provider's inventory of one class, keeping its other classes (osc-placement's form)."
  static hidden = true
  static description =
    '`openstack resource provider inventory class set UUID CLASS --total N` as osc-placement takes it (PUT ' +
    ".../inventories/{class}): the fields not given take Placement's defaults (reserved 0, min_unit 1, max_unit " +
    'the most, step_size 1, allocation_ratio 1.0); the other classes are kept. The flags are taken as osc spells ' +
    "them (--max_unit) and as placemat does (--max-unit). placemat's own form: `inventory set PROVIDER " +
    "CLASS=TOTAL --amend ...`, which keeps the fields not given. Prints the inventory written, its fields in osc's order."

  static examples = ['<%= config.bin %> provider inventory class set $UUID VCPU --total 16 --max_unit 4 --reserved 1']

  static printed = {keys: [...OSC_FIELDS]}
  static args = {
    provider: Args.string({description: 'provider uuid or name', required: true}),
    class: Args.string({description: 'resource class', required: true}),
  }

  static flags = {
    total: Flags.string({description: 'total of the class', required: true}),
    reserved: Flags.string({description: "amount reserved for the provider's own use"}),
    'min-unit': field('smallest amount one allocation may take', 'min_unit'),
    'max-unit': field('largest amount one allocation may take', 'max_unit'),
    'step-size': field('allocations must be a multiple of this', 'step_size'),
    'allocation-ratio': field('overcommit ratio (a number)', 'allocation_ratio'),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(ProviderInventoryClassSet)
    const given: Record<Exclude<InventoryField, 'total'>, string | undefined> = {
      reserved: flags.reserved,
      min_unit: flags['min-unit'],
      max_unit: flags['max-unit'],
      step_size: flags['step-size'],
      allocation_ratio: flags['allocation-ratio'],
    }
    // Checked as inventory set checks CLASS:FIELD=VALUE; a field not given is Placement's default, as its PUT of one class makes it.
    const value = (f: InventoryField) => (f === 'total' ? flags.total : (given[f] ?? INVENTORY_DEFAULTS[f]))
    const changes = collectChanges(
      INVENTORY_FIELDS.map((f) => `${args.class}:${f}=${value(f)}`),
      {},
    )
    const [written] = await setInventories(await this.client(), args.provider, changes, {
      amend: true,
      onWarning: (message) => process.stderr.write(`placemat: warning: ${message}\n`),
    })
    const inventory = written.body.inventories[args.class] as Record<string, unknown>
    this.outputRecord(Object.fromEntries(OSC_FIELDS.map((f) => [f, inventory[f]])))
  }
}
