/**
 * POST /placemat/v1/claims: race-free affinity and anti-affinity. The body is one claim
 *
 *   {consumer_uuid, project_id, user_id, consumer_type?, consumer_generation,
 *    allocations: {rp_uuid: {resources: {CLASS: n}}},            (an allocation candidate's)
 *    affinity?: [{relation: same|different, level: rack|row|room, consumer}],
 *    group?: NAME}                                   (a placement group it is or becomes a member of)
 *
 * or {claims: [claim, ...]} for several consumers at once (a rule may name another
 * consumer of the batch: it is checked against that consumer's claim). The rules are
 * checked against the state at the moment of the write, inside the write transaction.
 * 200 with {consumer_uuid, consumer_generation, allocations} (or {claims: [...]}); 409
 * placement.concurrent_update on a consumer generation conflict, 409
 * placemat.affinity_violation when a rule or a group's rule does not hold (unless
 * ?allow_violations=true), 409 when capacity is short, as PUT /allocations.
 */
import {claimAllocations, type Claim} from '../../core/claims.js'
import {movedRecord, moveAllocations} from '../../core/consumer-moves.js'
import {refuseNewBreaches} from '../../core/groups.js'
import {postAllocations} from './allocations.js'
import {booleanParam, canonicalUuid, checkJson, readJson, type RouteDef} from '../context.js'
import {CLAIM, CLAIMS_BATCH, MOVE_POST, type ClaimBody} from '../schemas/claim.js'
import {PLACEMAT_PREFIX} from './placemat.js'

function toClaim(b: ClaimBody): Claim {
  return {
    write: {
      uuid: canonicalUuid(b.consumer_uuid),
      allocations: new Map(Object.entries(b.allocations).map(([rp, a]) => [rp, new Map(Object.entries(a.resources))])),
      project: b.project_id,
      user: b.user_id,
      generation: b.consumer_generation,
      type: b.consumer_type,
    },
    affinity: (b.affinity ?? []).map((r) => ({...r, consumer: canonicalUuid(r.consumer)})),
    group: b.group,
  }
}

export const routes: RouteDef[] = [
  {
    // Placement's POST /allocations (same body at the same microversion, same answers), for
    // placemat's own writes of several consumers (claim move): the placement groups of the
    // consumers it moves are checked in the write (409 placemat.affinity_violation unless
    // ?allow_violations=true). Placement's own route never refuses for a group.
    method: 'POST',
    url: `${PLACEMAT_PREFIX}/allocations`,
    minVersion: 13,
    body: true,
    async handler(ctx) {
      const allowViolations = booleanParam(ctx, 'allow_violations')
      return postAllocations(ctx, (s, writes) =>
        refuseNewBreaches(s, {placements: new Map(writes.map((w) => [w.uuid, w.allocations.keys()]))}, allowViolations),
      )
    },
  },
  {
    // Nova's move_allocations in one write, decided here (core/consumer-moves.ts): the receiver's type
    // from what placemat knows of it, and the giver's project, user and type kept while it
    // holds nothing. {consumer_uuid, to, consumer_type?, consumer_generation?, to_generation?}
    method: 'POST',
    url: `${PLACEMAT_PREFIX}/moves`,
    body: true,
    async handler(ctx) {
      const b = readJson(ctx, MOVE_POST)
      const allowViolations = booleanParam(ctx, 'allow_violations')
      const req = {
        consumer: canonicalUuid(b.consumer_uuid),
        to: canonicalUuid(b.to),
        consumerType: b.consumer_type,
        consumerGeneration: b.consumer_generation,
        toGeneration: b.to_generation,
      }
      return ctx.store.write((s, now) => moveAllocations(s, now, req, {allowViolations}))
    },
  },
  {
    // The consumers that gave their allocations away and hold nothing since, by uuid.
    method: 'GET',
    url: `${PLACEMAT_PREFIX}/moves`,
    async handler(ctx) {
      const s = await ctx.store.refresh()
      return {moved_consumers: [...s.moved.values()].sort((a, b) => (a.uuid < b.uuid ? -1 : 1)).map(movedRecord)}
    },
  },
  {
    method: 'POST',
    url: `${PLACEMAT_PREFIX}/claims`,
    body: true,
    async handler(ctx) {
      const allowViolations = booleanParam(ctx, 'allow_violations')
      const raw = readJson(ctx)
      const batch = raw !== null && typeof raw === 'object' && !Array.isArray(raw) && 'claims' in raw
      if (batch) {
        const {claims} = checkJson(raw, CLAIMS_BATCH)
        const results = await ctx.store.write((s, now) => claimAllocations(s, now, claims.map(toClaim), {allowViolations}))
        return {claims: results}
      }
      const one = checkJson(raw, CLAIM)
      const [result] = await ctx.store.write((s, now) => claimAllocations(s, now, [toClaim(one)], {allowViolations}))
      return result
    },
  },
]
