/**
 * What a load of the State does by hand, from the database's rows (store/state-loader.ts) or
 * from an image (image.ts): built without the State's mutation methods, so nothing is
 * recorded as changed and the listener adds its sums up anew when asked.
 */
import {ownMap} from './shared-collections.js'
import type {Consumer, Provider, State} from './state.js'

/** The next class and trait ids after those `s` holds. */
export function nextIdsAfterLoad(s: State): void {
  let classId = 10000
  for (const c of s.classes.values()) classId = Math.max(classId, c.id + 1)
  let traitId = 1
  for (const t of s.traits.values()) traitId = Math.max(traitId, t.id + 1)
  s.setNextIds(classId, traitId)
}

/** `c` holds `used` of `rc` on `p`: the consumer's and the provider's allocations, and the provider's usage. */
export function holdLoaded(c: Consumer, p: Provider, rc: string, used: number): void {
  let amounts = c.allocations.get(p.uuid)
  if (!amounts) {
    c.allocations.set(p.uuid, (amounts = new Map()))
    p.allocations = ownMap(p.allocations)
    p.allocations.set(c.uuid, amounts)
  }
  amounts.set(rc, used)
  p.usages = ownMap(p.usages)
  p.usages.set(rc, (p.usages.get(rc) ?? 0) + used)
}
