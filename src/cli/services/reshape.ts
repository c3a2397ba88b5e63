/**
 * `placemat reshape PLAN`: moves inventory (and the allocations against it) between
 * providers with one POST /reshaper, online or offline.
 *
 * The plan (formats/reshape-plan.ts) is a POST /reshaper body or a list of moves. The service reads
 * what the plan involves as a Snapshot (reshape-read.ts), builds a State from it, turns the
 * plan into a reshaper body against that State (compileReshapeMoves, or fillGenerations for
 * a body) and checks it by running placemat's own reshaper on a copy of the State
 * (checkReshape: the trees before and after, the allocations that move, the conflicts the
 * real run would hit). Then, unless it is a dry run, it writes:
 *
 *  - on a placemat daemon, and offline (--db FILE, where the client runs the daemon's own
 *    app in process): the new child providers and the reshape in ONE POST
 *    /placemat/v1/batch, one transaction (a killed process leaves the file as it was; a
 *    daemon serving the same file sees the commit on its next request);
 *  - on plain Placement: it has no call that creates a provider inside a reshape, so new
 *    children are created first (POST /resource_providers), then POST /reshaper; if the
 *    reshape fails, the children created by this run are deleted again. Until then they
 *    exist empty (no inventory, no traits), which no scheduling query can select; if the
 *    clean-up itself cannot happen, running the plan again reuses them by name.
 *
 * A 409 concurrent_update (someone wrote in between) re-reads and re-plans, a few times,
 * when the generations were ours to fill in.
 */
import {violationError} from '../../core/groups.js'
import type {PlacementClient} from '../../client/client.js'
import {LocalTransport} from '../backend/local-transport.js'
import {ErrorCode, PlacementError} from '../../core/errors.js'
import {checkReshape} from '../../core/reshape/check.js'
import {ReshapePlanError, type CompiledReshape} from '../../core/reshape/compiled.js'
import {fillGenerations} from '../../core/reshape/generations.js'
import {compileReshapeMoves, consumersToRead, movesInPlace} from '../../core/reshape/moves.js'
import {stateFromSnapshot} from '../../core/snapshot.js'
import type {State} from '../../core/state/state.js'
import {notFoundError, usageError} from '../failure.js'
import type {Backend} from '../backend/backend.js'
import type {ReshapePlanFile} from '../formats/reshape-plan.js'
import {providersNamedByBody, providersNamedByMoves, readReshapeSnapshot} from './reshape-read.js'
import type {ReshapeReport} from '../render/reshape-report.js'
import {isConcurrentUpdate, backoff} from '../backend/retry.js'

export interface ReshapeOptions {
  dryRun: boolean
  tries?: number
  /** Go ahead even if allocations taken to other hosts break a placement group (placemat). */
  allowViolations?: boolean
}

/** Reads what the plan involves and makes it a reshape against what was read. */
async function planReshape(client: PlacementClient, plan: ReshapePlanFile): Promise<{state: State; compiled: CompiledReshape | null}> {
  if (plan.kind === 'body') {
    const start = await providersNamedByBody(client, plan.body)
    const state = stateFromSnapshot(await readReshapeSnapshot(client, start, () => Object.keys(plan.body.allocations ?? {})))
    return {state, compiled: fillGenerations(state, plan.body)}
  }
  const start = await providersNamedByMoves(client, plan.moves)
  const snapshot = await readReshapeSnapshot(client, start, (trees) => consumersToRead(stateFromSnapshot(trees), plan.moves))
  const state = stateFromSnapshot(snapshot)
  // Run again after it worked: the moves are in place, and that is success, not "nothing to move".
  if (movesInPlace(state, plan.moves)) return {state, compiled: null}
  try {
    return {state, compiled: compileReshapeMoves(state, plan.moves)}
  } catch (err) {
    if (!(err instanceof ReshapePlanError)) throw err
    throw err.missingProvider ? notFoundError(`plan: ${err.message}`) : usageError(`plan: ${err.message}`)
  }
}

/** The report of a plan whose moves are all in place already: nothing to do, exit 0. */
function alreadyDone(plan: ReshapePlanFile, opts: ReshapeOptions, transaction: 'offline' | 'online'): ReshapeReport {
  return {
    plan: plan.kind,
    dry_run: opts.dryRun,
    applied: false,
    done: true,
    transaction,
    creates: [],
    body: {inventories: {}, allocations: {}},
    microversion: '1.37',
    before: [],
    after: null,
    moves: [],
    conflicts: [],
    error: null,
    attempts: 1,
  }
}

/** A write someone else's write got in front of: worth a re-read and a re-plan. */
const concurrentUpdate = (err: unknown) =>
  isConcurrentUpdate(err) || (err instanceof PlacementError && err.code === ErrorCode.CONCURRENT_UPDATE)

/** For a dry run that would fail: the error the real run would end with, said as a prediction. */
export function dryRunFailure(r: ReshapeReport): PlacementError | null {
  if (!r.dry_run || !r.error) return null
  return new PlacementError(r.error.status, `the reshape would fail: ${r.error.detail}`, r.error.code)
}

/**
 * Plans, checks and (unless dry run) applies a reshape. Throws the reshaper's answer
 * (PlacementError when the check already shows it, ApiError from the endpoint) when it
 * fails; `onReport` gets the report before the error so a failed write still shows what was tried.
 */
export async function runReshape(
  backend: Backend,
  plan: ReshapePlanFile,
  opts: ReshapeOptions,
  onReport?: (r: ReshapeReport) => void,
): Promise<ReshapeReport> {
  const client = backend.client
  const tries = opts.tries ?? 5
  const created: string[] = []
  for (let attempt = 1; ; attempt++) {
    const {state, compiled} = await planReshape(client, plan)
    if (!compiled) return alreadyDone(plan, opts, client.transport instanceof LocalTransport ? 'offline' : 'online')
    const result = checkReshape(state, compiled)
    const microversion = compiled.consumerTypes ? '1.38' : '1.37'
    const report: ReshapeReport = {
      plan: plan.kind,
      dry_run: opts.dryRun,
      applied: false,
      transaction: client.transport instanceof LocalTransport ? 'offline' : 'online',
      creates: compiled.creates,
      body: compiled.body,
      microversion,
      before: result.before,
      after: result.after,
      moves: result.moves,
      conflicts: result.conflicts,
      error: result.error && {status: result.error.status, detail: result.error.detail, code: result.error.code},
      attempts: attempt,
    }
    if (opts.dryRun) {
      // The write would check the placement groups of the consumers it moves: so does the dry run.
      if (backend.groupBreaches && !report.error) {
        const placements = Object.fromEntries(
          Object.entries(compiled.body.allocations ?? {}).map(([c, a]) => [c, Object.keys(a.allocations ?? {})]),
        )
        const violations = Object.keys(placements).length ? await backend.groupBreaches(placements) : []
        if (violations.length) {
          report.group_violations = violations
          if (!opts.allowViolations) {
            const refusal = violationError(violations)
            report.error = {status: refusal.status, detail: refusal.detail, code: refusal.code}
          }
        }
      }
      return report
    }
    try {
      // A plan the check already finds failing is not tried (nothing is created for it).
      if (result.error) throw result.error
      report.atomic = await backend.reshape(compiled, microversion, created, {allowViolations: opts.allowViolations})
      report.applied = true
      return report
    } catch (err) {
      if (concurrentUpdate(err) && compiled.generationsFilled && attempt < tries) {
        await backoff(attempt)
        continue
      }
      onReport?.(report)
      // Plain Placement: take back the providers this run created for the failed reshape.
      for (const uuid of created.reverse()) await client.delete(`/resource_providers/${uuid}`).catch(() => undefined)
      throw err
    }
  }
}
