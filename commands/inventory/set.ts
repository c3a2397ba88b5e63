import {Args, Flags} from '@oclif/core'
import {PlacematCommand, type Column} from '../../src/cli/placemat-command.js'
import {collectChanges, inventoryColumns, inventoryRows} from '../../src/cli/services/inventory.js'
import {setInventories} from '../../src/cli/services/inventories.js'
import {usageError} from '../../src/cli/failure.js'
import type {InventoryReplacement} from '../../src/core/placement/inventories.js'

/** The inventories written: of one provider, or (--aggregate) of each member, a line per class. */
const columns = (aggregate?: boolean): Column<any>[] => {
  const written = inventoryColumns.filter((c) => c.key !== 'used')
  return aggregate ? [{key: 'resource_provider', header: 'provider'}, ...written] : written
}

/** What a dry run would drop or reset of one provider's inventories, a line each. */
const replacementLines = (name: string, r: InventoryReplacement): string[] => [
  ...r.dropped.map(
    (d) =>
      `${name}: ${d.resource_class} would be dropped (total ${d.total}): not named, and inventory set replaces all classes (--amend keeps it)`,
  ),
  ...r.reset.map((f) => `${name}: ${f.resource_class} ${f.field} would be reset from ${f.from} to its default ${f.to} (--amend keeps it)`),
]

const field = (description: string) => Flags.string({description, multiple: true, multipleNonGreedy: true, helpValue: 'CLASS=VALUE'})

export default class InventorySet extends PlacematCommand {
  static summary = 'Set the inventories of a resource provider (several classes at once).'
  static description =
    'Arguments are CLASS=TOTAL, or CLASS:FIELD=VALUE as osc-placement takes them (FIELD: total, reserved, min_unit, ' +
    'max_unit, step_size, allocation_ratio). The field flags take CLASS=VALUE (repeatable, or comma separated), or a ' +
    'bare VALUE for every class given as an argument.\n\n' +
    "Without --amend the provider's inventory is REPLACED by the classes given (classes not named are removed, and " +
    "fields not given take Placement's defaults), as `openstack resource provider inventory set` does. With --amend " +
    'the other classes are kept and only the fields given change. The provider generation is read and sent for you; ' +
    'a concurrent update is retried.\n\n' +
    'Prints the inventories written (JSON/YAML: the PUT response body; with --dry-run the body that would be sent).\n\n' +
    "osc-placement's form works as written, `openstack resource provider` as `placemat provider`: " +
    '`placemat provider inventory set UUID --resource VCPU=8 --resource VCPU:allocation_ratio=16` (--resource takes what ' +
    'an argument takes), and `placemat provider inventory class set UUID CLASS --total N [--max_unit N ...]` replaces ' +
    "one class's inventory as osc's does."

  static examples = [
    '<%= config.bin %> inventory set compute-1 VCPU=64 MEMORY_MB=262144 DISK_GB=2000 --allocation-ratio VCPU=4 --reserved MEMORY_MB=512',
    '<%= config.bin %> inventory set compute-1 VCPU=64 --max-unit VCPU=16 --amend',
    '<%= config.bin %> inventory set compute-1 --amend --allocation-ratio VCPU=8,MEMORY_MB=1.5',
    '<%= config.bin %> inventory set compute-1 CUSTOM_FPGA=4 --step-size 2 --amend --dry-run --json',
    '<%= config.bin %> inventory set $AGGREGATE VCPU=32 --aggregate --amend',
    '<%= config.bin %> provider inventory set $UUID --resource VCPU=8 --resource VCPU:allocation_ratio=16 --resource MEMORY_MB=2048',
  ]

  static hiddenAliases = ['provider:inventory:set']

  static strict = false
  static printed = (flags: {aggregate?: boolean}) => ({columns: columns(flags.aggregate)})
  static args = {
    provider: Args.string({description: 'provider uuid or name (with --aggregate: an aggregate uuid)', required: true}),
    resource: Args.string({description: 'CLASS=TOTAL or CLASS:FIELD=VALUE (several may be given)'}),
  }

  static flags = {
    resource: Flags.string({
      description: "CLASS=TOTAL or CLASS:FIELD=VALUE as osc's --resource takes it, beside the arguments (repeatable)",
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'CLASS[:FIELD]=VALUE',
    }),
    amend: Flags.boolean({description: 'keep the classes not named and the fields not given'}),
    total: field('total of a class'),
    reserved: field("amount reserved for the provider's own use"),
    'allocation-ratio': field('overcommit ratio (a number, e.g. VCPU=4.0)'),
    'min-unit': field('smallest amount one allocation may take'),
    'max-unit': field('largest amount one allocation may take'),
    'step-size': field('allocations must be a multiple of this'),
    aggregate: Flags.boolean({description: 'PROVIDER is an aggregate uuid: set the inventory of each of its member providers'}),
    'dry-run': Flags.boolean({description: 'print what would be written, write nothing'}),
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(InventorySet)
    const [target, ...given] = argv as string[]
    const resources = [...given, ...(flags.resource ?? [])]
    const changes = collectChanges(resources, {
      total: flags.total,
      reserved: flags.reserved,
      allocation_ratio: flags['allocation-ratio'],
      min_unit: flags['min-unit'],
      max_unit: flags['max-unit'],
      step_size: flags['step-size'],
    })
    if (!changes.perClass.size && !flags.amend) {
      throw usageError('give at least one CLASS=TOTAL (to remove all inventory use `inventory delete --all`)')
    }
    const results = await setInventories(await this.client(), target, changes, {
      amend: flags.amend,
      aggregate: flags.aggregate,
      dryRun: flags['dry-run'],
      onWarning: (message) => process.stderr.write(`placemat: warning: ${message}\n`),
    })

    // A dry run says what the write would lose: after the table, else on stderr (a document is the body, values are for scripts).
    const lost = flags['dry-run']
      ? [
          ...results[0].classesMade.map((rc) => `resource class ${rc} would be created`),
          ...results.flatMap((r) => replacementLines(r.name, r.replaced)),
        ]
      : []
    const sayLost = () => {
      if (this.format === 'table') for (const line of lost) this.log(line)
      else for (const line of lost) process.stderr.write(`placemat: dry run: ${line}\n`)
    }
    if (!flags.aggregate) {
      const body = results[0].body
      this.output(body, inventoryRows(body.inventories), columns())
      sayLost()
      if (flags['dry-run'] && this.textOutput) this.log('Dry run: nothing was changed.')
      return
    }
    const rows = results.flatMap((r) => inventoryRows(r.body.inventories).map((row) => ({resource_provider: r.uuid, ...row})))
    this.output({resource_providers: Object.fromEntries(results.map((r) => [r.uuid, r.body]))}, rows, columns(true))
    sayLost()
    if (flags['dry-run'] && this.textOutput) this.log('Dry run: nothing was changed.')
  }
}
