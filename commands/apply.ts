import {Args, Flags} from '@oclif/core'
import {ApiError} from '../src/client/client.js'
import {PlacematCommand} from '../src/cli/base.js'
import {SENTENCES} from '../src/cli/output.js'
import {withContext} from '../src/cli/failure.js'
import {readApplyFile, type DatacenterFile} from '../src/cli/apply/apply-file.js'
import {checkOperations, REFUSED} from '../src/cli/apply/check.js'
import {layoutToApply, planLayoutAfter} from '../src/cli/apply/layout-step.js'
import {
  appliedCounts,
  appliedLine,
  dryRunRefusal,
  planLines as topologyPlanLines,
  planSize,
  planSummary as topologySummary,
} from '../src/cli/topology/plan-text.js'
import {planDocument, planIsEmpty, planLineStream, summaryLine} from '../src/cli/apply/plan-text.js'
import {loadState, type Progress} from '../src/cli/backend/backend.js'
import {isConcurrentUpdate} from '../src/cli/services/retry.js'
import {ApplyRefused, type ApplyPlan} from '../src/core/apply-plan/types.js'
import {planApply} from '../src/core/apply-plan/plan.js'
import type {State} from '../src/core/state.js'
import type {Layout, TopologyPlan} from '../src/core/topology.js'
import {conflictError, usageError} from '../src/cli/failure.js'
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
    prune: Flags.boolean({description: 'delete providers that are not in the file (never ones with allocations)'}),
    concurrency: Flags.integer({description: 'calls in flight on a plain Placement endpoint', default: 16, min: 1, max: 256}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Apply)
    let file: DatacenterFile | undefined = await readApplyFile(args.file)
    const layout = layoutToApply(file.layout, flags.prune)
    const backend = await this.backend()
    const tty = Boolean(process.stdout.isTTY) && this.textOutput
    const progress = tty ? (await import('../src/cli/components/Progress.js')).startProgress() : undefined
    const onRead = progress ? (done: number, total: number) => progress.update(done, total, 'reading the current state') : undefined
    const dryRun = flags['dry-run']
    // The dry run refuses what the write would refuse. A write in one transaction is its own
    // check; calls one by one are checked first, so that a refusal comes before the first call.
    // The check runs the plan on the State it was made on, which must be a copy unless the
    // backend can rehearse on its own. A layout is planned on the State the providers' writes
    // leave, so those are run on a copy first.
    const rehearse = dryRun && backend.rehearse !== undefined && !layout
    const check = (dryRun && !rehearse) || !backend.oneTransaction || layout !== undefined
    let state: State | undefined
    try {
      state = await loadState(backend, {onProgress: onRead, changeable: check})
    } finally {
      progress?.stop()
    }
    // placemat keeps the names the file gives aggregates; plain Placement has nowhere to.
    const keepAggregateNames = backend.namedAggregates !== undefined
    const plan: ApplyPlan = this.plan(() => planApply(file!, state!, {prune: flags.prune, keepAggregateNames}))
    if (!keepAggregateNames && plan.namedAggregates > 0) {
      const n = plan.namedAggregates
      process.stderr.write(
        `placemat: warning: plain OpenStack Placement keeps no aggregate names: the ${n === 1 ? 'name' : `${n} names`} the file gives aggregates ${n === 1 ? 'is' : 'are'} not kept (listings show their uuids)\n`,
      )
    }
    file = undefined // what the plan needs of it, it holds
    if (check) await checkOperations(state, plan.operations())
    if (rehearse) await backend.rehearse!(plan)
    // The layout checked before anything is written: a bad one refuses the whole file.
    let topology: TopologyPlan | undefined = layout && (await planLayoutAfter(state, layout, flags.prune === true))
    state = undefined
    const transport = backend.kind
    const placemat = backend.oneTransaction
    const {operationCount, summary} = plan
    // Only --json and --yaml print the document (for a million changes it is hundreds of megabytes).
    const doc = this.textOutput ? undefined : {transport, ...planDocument(plan)}

    if (this.textOutput) printLines([summaryLine(plan)], planLineStream(plan))
    // A dry run that writes no provider lets the backend plan the layout itself, with what
    // the write would be refused for (a broken placement group, plain Placement's own view).
    let layoutRefusal: ApiError | undefined
    if (layout && dryRun && planIsEmpty(plan)) {
      const res = await backend.applyLayout(layout, {dryRun: true, prune: flags.prune, concurrency: flags.concurrency})
      topology = res.plan
      layoutRefusal = res.refusal
    }
    if (dryRun || (planIsEmpty(plan) && !layout)) {
      if (topology && this.textOutput) printTopology(topology, layout)
      if (doc)
        this.outputRecord({...doc, ...(topology ? {topology: {plan: topology, applied: false}} : {}), dry_run: dryRun, applied: false})
      else if (dryRun && (!planIsEmpty(plan) || (topology && planSize(topology) > 0))) this.log('Dry run: nothing was changed.')
      if (layoutRefusal) throw dryRunRefusal(layoutRefusal)
      return
    }

    const start = performance.now()
    // On placemat the providers and the layout are one transaction: both or neither.
    const together = layout !== undefined && !planIsEmpty(plan) && backend.applyWithLayout !== undefined
    let topologyApplied = false
    if (together) {
      if (this.textOutput) {
        if (topology) printTopology(topology, layout)
        this.log(`Applying ${operationCount} operations and the layout in one transaction...`)
      }
      try {
        topology = await backend.applyWithLayout!(plan, layout, {prune: flags.prune === true})
      } catch (err) {
        if (!(err instanceof ApiError)) throw err
        const stale = isConcurrentUpdate(err) ? 'the cloud changed while the plan was applied; ' : ''
        throw withContext(err, stale || REFUSED, stale ? ' (nothing was changed)' : '')
      }
      topologyApplied = planSize(topology) > 0
      if (this.textOutput) {
        this.log(
          `Applied: ${summary.create} created, ${summary.update} updated, ${summary.delete} deleted; ${appliedCounts(topology)} (one transaction, ${seconds(start).toFixed(2)} s).`,
        )
      }
    } else if (!planIsEmpty(plan)) {
      const bar = tty ? (await import('../src/cli/components/Progress.js')).startProgress() : undefined
      let done = 0
      const onApply: Progress = (d, total, label) => {
        done = d
        bar?.update(d, total, label)
      }
      if (!bar && this.textOutput) {
        this.log(placemat ? `Applying ${operationCount} operations in one transaction...` : `Applying ${operationCount} calls...`)
      }
      try {
        await backend.applyOperations(plan, {concurrency: flags.concurrency, onProgress: onApply})
      } catch (err) {
        bar?.stop()
        if (err instanceof ApiError) {
          const stale = isConcurrentUpdate(err) ? 'the cloud changed while the plan was applied; ' : ''
          if (placemat) throw withContext(err, stale || REFUSED, stale ? ' (nothing was changed)' : '')
          throw withContext(err, stale, ` (${done} of ${operationCount} calls were made before this one failed; apply again to finish)`)
        }
        throw err
      }
      bar?.stop()
      if (this.textOutput) {
        const how = placemat ? 'one transaction' : `${operationCount} calls`
        this.log(
          `Applied: ${summary.create} created, ${summary.update} updated, ${summary.delete} deleted (${how}, ${seconds(start).toFixed(2)} s).`,
        )
      }
    }
    if (layout && !together) {
      // The layout after the providers, planned again where it is applied (now that its hosts exist).
      const layoutStart = performance.now()
      const onPlan = (p: TopologyPlan) => this.textOutput && printTopology(p, layout)
      try {
        const res = await backend.applyLayout(layout, {prune: flags.prune, concurrency: flags.concurrency, onPlan})
        topology = res.plan
        topologyApplied = res.applied
        if (res.applied && this.textOutput) this.log(appliedLine(res, seconds(layoutStart)))
      } catch (err) {
        if (!(err instanceof ApiError)) throw err
        throw withContext(err, planIsEmpty(plan) ? '' : 'the providers were applied but not the layout: ', ' (apply again to finish)')
      }
    }
    if (doc) {
      const applied = !planIsEmpty(plan)
      const topologyDoc = topology ? {topology: {plan: topology, applied: topologyApplied}} : {}
      this.outputRecord({
        ...doc,
        ...topologyDoc,
        dry_run: false,
        applied,
        ...(applied ? {operations: operationCount} : {}),
        seconds: Number(seconds(start).toFixed(3)),
      })
    }
  }

  /** A plan the file cannot have: exit 4 when allocations stand in the way, 2 for the file itself. */
  private plan<T>(make: () => T): T {
    try {
      return make()
    } catch (err) {
      if (!(err instanceof ApplyRefused)) throw err
      throw err.allocationConflict ? conflictError(err.message) : usageError(err.message)
    }
  }
}

const seconds = (since: number) => (performance.now() - since) / 1000

/** A layout's plan, as `topology apply` prints it. */
function printTopology(plan: TopologyPlan, layout: Layout | undefined): void {
  printLines([topologySummary(plan)], topologyPlanLines(plan, layout))
}

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
