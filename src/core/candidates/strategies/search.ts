/**
 * What every enumeration strategy works with: the request's plan and limits, the sink for its
 * candidates, and the slot choices of one anchor with the cheap checks that rule an anchor out.
 */
import type {EnumerationPlan} from '../plan.js'
import type {Index} from '../provider-index.js'
import type {CandidateSink} from './sink.js'

export interface Search {
  ix: Index
  plan: EnumerationPlan
  /** Roots allowed as anchors by root_required / root forbidden traits (null: all). */
  anchorOk: Uint8Array | null
  /** Stop once the sink holds this many candidates (Infinity: find them all). */
  target: number
  /** group_policy=isolate. */
  isolate: boolean
  sink: CandidateSink
}

/** Viable anchors: those every group can serve, in the first group's order. */
export function viableAnchors(plan: EnumerationPlan): number[] {
  const preps = plan.preps
  const anchors: number[] = []
  for (const a of preps[0].byAnchor.keys()) if (preps.every((p) => p.byAnchor.has(a))) anchors.push(a)
  return anchors
}

/**
 * The provider choices of each slot under anchor `a`, taken from the groups' byAnchor or from
 * `given` (per group: its lists for `a`); null when isolation or capacity rules the anchor out.
 */
export function choicesOf(s: Search, a: number, given?: number[][][]): number[][] | null {
  const {ix, plan} = s
  const preps = plan.preps
  const choices: number[][] = []
  for (let d = 0; d < plan.S; d++) {
    const prep = preps[plan.slotGroup[d]]
    const lists = given ? given[plan.slotGroup[d]] : prep.byAnchor.get(a)!
    choices.push(prep.multi ? lists[plan.slotRc[d]] : lists[0])
  }
  if (s.isolate && !isolationPossible(plan, choices)) return null
  if (!capacityPossible(ix, plan, choices)) return null
  return choices
}

/** With group_policy=isolate: can the granular groups get pairwise distinct providers at all? */
function isolationPossible(plan: EnumerationPlan, choices: number[][]): boolean {
  const slots: number[] = []
  for (let d = 0; d < plan.S; d++) if (plan.slotIsolate[d]) slots.push(d)
  if (slots.length < 2) return true
  const owner = new Map<number, number>() // provider -> slot
  const tryAssign = (d: number, seen: Set<number>): boolean => {
    for (const p of choices[d]) {
      if (seen.has(p)) continue
      seen.add(p)
      const o = owner.get(p)
      if (o === undefined || tryAssign(o, seen)) {
        owner.set(p, d)
        return true
      }
    }
    return false
  }
  for (const d of slots) if (!tryAssign(d, new Set())) return false
  return true
}

/**
 * For each class requested by several slots: can the providers those slots may use hold the
 * summed amount at all? (A necessary condition; spares the search of hopeless trees.)
 */
function capacityPossible(ix: Index, plan: EnumerationPlan, choices: number[][]): boolean {
  const demand = new Map<string, {amount: number; entries: [number, number][]}>() // rc -> (slot, class index)
  for (let d = 0; d < plan.S; d++) {
    const prep = plan.preps[plan.slotGroup[d]]
    const k0 = plan.slotRc[d]
    const from = k0 < 0 ? 0 : k0
    const to = k0 < 0 ? prep.rcAmounts.length : k0 + 1
    for (let k = from; k < to; k++) {
      const rc = prep.rcNames[k]
      let e = demand.get(rc)
      if (!e) demand.set(rc, (e = {amount: 0, entries: []}))
      e.amount += prep.rcAmounts[k]
      e.entries.push([d, k])
    }
  }
  for (const {amount, entries} of demand.values()) {
    if (entries.length < 2) continue
    const gen = ix.nextStamp()
    let supply = 0
    for (const [d, k] of entries) {
      const slotOf = plan.preps[plan.slotGroup[d]].rcSlotOf[k]
      for (const p of choices[d]) {
        if (ix.stamp[p] === gen) continue
        ix.stamp[p] = gen
        const s = slotOf[p]
        supply += Math.max(0, Math.min(ix.slotCap[s] - ix.used(s), ix.slotMax[s]))
      }
    }
    if (supply < amount) return false
  }
  return true
}
