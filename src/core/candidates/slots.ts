/**
 * The slot form of a result: the returned candidates as rows of provider indices, one per
 * slot, from which AllocationRequest objects are built only when someone reads them.
 */
import type {Provider} from '../state/state.js'
import type {EnumerationPlan} from './plan.js'
import type {Index} from './provider-index.js'
import type {AllocationRequest, CandidateResult} from './types.js'

/**
 * The returned candidates as slots: candidate k takes slot d from providers[rows[k*S + d]].
 * A slot is one group (or one class of the unsuffixed group when it may spread over a tree).
 */
export interface CandidateSlots {
  S: number
  rows: Int32Array
  providers: readonly Provider[]
  /** Group suffix of each slot ('' for the unsuffixed group). */
  slotSuffix: string[]
  /** Classes and amounts each slot takes (none for a group without resources). */
  slotResources: [string, number][][]
}

const slotsOfResult = new WeakMap<CandidateResult, CandidateSlots>()

/**
 * The slot form behind a result of findCandidates, for writers that need no objects; undefined
 * for any other result (a copy with filtered allocationRequests, say).
 */
export function candidateSlots(result: CandidateResult): CandidateSlots | undefined {
  return slotsOfResult.get(result)
}

export function withSlots(rest: Omit<CandidateResult, 'allocationRequests'>, slots: CandidateSlots): CandidateResult {
  const result = rest as CandidateResult
  Object.defineProperty(result, 'allocationRequests', {
    enumerable: true,
    configurable: true,
    get() {
      const list: AllocationRequest[] = []
      const uuids: string[] = new Array(slots.S)
      for (let at = 0; at < slots.rows.length; at += slots.S) {
        for (let d = 0; d < slots.S; d++) uuids[d] = slots.providers[slots.rows[at + d]].uuid
        list.push(allocationRequestOf(slots, uuids))
      }
      Object.defineProperty(result, 'allocationRequests', {value: list, enumerable: true, writable: true})
      return list
    },
  })
  slotsOfResult.set(result, slots)
  return result
}

/**
 * One allocation request from the provider uuid of each slot: amounts of one provider summed
 * over its slots, providers and classes in slot order, each group's providers listed once.
 */
export function allocationRequestOf(slots: Pick<CandidateSlots, 'S' | 'slotSuffix' | 'slotResources'>, uuids: string[]): AllocationRequest {
  const allocations = new Map<string, Map<string, number>>()
  const mappings = new Map<string, string[]>()
  for (let d = 0; d < slots.S; d++) {
    const uuid = uuids[d]
    const taken = slots.slotResources[d]
    if (taken.length) {
      let res = allocations.get(uuid)
      if (!res) allocations.set(uuid, (res = new Map()))
      for (const [rc, n] of taken) res.set(rc, (res.get(rc) ?? 0) + n)
    }
    const suffix = slots.slotSuffix[d]
    const list = mappings.get(suffix)
    if (!list) mappings.set(suffix, [uuid])
    else if (!list.includes(uuid)) list.push(uuid)
  }
  return {allocations, mappings}
}

/** The slot form of candidates `picked` (numbers of the S-provider rows in `found`), in that order. */
export function slotsOf(ix: Index, plan: EnumerationPlan, found: number[], picked: number[]): CandidateSlots {
  const S = plan.S
  const rows = new Int32Array(picked.length * S)
  for (let k = 0; k < picked.length; k++) for (let d = 0; d < S; d++) rows[k * S + d] = found[picked[k] * S + d]
  const slotSuffix: string[] = []
  const slotResources: [string, number][][] = []
  for (let d = 0; d < S; d++) {
    const prep = plan.preps[plan.slotGroup[d]]
    const k0 = plan.slotRc[d]
    const ks = k0 < 0 ? prep.rcNames.map((_, k) => k) : [k0]
    slotSuffix.push(prep.g.suffix)
    slotResources.push(ks.map((k) => [prep.rcNames[k], prep.rcAmounts[k]]))
  }
  return {S, rows, providers: ix.provs, slotSuffix, slotResources}
}
