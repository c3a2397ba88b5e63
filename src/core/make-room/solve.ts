/**
 * How a plan is found, whatever its goal: the goal's lower bound first (none needed when the
 * goal is met, never when the bound is infinite); then the heuristic, whose plan is the fewest
 * when it meets the bound; else, on a cloud small enough, the exact search for a shorter one (or,
 * with no plan, for any), within a budget of nodes. The answer says which gave it and, when
 * nothing proved it the fewest, the best bound known.
 */
import type {Goal} from './goals.js'
import type {Outcome} from './heuristic.js'
import type {Rules} from './rules.js'
import {searchFewest} from './search.js'
import type {Move, World} from './world.js'

export interface SolveOptions {
  /** No plan longer than this. */
  maxMoves?: number
  /** States the exact search may reach (0: no search). */
  searchNodes?: number
  /** The search is tried when consumers x enabled hosts is at most this. */
  searchSize?: number
}

export interface Solved {
  /** The moves, in order (null: no plan). */
  moves: Move[] | null
  /** Which found the moves (or proved there are none): the exact search, or the heuristic (or the bound alone, as 'exact'). */
  method: 'exact' | 'heuristic'
  /** How the plan is known to be the fewest (or none to exist): it meets the bound, or the search proved it. */
  proof: 'bound' | 'search' | null
  lowerBound: number
  /** Why there is no plan: what stopped the heuristic, or the bound. */
  why?: string
  search: {nodes: number; complete: boolean} | null
}

/** The default budget: searched in well under a second on the clouds the tests and bench measure (docs/cli/make-room.md). */
export const SEARCH_NODES = 10000
export const SEARCH_SIZE = 2000

export function solve(w: World, rules: Rules, goal: Goal, heuristic: () => Outcome, opts: SolveOptions = {}): Solved {
  const maxMoves = opts.maxMoves ?? Infinity
  if (goal.met()) return {moves: [], method: 'exact', proof: 'bound', lowerBound: 0, search: null}
  const bound = goal.bound()
  if (bound === Infinity) return {moves: null, method: 'exact', proof: 'bound', lowerBound: Infinity, search: null}
  if (bound > maxMoves)
    return {
      moves: null,
      method: 'exact',
      proof: 'bound',
      lowerBound: bound,
      why: `at least ${bound} moves are needed, more than the ${maxMoves} allowed`,
      search: null,
    }
  const mark = w.done.length
  const outcome = heuristic()
  let plan: Move[] | null = outcome.ok ? w.done.slice(mark).map((d) => d.move) : null
  while (w.done.length > mark) w.undo()
  let why = outcome.why
  if (plan && plan.length > maxMoves) {
    why = `the plan found needs ${plan.length} moves, more than the ${maxMoves} allowed`
    plan = null
  }
  if (plan && plan.length <= bound) return {moves: plan, method: 'heuristic', proof: 'bound', lowerBound: bound, search: null}
  let enabled = 0
  for (let j = 0; j < w.n; j++) enabled += w.enabled[j]
  const nodes = opts.searchNodes ?? SEARCH_NODES
  if (nodes <= 0 || w.s.consumers.size * enabled > (opts.searchSize ?? SEARCH_SIZE))
    return {moves: plan, method: 'heuristic', proof: null, lowerBound: bound, why, search: null}
  const found = searchFewest(w, rules, goal, {from: bound, below: plan?.length ?? Infinity, nodes, maxMoves})
  const search = {nodes: found.nodes, complete: found.complete}
  if (found.moves) return {moves: found.moves, method: 'exact', proof: 'search', lowerBound: found.moves.length, search}
  if (found.complete) {
    // Nothing shorter than the heuristic's plan (or, without one, nothing at all within maxMoves).
    if (plan) return {moves: plan, method: 'heuristic', proof: 'search', lowerBound: plan.length, search}
    return {moves: null, method: 'exact', proof: 'search', lowerBound: found.lowerBound, why, search}
  }
  return {moves: plan, method: 'heuristic', proof: null, lowerBound: Math.max(bound, found.lowerBound), why, search}
}
