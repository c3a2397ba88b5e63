/**
 * The enumeration plan: how the groups' results combine into candidates. A candidate is a row
 * of slots (one per single-path group, one per class of the multi-path group), each filled
 * with one provider; the plan says which group and class each slot stands for and which
 * constraints (isolation, same_subtree, trait cover, sole anchor) are checked at which slot.
 */
import type {PreparedGroup} from './group-search.js'
import type {CandidateRequest} from './request.js'
import type {SoleAnchor} from './sole-anchor.js'

/** Static description of the enumeration slots (one per granular group, one per class of a multi group). */
export interface EnumerationPlan {
  preps: PreparedGroup[]
  slotGroup: Int32Array
  /** class index within the group for multi slots, -1 for a whole single-path group. */
  slotRc: Int32Array
  slotIsolate: Uint8Array
  /** per slot: same_subtree constraints (lists of slots) to check once this slot is set. */
  subtreeAt: (number[][] | null)[]
  /** per slot: the multi group whose trait cover must be checked once this slot is set. */
  traitAt: (PreparedGroup | null)[]
  /** Slots of the multi group ([-1, -1] when none). */
  multiFrom: number
  multiLast: number
  /** Set when the multi group's sharing-only results must be kept under one anchor only. */
  sole: SoleAnchor | null
  S: number
}

export function planEnumeration(preps: PreparedGroup[], req: CandidateRequest): EnumerationPlan {
  const slotGroup: number[] = []
  const slotRc: number[] = []
  const slotIsolate: number[] = []
  const groupSlot: number[] = []
  const isolate = req.groupPolicy === 'isolate'
  preps.forEach((p, gi) => {
    groupSlot.push(slotGroup.length)
    if (p.multi) {
      for (let k = 0; k < p.rcNames.length; k++) {
        slotGroup.push(gi)
        slotRc.push(k)
        slotIsolate.push(0)
      }
    } else {
      slotGroup.push(gi)
      slotRc.push(-1)
      slotIsolate.push(isolate && p.granular ? 1 : 0)
    }
  })
  const S = slotGroup.length
  const subtreeAt: (number[][] | null)[] = new Array(S).fill(null)
  const bySuffix = new Map(preps.map((p, gi) => [p.g.suffix, gi]))
  for (const sub of req.sameSubtree) {
    const slots = sub
      .map((s) => bySuffix.get(s))
      .filter((gi): gi is number => gi !== undefined)
      .map((gi) => groupSlot[gi])
    if (slots.length < 2) continue
    const last = Math.max(...slots)
    ;(subtreeAt[last] ??= []).push(slots)
  }
  const traitAt: (PreparedGroup | null)[] = new Array(S).fill(null)
  preps.forEach((p, gi) => {
    if (p.multi && p.g.requiredTraits.length) traitAt[groupSlot[gi] + p.rcNames.length - 1] = p
  })
  let multiFrom = -1
  let multiLast = -1
  preps.forEach((p, gi) => {
    if (p.multi) {
      multiFrom = groupSlot[gi]
      multiLast = groupSlot[gi] + p.rcNames.length - 1
    }
  })
  return {
    preps,
    multiFrom,
    multiLast,
    sole: null,
    slotGroup: Int32Array.from(slotGroup),
    slotRc: Int32Array.from(slotRc),
    slotIsolate: Uint8Array.from(slotIsolate),
    subtreeAt,
    traitAt,
    S,
  }
}
