/**
 * A what-if as capacity answers it (the command line and the daemon alike): the headroom after
 * the change, who it displaced and where they went, and each domain's fit before and after.
 */
import type {FlavorRequest} from './flavors.js'
import {headroom, type DomainHeadroom, type Headroom, type HeadroomOptions} from './headroom.js'
import type {State} from '../state/state.js'
import {whatIf, type Displaced, type LostDomain, type WhatIfChange} from './what-if.js'

/** A domain's fit of a flavor before and after a change (a domain lost has none after). */
export interface FitChange {
  level: DomainHeadroom['level']
  name: string
  flavor: string
  before: number
  after: number
  change: number
}

export interface WhatIfAnswer {
  without: LostDomain[]
  ratios: Record<string, number>
  added: string[]
  displaced: Displaced[]
  /** Whether every displaced consumer found a place. */
  survives: boolean
  changes: FitChange[]
}

/** The headroom of `flavors` after `change` (made on a copy), with what it did. */
export function whatIfHeadroom(
  s: State,
  flavors: readonly FlavorRequest[],
  change: WhatIfChange,
  opts: HeadroomOptions = {},
): Headroom & {what_if: WhatIfAnswer} {
  const w = whatIf(s, change)
  const before = headroom(s, flavors, opts)
  const after = headroom(w.after, flavors, opts)
  return {
    ...after,
    what_if: {
      without: change.without ?? [],
      ratios: Object.fromEntries(change.ratios ?? []),
      added: change.add?.file.providers?.map((p) => p.name) ?? [],
      displaced: w.displaced,
      survives: w.survives,
      changes: fitChanges(before.domains, after.domains),
    },
  }
}

/** Each domain's fit before and after, in the rows' order (a domain only one side has is 0 on the other). */
export function fitChanges(before: readonly DomainHeadroom[], after: readonly DomainHeadroom[]): FitChange[] {
  const key = (d: DomainHeadroom) => `${d.level}\n${d.name}\n${d.flavor}`
  const afterByKey = new Map(after.map((d) => [key(d), d]))
  const beforeKeys = new Set(before.map(key))
  const change = (d: DomainHeadroom, b: number, a: number): FitChange => ({
    level: d.level,
    name: d.name,
    flavor: d.flavor,
    before: b,
    after: a,
    change: a - b,
  })
  return [
    ...before.map((d) => change(d, d.fit, afterByKey.get(key(d))?.fit ?? 0)),
    ...after.filter((d) => !beforeKeys.has(key(d))).map((d) => change(d, 0, d.fit)),
  ]
}

const LOST_LEVELS = ['host', 'rack', 'row', 'room'] as const

/** `LEVEL:NAME` (host, rack, row or room) as a lost domain; null when it is not one. */
export function lostDomainOf(v: string): LostDomain | null {
  const at = v.indexOf(':')
  const level = v.slice(0, at)
  return at > 0 && LOST_LEVELS.includes(level as never) && v.slice(at + 1)
    ? {level: level as LostDomain['level'], name: v.slice(at + 1)}
    : null
}

/** `CLASS=R` as a class and a ratio above 0; null when it is not one. */
export function ratioOf(v: string): [string, number] | null {
  const m = /^([A-Z0-9_]+)=(.+)$/.exec(v)
  const r = m ? Number(m[2]) : Number.NaN
  return m && Number.isFinite(r) && r > 0 ? [m[1], r] : null
}
