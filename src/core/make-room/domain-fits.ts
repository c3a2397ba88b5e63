/**
 * What a plan changes domain by domain: how many of the flavor fit in each domain of a level
 * before the moves and after them (the plan replayed on a copy, as its writes would go), for the
 * domains the moves change and the goal's own. Capacity's count, so the numbers are the ones
 * `placemat capacity` prints before and would print after.
 */
import type {FlavorRequest} from '../headroom/flavors.js'
import {headroomTable, releaseTable, type HeadroomLevel} from '../headroom/headroom.js'
import type {State} from '../state/state.js'
import {replay, type PlannedMove} from './result.js'

export interface DomainFit {
  level: HeadroomLevel
  name: string
  before: number
  after: number
}

function fits(s: State, flavor: FlavorRequest, level: HeadroomLevel): Map<string, number> {
  const t = headroomTable(s, [flavor], {levels: [level]})
  const out = new Map<string, number>()
  for (let k = 0; k < t.names.length; k++) out.set(t.names[k], Number(t.fit[k]))
  releaseTable(t)
  return out
}

/** The fit of `flavor` per domain of `level`, before and after `moves`: the domains whose fit changes, and `keep` (the goal's). */
export function domainFits(
  s: State,
  moves: readonly PlannedMove[],
  flavor: FlavorRequest,
  level: HeadroomLevel,
  keep?: string,
): DomainFit[] {
  const before = fits(s, flavor, level)
  const after = moves.length ? fits(replay(s, moves), flavor, level) : before
  const out: DomainFit[] = []
  for (const [name, b] of before) {
    const a = after.get(name) ?? 0
    if (a !== b || name === keep) out.push({level, name, before: b, after: a})
  }
  return out
}
