/**
 * What a plan changes domain by domain: how many of the flavor fit in each domain of a level
 * before the moves and after them (on the copy the plan was replayed on: plan.ts cloudAfter), for the
 * domains the moves change and the goal's own. Capacity's count, so the numbers are the ones
 * `placemat capacity` prints before and would print after.
 */
import type {FlavorRequest} from '../headroom/flavors.js'
import {headroomTable, releaseTable, type HeadroomLevel} from '../headroom/headroom.js'
import type {State} from '../state/state.js'

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

/** The fit of `flavor` per domain of `level` on `s` and on `cloudAfter`: the domains whose fit changes, and `keep` (the goal's). */
export function domainFits(s: State, cloudAfter: State, flavor: FlavorRequest, level: HeadroomLevel, keep?: string): DomainFit[] {
  const before = fits(s, flavor, level)
  const after = cloudAfter === s ? before : fits(cloudAfter, flavor, level)
  const out: DomainFit[] = []
  for (const [name, b] of before) {
    const a = after.get(name) ?? 0
    if (a !== b || name === keep) out.push({level, name, before: b, after: a})
  }
  return out
}
