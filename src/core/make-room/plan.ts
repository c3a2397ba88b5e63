/**
 * Make room: the fewest consumer moves after which a goal holds, each move a live migration
 * (world.ts) valid when it runs, in the order they run. Three goals:
 *   planMakeRoom     K more of a flavor fit in a domain (the cloud when none), as capacity counts;
 *   planFreeHosts    N hosts of a domain empty, the emptiest first;
 *   planDrainDomain  every consumer of a rack, row, room (or host) placed outside it.
 * Pure over the State: the planning is done on numbers (world.ts), and the plan replayed on a copy
 * (result.ts) as its writes would be, which gives the counts after it. How it is found: solve.ts.
 */
import {PlacementError} from '../errors.js'
import type {FlavorRequest} from '../headroom/flavors.js'
import {headroomTable, releaseTable} from '../headroom/headroom.js'
import {lostHosts, type LostDomain} from '../headroom/what-if.js'
import type {State} from '../state/state.js'
import {FlavorFit} from './fit.js'
import {DrainGoal, EmptyGoal, RoomGoal, type Short} from './goals.js'
import {drainHeuristic, emptyHeuristic, roomHeuristic} from './heuristic.js'
import type {PlanGoal} from './record.js'
import {plannedMoves, replay, type PlannedMove} from './result.js'
import {Rules} from './rules.js'
import {solve, type SolveOptions, type Solved} from './solve.js'
import {World} from './world.js'

export type {PlannedMove} from './result.js'

/** A host, rack, row or room by name; none: the cloud. */
export type PlanDomain = LostDomain

export interface Plan {
  possible: boolean
  moves: PlannedMove[]
  /** What the goal counts before and after the moves: instances that fit; hosts empty; consumers left in the domain. */
  fitBefore: number
  fitAfter: number
  /** What it asked: K instances; N empty hosts; 0 consumers left. */
  target: number
  /** Which found the moves (or proved there are none). */
  method: 'exact' | 'heuristic'
  /** How the moves are known to be the fewest: they meet the lower bound, or the exact search proved it; null: not known. */
  proof: 'bound' | 'search' | null
  /** The fewest moves any plan needs, as far as is known (the plan's own count when proved; Infinity: no plan can). */
  lowerBound: number
  /** Why there is no plan: the class that binds, the rule, or the consumer that finds no place. */
  why?: string
  /** The exact search, when it ran: the states it reached, and whether it finished. */
  search: {nodes: number; complete: boolean} | null
  /** The cloud after the moves: the copy they were replayed on, which `fitAfter` was counted on (the State itself when there are none). */
  cloudAfter: State
}

export interface MakeRoomOptions extends SolveOptions {
  flavor: FlavorRequest
  count: number
  domain?: PlanDomain
}

export interface FreeHostsOptions extends SolveOptions {
  count: number
  domain?: PlanDomain
}

/** The fewest moves after which `count` more of `flavor` fit in the domain (capacity's count). */
export function planMakeRoom(s: State, opts: MakeRoomOptions): Plan {
  if (!(Number.isInteger(opts.count) && opts.count >= 0))
    throw new PlacementError(400, `The count must be a whole number, not ${opts.count}`)
  const w = new World(s)
  const rules = new Rules(w)
  const fit = new FlavorFit(w, opts.flavor, domainHosts(s, w, opts.domain))
  const goal = new RoomGoal(fit, opts.count)
  const before = fit.fit()
  const counted = capacityFit(s, opts.flavor, opts.domain)
  if (before !== counted) throw new PlacementError(500, `make-room: counted ${before} of ${opts.flavor.flavor}, capacity says ${counted}`)
  const solved = solve(w, rules, goal, () => roomHeuristic(w, rules, goal), opts)
  const short = solved.moves ? null : goal.short()
  const why = solved.moves
    ? undefined
    : short
      ? `${opts.count} of ${opts.flavor.flavor} take ${short.held} ${short.rc}, more than the ${short.free} free on every enabled host and pool together: ${short.rc} binds`
      : solved.lowerBound === Infinity && solved.proof === 'bound'
        ? ceilingWhy(fit, opts.count, opts.domain)
        : solved.why
  return answer(s, w, rules, solved, before, opts.count, why, (after) => capacityFit(after, opts.flavor, opts.domain))
}

/** The fewest moves that leave `count` hosts of the domain empty (those empty already count), the emptiest emptied first. */
export function planFreeHosts(s: State, opts: FreeHostsOptions): Plan {
  if (!(Number.isInteger(opts.count) && opts.count >= 0))
    throw new PlacementError(400, `The count must be a whole number, not ${opts.count}`)
  const w = new World(s)
  const rules = new Rules(w)
  const hosts = domainHosts(s, w, opts.domain)
  const goal = new EmptyGoal(w, hosts, opts.count)
  const solved = solve(w, rules, goal, () => emptyHeuristic(w, rules, goal), opts)
  const short = solved.moves ? null : goal.short()
  const why = solved.moves
    ? undefined
    : short
      ? shortText(short, `the ${goal.count - goal.value()} emptiest hosts of ${domainText(opts.domain)} to empty`)
      : (solved.why ??
        `${domainText(opts.domain)} has ${hosts.length} hosts, of which ${hosts.filter((i) => goal.emptiable(i)).length} can be emptied`)
  return answer(s, w, rules, solved, goal.value(), opts.count, why, (after) => emptyHosts(after, w, hosts))
}

/** Every consumer of the domain's hosts placed outside it, one move each where it can be: a plan, or why not. */
export function planDrainDomain(s: State, domain: PlanDomain, opts: SolveOptions = {}): Plan {
  const w = new World(s)
  const rules = new Rules(w)
  const hosts = domainHosts(s, w, domain)
  const goal = new DrainGoal(w, hosts)
  const solved = solve(w, rules, goal, () => drainHeuristic(w, rules, goal), opts)
  const short = solved.moves ? null : goal.short()
  const why = short ? shortText(short, `the consumers of ${domainText(domain)}`) : solved.why
  return answer(
    s,
    w,
    rules,
    solved,
    goal.value(),
    0,
    why,
    (after) => consumersLeft(after, w, hosts),
    (n) => n === 0,
  )
}

/** The planner a goal asks for (record.ts PlanGoal): the flavor goal takes the flavor's request. */
export function planGoal(s: State, goal: PlanGoal, flavor: FlavorRequest | undefined, opts: SolveOptions = {}): Plan {
  const domain = goal.in ?? undefined
  if (goal.goal === 'drain') return planDrainDomain(s, goal.in, opts)
  if (goal.goal === 'free_hosts') return planFreeHosts(s, {...opts, count: goal.count, domain})
  if (!flavor) throw new PlacementError(400, `make-room: no flavor named ${goal.flavor}`)
  return planMakeRoom(s, {...opts, flavor, count: goal.count, domain})
}

/**
 * What a goal counts on `s` now (instances of the flavor that fit in the domain; empty hosts;
 * consumers left), so that a plan carried out under churn is planned again for what is still
 * missing.
 */
export function goalCount(s: State, goal: PlanGoal, flavor: FlavorRequest | undefined): number {
  if (goal.goal === 'flavor') return flavor ? capacityFit(s, flavor, goal.in ?? undefined) : 0
  const w = new World(s)
  const hosts = domainHosts(s, w, goal.in ?? undefined)
  return goal.goal === 'free_hosts' ? emptyHosts(s, w, hosts) : consumersLeft(s, w, hosts)
}

/** Why pieces cannot all go: what they hold of a class, against what is free where they may go. */
const shortText = (short: Short, who: string): string =>
  `${who} hold ${short.held} ${short.rc}, more than the ${short.free} free on the other enabled hosts and the pools: ${short.rc} binds`

function answer(
  s: State,
  w: World,
  rules: Rules,
  solved: Solved,
  before: number,
  target: number,
  why: string | undefined,
  recount: (after: State) => number,
  reached: (after: number) => boolean = (n) => n >= target,
): Plan {
  const moves = solved.moves ? plannedMoves(w, rules, solved.moves) : []
  const cloudAfter = moves.length ? replay(s, moves) : s
  const after = moves.length ? recount(cloudAfter) : before
  // The copy counts what the numbers promised (a drain: nothing left), or the planner is wrong.
  if (solved.moves && !reached(after)) throw new PlacementError(500, `make-room: the plan replayed counts ${after}, against ${target}`)
  const plan: Plan = {
    possible: solved.moves !== null,
    moves,
    fitBefore: before,
    fitAfter: after,
    target,
    method: solved.method,
    proof: solved.proof,
    lowerBound: solved.lowerBound,
    search: solved.search,
    cloudAfter,
  }
  if (!plan.possible) plan.why = why ?? 'no plan found'
  return plan
}

/** The domain's hosts, by number; every host for the cloud. A domain with no host is a 404. */
function domainHosts(s: State, w: World, domain: PlanDomain | undefined): number[] {
  if (!domain) return Array.from({length: w.n}, (_, i) => i)
  return lostHosts(s, [domain]).map((h) => w.hostNumber.get(h.uuid)!)
}

export const domainText = (domain: PlanDomain | undefined): string => (domain ? `${domain.level} ${domain.name}` : 'the cloud')

/** What capacity counts of `flavor` in the domain. */
function capacityFit(s: State, flavor: FlavorRequest, domain: PlanDomain | undefined): number {
  const t = headroomTable(s, [flavor], {levels: [domain?.level ?? 'cloud']})
  const k = t.names.indexOf(domain?.name ?? 'cloud')
  const fit = k < 0 ? 0 : t.fit[k]
  releaseTable(t)
  return fit
}

/** How many of the hosts (numbers of `w`, made of the cloud `after` was copied from) hold nothing in `after`. */
function emptyHosts(after: State, w: World, hosts: readonly number[]): number {
  return hosts.filter((i) => after.subtree(w.forest.hosts[i].uuid).every((p) => p.allocations.size === 0)).length
}

/** How many consumers hold something on the hosts in `after`. */
function consumersLeft(after: State, w: World, hosts: readonly number[]): number {
  const found = new Set<string>()
  for (const i of hosts) for (const p of after.subtree(w.forest.hosts[i].uuid)) for (const c of p.allocations.keys()) found.add(c)
  return found.size
}

/**
 * Why K can never fit: with every piece that may move gone from the domain's hosts, what the
 * domain would hold, and what binds most of its hosts then.
 */
function ceilingWhy(fit: FlavorFit, count: number, domain: PlanDomain | undefined): string {
  const {w} = fit
  const hosts = fit.hosts.filter((i) => fit.counts(i))
  const where = domainText(domain)
  if (hosts.length === 0) return `no enabled host of ${where} could ever hold ${fit.flavor.flavor}`
  const gone = hosts.flatMap((i) => [...w.on(i)].filter((id) => w.pieces[id].movable))
  const shift = (sign: number) => {
    for (const id of gone) {
      const p = w.pieces[id]
      const at = w.forest.pairAt[p.host]
      for (let t = 0; t < p.held.pairs.length; t++) w.free[at + p.held.pairs[t]] += sign * p.held.pairAmounts[t]
      w.version[p.host]++
    }
  }
  shift(1)
  const most = fit.fit()
  const votes = new Map<string, number>()
  for (const i of hosts) {
    fit.count(i)
    const b = fit.lastBinding(i)
    if (b) votes.set(b, (votes.get(b) ?? 0) + 1)
  }
  shift(-1)
  const binding = [...votes].sort((a, b) => b[1] - a[1])[0]?.[0]
  return `even with every consumer moved off ${where}, ${most} more of ${fit.flavor.flavor} fit there, not ${count}${binding ? `: ${binding} binds` : ''}`
}
