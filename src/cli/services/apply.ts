/**
 * `placemat apply FILE`: the cloud made to match a datacenter file. The core plans it on the
 * cloud as it is (core/apply-plan/); this checks the plan as the write would check it (on a
 * copy, or rehearsed where the backend holds the State), plans the file's racks, rows and
 * rooms on what the providers' writes leave, then has the backend carry out both: in one
 * transaction where it can (placemat), else the operations as calls and the layout after them.
 */
import {ApiError} from '../../client/client.js'
import {planApply} from '../../core/apply-plan/plan.js'
import {ApplyRefused, type ApplyPlan} from '../../core/apply-plan/types.js'
import type {State} from '../../core/state/state.js'
import type {Layout, TopologyPlan} from '../../core/topology.js'
import {readApplyFile, type DatacenterFile} from '../apply/apply-file.js'
import {checkOperations, REFUSED} from '../apply/check.js'
import {layoutToApply, planLayoutAfter} from '../apply/layout-step.js'
import {planIsEmpty} from '../apply/plan-text.js'
import {loadState, type Backend, type BackendKind, type Progress} from '../backend/backend.js'
import {conflictError, usageError, withContext} from '../failure.js'
import {appliedCounts, appliedLine, planSize} from '../topology/plan-text.js'
import {isConcurrentUpdate} from '../backend/retry.js'

/** A progress bar: drawn while a long step runs, stopped after it. */
export interface ProgressBar {
  update(done: number, total: number, label: string): void
  stop(): void
}

/** What the apply says as it goes (the command prints it as text; nothing for JSON or YAML). */
export interface ApplyReport {
  /** The providers' plan, checked. */
  plan(plan: ApplyPlan): void
  /** The layout's plan, before it is applied (or instead, in a dry run). */
  layout(plan: TopologyPlan, layout: Layout | undefined): void
  /** A line of what is being done, or was. */
  line(text: string): void
}

export interface ApplyOptions {
  dryRun?: boolean
  prune?: boolean
  /** Calls in flight on plain Placement. */
  concurrency?: number
  /** A progress bar for the reads and for the calls (a terminal); without one, the start of the writes is said. */
  bar?: () => ProgressBar
  report?: ApplyReport
  /** Said whatever the output (the command writes it on stderr). */
  warn: (message: string) => void
}

export interface ApplyOutcome {
  transport: BackendKind
  /** The providers' plan. */
  plan: ApplyPlan
  /** The layout's plan, and whether it was applied. */
  topology?: {plan: TopologyPlan; applied: boolean}
  dryRun: boolean
  /** Whether the providers' operations were written. */
  applied: boolean
  /** From the start of the writes to their end; none when nothing was to be written (a dry run too). */
  seconds?: number
  /** A dry run: what the layout's write would be refused with. */
  refusal?: ApiError
}

const since = (start: number) => (performance.now() - start) / 1000

export async function applyFile(backendOf: () => Promise<Backend>, path: string, opts: ApplyOptions): Promise<ApplyOutcome> {
  const prune = opts.prune === true
  const dryRun = opts.dryRun === true
  const say = opts.report
  let file: DatacenterFile | undefined = await readApplyFile(path)
  const layout = layoutToApply(file.layout, prune)
  const backend = await backendOf()
  // The dry run refuses what the write would refuse. A write in one transaction is its own
  // check; calls one by one are checked first, so that a refusal comes before the first call.
  // The check runs the plan on the State it was made on, which must be a copy unless the
  // backend can rehearse on its own. A layout is planned on the State the providers' writes
  // leave, so those are run on a copy first.
  const rehearse = dryRun && backend.rehearse !== undefined && !layout
  const check = (dryRun && !rehearse) || !backend.oneTransaction || layout !== undefined
  const readBar = opts.bar?.()
  let state: State | undefined
  try {
    const onProgress = readBar ? (done: number, total: number) => readBar.update(done, total, 'reading the current state') : undefined
    state = await loadState(backend, {onProgress, changeable: check})
  } finally {
    readBar?.stop()
  }
  // placemat keeps the names the file gives aggregates; plain Placement has nowhere to.
  const keepAggregateNames = backend.namedAggregates !== undefined
  const plan = planned(() => planApply(file!, state!, {prune, keepAggregateNames}))
  if (!keepAggregateNames && plan.namedAggregates > 0) {
    const n = plan.namedAggregates
    opts.warn(
      `plain OpenStack Placement keeps no aggregate names: the ${n === 1 ? 'name' : `${n} names`} the file gives aggregates ${n === 1 ? 'is' : 'are'} not kept (listings show their uuids)`,
    )
  }
  file = undefined // what the plan needs of it, it holds
  if (check) await checkOperations(state, plan.operations())
  if (rehearse) await backend.rehearse!(plan)
  // The layout checked before anything is written: a bad one refuses the whole file.
  let topology: TopologyPlan | undefined = layout && (await planLayoutAfter(state, layout, prune))
  state = undefined
  const outcome: ApplyOutcome = {transport: backend.kind, plan, dryRun, applied: false}
  say?.plan(plan)

  // A dry run that writes no provider lets the backend plan the layout itself, with what the
  // write would be refused for (a broken placement group, plain Placement's own view).
  if (layout && dryRun && planIsEmpty(plan)) {
    const res = await backend.applyLayout(layout, {dryRun: true, prune, concurrency: opts.concurrency})
    topology = res.plan
    outcome.refusal = res.refusal
  }
  if (dryRun || (planIsEmpty(plan) && !layout)) {
    if (topology) {
      say?.layout(topology, layout)
      outcome.topology = {plan: topology, applied: false}
    }
    return outcome
  }

  const start = performance.now()
  const {operationCount, summary} = plan
  const counts = `${summary.create} created, ${summary.update} updated, ${summary.delete} deleted`
  // On placemat the providers and the layout are one transaction: both or neither.
  const together = layout !== undefined && !planIsEmpty(plan) && backend.applyWithLayout !== undefined
  let topologyApplied = false
  if (together) {
    if (topology) say?.layout(topology, layout)
    say?.line(`Applying ${operationCount} operations and the layout in one transaction...`)
    try {
      topology = await backend.applyWithLayout!(plan, layout, {prune})
    } catch (err) {
      throw refusedWrite(err)
    }
    topologyApplied = planSize(topology) > 0
    say?.line(`Applied: ${counts}; ${appliedCounts(topology)} (one transaction, ${since(start).toFixed(2)} s).`)
  } else if (!planIsEmpty(plan)) {
    await applyOperations(backend, plan, opts)
    const how = backend.oneTransaction ? 'one transaction' : `${operationCount} calls`
    say?.line(`Applied: ${counts} (${how}, ${since(start).toFixed(2)} s).`)
  }
  if (layout && !together) {
    // The layout after the providers, planned again where it is applied (now that its hosts exist).
    const layoutStart = performance.now()
    try {
      const res = await backend.applyLayout(layout, {
        prune,
        concurrency: opts.concurrency,
        onPlan: (p) => say?.layout(p, layout),
      })
      topology = res.plan
      topologyApplied = res.applied
      if (res.applied) say?.line(appliedLine(res, since(layoutStart)))
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      throw withContext(err, planIsEmpty(plan) ? '' : 'the providers were applied but not the layout: ', ' (apply again to finish)')
    }
  }
  outcome.applied = !planIsEmpty(plan)
  if (topology) outcome.topology = {plan: topology, applied: topologyApplied}
  outcome.seconds = since(start)
  return outcome
}

/** The operations alone: one transaction, or calls in stages that stop at the first failure. */
async function applyOperations(backend: Backend, plan: ApplyPlan, opts: ApplyOptions): Promise<void> {
  const {operationCount} = plan
  const bar = opts.bar?.()
  let done = 0
  const onProgress: Progress = (d, total, label) => {
    done = d
    bar?.update(d, total, label)
  }
  if (!bar)
    opts.report?.line(
      backend.oneTransaction ? `Applying ${operationCount} operations in one transaction...` : `Applying ${operationCount} calls...`,
    )
  try {
    await backend.applyOperations(plan, {concurrency: opts.concurrency, onProgress})
  } catch (err) {
    if (backend.oneTransaction || !(err instanceof ApiError)) throw refusedWrite(err)
    const stale = isConcurrentUpdate(err) ? 'the cloud changed while the plan was applied; ' : ''
    throw withContext(err, stale, ` (${done} of ${operationCount} calls were made before this one failed; apply again to finish)`)
  } finally {
    bar?.stop()
  }
}

/** A write in one transaction refused: nothing was changed. */
function refusedWrite(err: unknown): unknown {
  if (!(err instanceof ApiError)) return err
  const stale = isConcurrentUpdate(err) ? 'the cloud changed while the plan was applied; ' : ''
  return withContext(err, stale || REFUSED, stale ? ' (nothing was changed)' : '')
}

/** A plan the file cannot have: exit 4 when allocations stand in the way, 2 for the file itself. */
function planned<T>(make: () => T): T {
  try {
    return make()
  } catch (err) {
    if (!(err instanceof ApplyRefused)) throw err
    throw err.allocationConflict ? conflictError(err.message) : usageError(err.message)
  }
}
