/**
 * Claims with topology rules (placemat's own, not Placement's): one or several consumers'
 * allocations written in ONE transaction, after checking at that very moment that each
 * claim is (or is not) in the same rack, row or room as other consumers. Two schedulers
 * racing to put members of an anti-affinity group in one row cannot both win: the check
 * and the write happen under the same store write lock.
 *
 * The write itself is Placement's (writeAllocations: consumer generations, providers,
 * classes, capacity); this module only adds the rule check in front of it.
 */
import {planConsumers, postAllocationErrors, putAllocationErrors, writeAllocations, type ConsumerWrite} from './placement/allocations.js'
import {AFFINITY_VIOLATION, PlacementError, badRequest} from './errors.js'
import type {State} from './state/state.js'
import {affinityViolation, placementOf, ruleViolation, type AffinityRule, type Placement} from './affinity.js'
import {refuseNewBreaches} from './groups.js'
import {addMembers, requireGroup} from './group-writes.js'

export {AFFINITY_VIOLATION}

export interface Claim {
  /** consumer, allocations, project, user, generation (null: a new consumer), type. */
  write: ConsumerWrite
  affinity: AffinityRule[]
  /** A placement group the consumer is (or becomes) a member of; its rule is checked with every member where it is. */
  group?: string
}

export interface ClaimResult {
  consumer_uuid: string
  consumer_generation: number
  allocations: Record<string, {resources: Record<string, number>}>
}

const affinityConflict = (consumer: string, why: string) =>
  new PlacementError(409, `Affinity rule violated for consumer ${consumer}: ${why}`, AFFINITY_VIOLATION)

/**
 * Checks every claim, then writes them all (one writeAllocations call: all or nothing).
 * Order of failures: malformed batch (400), consumer generations (409
 * placement.concurrent_update), rules (409 placemat.affinity_violation), then Placement's
 * own provider / class / capacity checks. Rules naming a consumer of the batch are checked
 * against that consumer's claim; others against the stored allocations.
 */
export function claimAllocations(s: State, now: number, claims: Claim[], opts: {allowViolations?: boolean} = {}): ClaimResult[] {
  if (claims.length === 0) throw badRequest('No claims given.')
  const inBatch = new Map<string, Claim>()
  for (const c of claims) {
    const uuid = c.write.uuid
    if (inBatch.has(uuid)) throw badRequest(`Consumer ${uuid} is claimed twice.`)
    if (c.write.allocations.size === 0) throw badRequest(`The claim for consumer ${uuid} has no allocations.`)
    for (const r of c.affinity) {
      if (r.consumer === uuid) throw badRequest(`The claim for consumer ${uuid} has an affinity rule on itself.`)
    }
    inBatch.set(uuid, c)
  }
  const writes = claims.map((c) => c.write)
  planConsumers(s, writes, {checkGeneration: true})

  const proposed = new Map<string, Placement>()
  for (const c of claims) proposed.set(c.write.uuid, placementOf(s, c.write.allocations.keys()))
  for (const c of claims) {
    const uuid = c.write.uuid
    const outside = c.affinity.filter((r) => !inBatch.has(r.consumer))
    const why = affinityViolation(s, c.write.allocations.keys(), outside)
    if (why) throw affinityConflict(uuid, why)
    for (const r of c.affinity) {
      if (!inBatch.has(r.consumer)) continue
      // Against the other claim of the batch: its proposed placement, not the stored one.
      const w = ruleViolation(proposed.get(uuid)!, proposed.get(r.consumer)!, r, `consumer ${r.consumer} is not claimed in any ${r.level}`)
      if (w) throw affinityConflict(uuid, w)
    }
  }

  // Placement groups: the claimed members where they would be, every other member where it is.
  const joins = new Map<string, string[]>()
  for (const c of claims) if (c.group !== undefined) joins.set(c.group, [...(joins.get(c.group) ?? []), c.write.uuid])
  for (const name of joins.keys()) requireGroup(s, name)
  const placements = new Map(claims.map((c) => [c.write.uuid, c.write.allocations.keys()] as const))
  refuseNewBreaches(s, {placements, joins}, opts.allowViolations)

  const errors = claims.length === 1 ? putAllocationErrors(claims[0].write.uuid) : postAllocationErrors
  writeAllocations(s, now, writes, {checkGeneration: true, ...errors})
  for (const [name, members] of joins) addMembers(s, now, name, members, {allowViolations: true})

  return claims.map((c) => {
    const consumer = s.consumers.get(c.write.uuid)!
    return {
      consumer_uuid: consumer.uuid,
      consumer_generation: consumer.generation,
      allocations: Object.fromEntries([...consumer.allocations].map(([rp, amounts]) => [rp, {resources: Object.fromEntries(amounts)}])),
    }
  })
}
