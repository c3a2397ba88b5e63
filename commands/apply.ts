import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../src/cli/placemat-command.js'
import {SENTENCES} from '../src/cli/output.js'
import {planLines as topologyPlanLines, planSize, planSummary as topologySummary} from '../src/cli/topology/plan-text.js'
import {planDocument, planIsEmpty, planLineStream, summaryLine} from '../src/cli/apply/plan-text.js'
import {applyFile, type ApplyReport} from '../src/cli/services/apply.js'
import {NAMES_NAMESPACE} from '../src/core/uuids.js'

export default class Apply extends PlacematCommand {
  static summary =
    'Make providers, inventories, traits and aggregates (and a layout of racks, rows and rooms) match a YAML file (idempotent).'
  static printed = SENTENCES

  static description = `Reads FILE (YAML or JSON; "-" for stdin), compares it with the cloud,
prints the plan (one line per change: "+" create, "~" update, "-" delete;
unchanged things are not listed) and applies it. Running it again with
the same file plans nothing.

On a placemat endpoint (and always with --db) the plan is one
POST /placemat/v1/batch: one transaction, all or nothing. On a plain
OpenStack Placement endpoint it is applied as standard calls in order
(classes and traits, renames, creates parents first, re-parenting,
inventories/traits/aggregates, deletes children first), --concurrency at
a time; if a call fails, the calls before it stay made and applying again
finishes the job.

The file (see fixtures/cloud.yaml and docs/cli/apply.md):
- resource_classes, traits: custom classes and traits to create (CUSTOM_* names that providers use are created anyway)
- aggregates: an optional map of aggregate names to uuids
- providers: a list; each one has a name (required); a uuid (default: the provider of that name, else uuid5 of the name); a parent (top level only: a name, a uuid or null; absent: left as it is, a new provider is a root); inventories (CLASS: TOTAL, or CLASS: {total, reserved, min_unit, max_unit, step_size, allocation_ratio}, Placement's defaults for the fields left out); traits; aggregates (uuids or names); children (nested providers, same keys but parent)
- rooms, rows, racks: optional, a layout as \`placemat topology apply\` takes it (see its help), so that one file holds a datacenter; it is applied after the providers, in the same command, and the plan shows both

inventories, traits and aggregates are managed only when the key is
there, and then they are the provider's whole set (traits: [] removes
every trait). Providers not in the file are left alone, unless --prune:
then every provider that is neither in the file nor the parent of one is
deleted (custom classes and traits are never deleted).

A JSON file (named *.json, or starting with '{') is read provider by
provider and never held as text; YAML is parsed whole, which suits the
files people write: big files (a hundred thousand providers and more)
should be JSON.

Names become uuids as Python's uuid.uuid5(NAMESPACE, NAME) does, with
placemat's fixed namespace ${NAMES_NAMESPACE}:
an aggregate named A is uuid5(ns, "aggregate:A"); a new provider P
without a uuid is uuid5(ns, "provider:P"). One file, the same uuids
everywhere.

With a layout, --prune also makes the topology exactly the file's layout
(as \`topology apply --prune\`); without one, the topology is left alone.

Nothing is applied when the plan cannot work: exit 4 when it would remove
a class from an inventory that has allocations or --prune a provider that
has allocations; exit 2 for unknown standard traits or classes, inventory
values Placement refuses (a total below 1, reserved above total, ...),
parents that do not exist, loops, or names taken by other providers,
every problem listed; exit 6 for a layout that cannot be applied (an
unknown host, a host in two racks).`

  static examples = [
    '<%= config.bin %> apply fixtures/cloud.yaml --dry-run',
    '<%= config.bin %> apply cloud.yaml --url http://placement:8778 --token $OS_TOKEN',
    '<%= config.bin %> apply cloud.yaml --db placement.db --prune',
  ]

  static args = {
    file: Args.string({required: true, description: 'YAML or JSON file ("-" for stdin)'}),
  }

  static flags = {
    'dry-run': Flags.boolean({description: 'print the plan and change nothing'}),
    summary: Flags.boolean({description: "the plan's counts only, not a line per change (10,000 providers are 10,000 lines)"}),
    prune: Flags.boolean({description: 'delete providers that are not in the file (never ones with allocations)'}),
    concurrency: Flags.integer({description: 'calls in flight on a plain Placement endpoint', default: 16, min: 1, max: 256}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Apply)
    const text = this.textOutput
    const tty = Boolean(process.stdout.isTTY) && text
    const startProgress = tty ? (await import('../src/cli/components/Progress.js')).startProgress : undefined
    const out = await applyFile(() => this.backend(), args.file, {
      dryRun: flags['dry-run'],
      prune: flags.prune,
      concurrency: flags.concurrency,
      bar: startProgress && (() => startProgress()),
      report: text ? textReport(this, flags.summary) : undefined,
      warn: (message) => process.stderr.write(`placemat: warning: ${message}\n`),
    })
    // Only --json and --yaml print the document (for a million changes it is hundreds of megabytes).
    this.endPlan({
      answer: () => {
        const topology = out.topology ? {topology: out.topology} : {}
        const doc = {transport: out.transport, ...planDocument(out.plan), ...topology, dry_run: out.dryRun, applied: out.applied}
        if (out.seconds === undefined) return doc
        return {...doc, ...(out.applied ? {operations: out.plan.operationCount} : {}), seconds: Number(out.seconds.toFixed(3))}
      },
      dryRun: out.dryRun,
      changes: !planIsEmpty(out.plan) || Boolean(out.topology && planSize(out.topology.plan) > 0),
      refusal: out.refusal,
    })
  }
}

/** The apply's report as text: the plans as lines, a few thousand at a time, and what it does. */
const textReport = (command: Apply, summary = false): ApplyReport => ({
  plan: (plan) => printLines([summaryLine(plan)], summary ? [] : planLineStream(plan)),
  layout: (plan, layout) => printLines([topologySummary(plan)], summary ? [] : topologyPlanLines(plan, layout)),
  line: (line) => command.log(line),
})

/** Writes lines to stdout a few thousand at a time. */
function printLines(...sources: Iterable<string>[]): void {
  let chunk: string[] = []
  for (const source of sources) {
    for (const line of source) {
      chunk.push(line)
      if (chunk.length === 2000) {
        process.stdout.write(chunk.join('\n') + '\n')
        chunk = []
      }
    }
  }
  if (chunk.length) process.stdout.write(chunk.join('\n') + '\n')
}
