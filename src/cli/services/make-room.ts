/**
 * `placemat make-room` and `placemat drain rack:NAME`: the core's plan (core/make-room/plan.ts),
 * made on a copy of the cloud any backend holds, and carried out move by move:
 *
 *  1. read the cloud and plan; a dry run (the default) stops here, and so does a plan that
 *     cannot reach the goal: nothing is changed;
 *  2. a domain drained is first taken out of service (each of its hosts COMPUTE_STATUS_DISABLED,
 *     unless --keep-enabled), so nothing new lands in it, then read and planned again (a plan
 *     that no longer holds brings the hosts back and changes nothing else);
 *  3. each move is one write of the consumer's whole allocations with its consumer generation,
 *     which the server checks against the cloud as it is at that moment (no provider overfilled;
 *     placemat: no hard rule broken). A write refused with 409 (the room was taken, the consumer
 *     changed) makes the rest of the plan stale: the cloud is read again and what is still
 *     missing planned again from there, up to MAX_REPLANS times; then the run stops, saying what
 *     was done and what was not. A move is one write, so no consumer is ever left half moved.
 */
import type {FlavorRequest} from '../../core/headroom/flavors.js'
import type {HeadroomLevel} from '../../core/headroom/headroom.js'
import {lostHosts} from '../../core/headroom/what-if.js'
import {isDisabled} from '../../core/host.js'
import {domainFits, type DomainFit} from '../../core/make-room/domain-fits.js'
import {goalCount, planGoal, type Plan, type PlannedMove} from '../../core/make-room/plan.js'
import {moveRecord, planRecord, type MoveRecord, type PlanGoal, type PlanRecord} from '../../core/make-room/record.js'
import type {State} from '../../core/state/state.js'
import type {Backend} from '../backend/backend.js'
import {withContext} from '../failure.js'
import {ApiError} from '../../client/client.js'
import {DEFAULT_REASON} from './drain.js'
import {isConflict, writeMove} from './move-write.js'

export interface MakeRoomFlags {
  /** Carry the plan out (the default is a dry run). */
  apply?: boolean
  maxMoves?: number
  /** A drained domain: leave its hosts in service. */
  keepEnabled?: boolean
  /** Why, kept with each host a drain disables. */
  reason?: string
  /** Plain Placement: the groups file and the layout file. */
  groups?: string
  layout?: string
  onProgress?: (done: number, total: number, label: string) => void
  /** Called before each write (tests race it: other clients claim meanwhile). */
  beforeMove?: (move: MoveRecord, done: number) => Promise<void> | void
}

/** Times a run plans again after a refused move before it stops. */
export const MAX_REPLANS = 5

export type MakeRoomReport = PlanRecord & {
  transport: Backend['kind']
  applied: boolean
  /** The goal reached (a dry run: the plan reaches it). */
  complete: boolean
  /** Whether anything was written. */
  changed: boolean
  /** Times the rest was planned again after a refused move. */
  replans: number
  /** The flavor's fit per domain before and after (the flavor goal). */
  domains?: DomainFit[]
  /** A drained domain: the hosts it took out of service (or would). */
  disabled_hosts?: string[]
  /** What the goal counted when the run ended (after --apply). */
  fit_now?: number
}

/** The cloud as a State with its placement groups and topology, to plan on (a copy: planning changes it). */
const cloudState = (backend: Backend, flags: MakeRoomFlags): Promise<State> =>
  backend.stateWithGroups({groups: flags.groups, layout: flags.layout}, {consumers: true, consumerOwners: true})

/** The level the fits per domain are shown at: the goal's domain's, racks for the cloud. */
const fitLevel = (goal: PlanGoal): HeadroomLevel =>
  goal.in && goal.in.level !== 'host' ? goal.in.level : goal.in?.level === 'host' ? 'host' : 'rack'

function report(backend: Backend, s: State, goal: PlanGoal, flavor: FlavorRequest | undefined, plan: Plan): MakeRoomReport {
  const r: MakeRoomReport = {
    ...planRecord(goal, plan),
    transport: backend.kind,
    applied: false,
    complete: plan.possible,
    changed: false,
    replans: 0,
  }
  if (goal.goal === 'flavor' && flavor) r.domains = domainFits(s, plan.cloudAfter, flavor, fitLevel(goal), goal.in?.name)
  return r
}

export async function makeRoom(
  backend: Backend,
  goal: PlanGoal,
  flavor: FlavorRequest | undefined,
  flags: MakeRoomFlags = {},
): Promise<MakeRoomReport> {
  const opts = {maxMoves: flags.maxMoves}
  let s = await cloudState(backend, flags)
  let plan = planGoal(s, goal, flavor, opts)
  const first = report(backend, s, goal, flavor, plan)
  const drained = goal.goal === 'drain' && !flags.keepEnabled ? lostHosts(s, [goal.in]).filter((h) => !isDisabled(h)) : []
  if (drained.length) first.disabled_hosts = drained.map((h) => h.name)
  if (!flags.apply || !plan.possible) return first

  // Every goal is a count the cloud reaches (K of the flavor fit, as capacity counts; N hosts
  // empty; nobody left in the domain): under churn the same goal is planned again from there.
  const reached = (n: number) => (goal.goal === 'drain' ? n === 0 : n >= goal.count)
  const disabled: string[] = []
  if (drained.length) {
    for (const h of drained) {
      await backend.setHostStatus(h.uuid, true, flags.reason ?? DEFAULT_REASON)
      disabled.push(h.uuid)
    }
    s = await cloudState(backend, flags)
    plan = planGoal(s, goal, flavor, opts)
    if (!plan.possible) {
      for (const uuid of disabled) await backend.setHostStatus(uuid, false)
      return {...report(backend, s, goal, flavor, plan), disabled_hosts: []}
    }
  }

  const done: MoveRecord[] = []
  let queue: PlannedMove[] = plan.moves
  let next = 0
  let replans = 0
  let stopped: {moves: MoveRecord[]; why: string} | null = null as {moves: MoveRecord[]; why: string} | null
  const total = () => done.length + queue.length - next
  flags.onProgress?.(0, total(), `${total()} moves`)
  let after: State | null = null
  /** The goal planned again on the cloud as it is now; false (and `stopped` said) when it cannot be reached. */
  const planAgain = (cloud: State, cause: string): boolean => {
    replans++
    const left = flags.maxMoves === undefined ? undefined : Math.max(0, flags.maxMoves - done.length)
    plan = planGoal(cloud, goal, flavor, {maxMoves: left})
    if (!plan.possible) {
      const why = `planned again after ${cause}: ${plan.why}`
      stopped = {moves: notDone(queue.slice(next), done.length, why), why}
      return false
    }
    queue = plan.moves
    next = 0
    return true
  }
  for (;;) {
    if (next === queue.length) {
      // The plan is done; others may have taken the room it made meanwhile.
      after = await cloudState(backend, flags)
      const now = goalCount(after, goal, flavor)
      if (reached(now)) break
      if (replans === MAX_REPLANS) {
        stopped = {moves: [], why: `others kept taking the room the moves made (planned again ${MAX_REPLANS} times)`}
        break
      }
      if (!planAgain(after, 'others took the room the moves made')) break
      after = null
      continue
    }
    const move = queue[next]
    const record = moveRecord(move, done.length + 1, 'moved')
    await flags.beforeMove?.(record, done.length)
    try {
      await writeMove(backend, move)
      done.push(record)
      next++
      flags.onProgress?.(done.length, total(), `moved ${done.length} of ${total()}`)
    } catch (err) {
      if (!isConflict(err))
        throw err instanceof ApiError
          ? withContext(err, `moving consumer ${move.consumer}: `, ` (${done.length} moves were made before this; plan again to go on)`)
          : err
      if (replans === MAX_REPLANS) {
        stopped = {moves: notDone(queue.slice(next), done.length, `refused: ${err.detail}`), why: err.detail}
        break
      }
      const cloud = await cloudState(backend, flags)
      const now = goalCount(cloud, goal, flavor)
      if (reached(now)) {
        after = cloud
        break
      }
      if (!planAgain(cloud, `a move was refused (${err.detail})`)) break
    }
  }
  const now = goalCount(after ?? (await cloudState(backend, flags)), goal, flavor)
  return {
    ...first,
    applied: true,
    changed: done.length > 0 || disabled.length > 0,
    complete: reached(now),
    replans,
    fit_now: now,
    moves: [...done, ...(stopped?.moves ?? [])],
    ...(stopped ? {why: stopped.why} : {}),
  }
}

/** Moves not made, numbered after the `made` that were. */
const notDone = (moves: readonly PlannedMove[], made: number, why: string): MoveRecord[] =>
  moves.map((m, k) => ({...moveRecord(m, made + k + 1, 'not moved'), why}))
