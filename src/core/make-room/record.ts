/**
 * A plan as placemat answers it: the API's body (POST /placemat/v1/make-room) and the command
 * line's --json, one shape for both. Hosts by name (and uuid beside), snake_case as Placement's
 * own records; a bound no plan can meet (Infinity) is null, as JSON has no Infinity.
 */
import type {ProviderAmounts} from '../drain.js'
import type {BreachRecord} from '../groups.js'
import type {Plan, PlanDomain, PlannedMove} from './plan.js'

/** What was asked: K more of a flavor, N hosts empty, or a domain drained. */
export type PlanGoal =
  | {goal: 'flavor'; flavor: string; count: number; in: PlanDomain | null}
  | {goal: 'free_hosts'; count: number; in: PlanDomain | null}
  | {goal: 'drain'; in: PlanDomain}

/** Where a move stands when a plan is carried out: planned (a dry run), done, or not done and why. */
export type MoveStatus = 'planned' | 'moved' | 'not moved'

export interface MoveRecord {
  /** Its place in the plan, from 1: the order the moves run in. */
  step: number
  consumer: string
  from: string
  to: string
  from_uuid: string
  to_uuid: string
  /** What it holds on the host it leaves, by provider (what it holds on a shared pool stays). */
  resources: ProviderAmounts
  /** What it takes on the host it goes to, by provider. */
  takes: ProviderAmounts
  /** All it holds after the move, as Placement's allocations body takes it: ready to write. */
  allocations: Record<string, {resources: Record<string, number>}>
  project_id: string
  user_id: string
  consumer_type: string | null
  /** The consumer generation the move is written with. */
  consumer_generation: number
  groups: string[]
  /** The soft rules the move breaks (none where a place that keeps them had room). */
  soft_breaches: BreachRecord[]
  status: MoveStatus
  /** Why a move was not made. */
  why?: string
}

export type PlanRecord = PlanGoal & {
  possible: boolean
  /** What the goal counts before and after the moves: instances that fit; hosts empty; consumers left in the domain. */
  fit_before: number
  fit_after: number
  target: number
  /** Which found the moves: the exact search, or the heuristic. */
  method: Plan['method']
  /** How the moves are known to be the fewest (the lower bound met, or the search); null: not known. */
  proof: Plan['proof']
  /** The fewest moves any plan needs, as far as is known; null: no plan can. */
  lower_bound: number | null
  why?: string
  search: Plan['search']
  moves: MoveRecord[]
}

export function moveRecord(m: PlannedMove, step: number, status: MoveStatus = 'planned'): MoveRecord {
  return {
    step,
    consumer: m.consumer,
    from: m.fromName,
    to: m.toName,
    from_uuid: m.fromHost,
    to_uuid: m.host,
    resources: m.from,
    takes: m.to,
    allocations: Object.fromEntries(Object.entries(m.allocations).map(([rp, resources]) => [rp, {resources}])),
    project_id: m.project,
    user_id: m.user,
    consumer_type: m.type,
    consumer_generation: m.generation,
    groups: m.groups,
    soft_breaches: m.soft,
    status,
  }
}

export function planRecord(goal: PlanGoal, plan: Plan): PlanRecord {
  const r: PlanRecord = {
    ...goal,
    possible: plan.possible,
    fit_before: plan.fitBefore,
    fit_after: plan.fitAfter,
    target: plan.target,
    method: plan.method,
    proof: plan.proof,
    lower_bound: Number.isFinite(plan.lowerBound) ? plan.lowerBound : null,
    search: plan.search,
    moves: plan.moves.map((m, k) => moveRecord(m, k + 1)),
  }
  if (plan.why !== undefined) r.why = plan.why
  return r
}
