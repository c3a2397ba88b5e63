/**
 * Placement groups (placemat's own), under /placemat/v1/groups:
 *
 *   GET    /placemat/v1/groups                  every group, with the ways its rule is broken now
 *   POST   /placemat/v1/groups                  {name, policy, level, max_per?, max_skew?, soft?, members?}
 *   GET    /placemat/v1/groups/{name}           the group and where each member is
 *   DELETE /placemat/v1/groups/{name}           (?generation=N guards it)
 *   POST   /placemat/v1/groups/{name}/members   {add?: [consumer], remove?: [consumer], generation?}
 *   POST   /placemat/v1/groups/check            {placements: {consumer: [provider]}}: what they would break
 *
 * Writes that would make members break a hard rule are refused (409
 * placemat.affinity_violation, naming the group, its rule and the members) unless
 * ?allow_violations=true.
 */
import {breachRecord, groupRecord, newBreaches} from '../../core/groups.js'
import {addMembers, createGroup, deleteGroup, removeMembers, requireGroup, type GroupSpec} from '../../core/group-writes.js'
import {PlacementError} from '../../core/errors.js'
import {booleanParam, canonicalUuid, queryParams, readJson, type Ctx, type RouteDef} from '../context.js'
import {GROUP_CHECK_POST, GROUP_MEMBERS_POST, GROUP_POST} from '../schemas/group.js'
import {PLACEMAT_PREFIX} from './placemat.js'

const GROUPS = `${PLACEMAT_PREFIX}/groups`

function generationParam(ctx: Ctx): number | undefined {
  const v = queryParams(ctx.req).get('generation')?.at(-1)
  if (v === undefined) return undefined
  if (!/^[0-9]+$/.test(v)) throw new PlacementError(400, 'generation must be a whole number')
  return Number(v)
}

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: GROUPS,
    async handler(ctx) {
      const s = await ctx.store.refresh()
      return {groups: [...s.groups.values()].sort((a, b) => a.name.localeCompare(b.name)).map((g) => groupRecord(s, g))}
    },
  },
  {
    method: 'POST',
    url: GROUPS,
    body: true,
    async handler(ctx) {
      const b = readJson(ctx, GROUP_POST)
      const allowViolations = booleanParam(ctx, 'allow_violations')
      const spec: GroupSpec = {
        name: b.name,
        policy: b.policy,
        level: b.level,
        maxPer: b.max_per,
        maxSkew: b.max_skew,
        soft: b.soft,
        members: b.members?.map(canonicalUuid),
      }
      const record = await ctx.store.write((s, now) => groupRecord(s, createGroup(s, now, spec, {allowViolations})))
      ctx.reply.code(201)
      return record
    },
  },
  {
    // What a write would break, asked before it is made (a reshape's dry run): the breaches of
    // hard groups that consumers placed on these providers would add. Changes nothing.
    method: 'POST',
    url: `${GROUPS}/check`,
    asks: true,
    body: true,
    async handler(ctx) {
      const b = readJson(ctx, GROUP_CHECK_POST)
      const s = await ctx.store.refresh()
      const placements = new Map(Object.entries(b.placements).map(([c, rps]) => [canonicalUuid(c), rps.map(canonicalUuid)]))
      return {violations: newBreaches(s, {placements}).map(breachRecord)}
    },
  },
  {
    method: 'GET',
    url: `${GROUPS}/:name`,
    async handler(ctx) {
      const s = await ctx.store.refresh()
      return groupRecord(s, requireGroup(s, ctx.params.name), {placements: true})
    },
  },
  {
    method: 'DELETE',
    url: `${GROUPS}/:name`,
    async handler(ctx) {
      const generation = generationParam(ctx)
      await ctx.store.write((s) => deleteGroup(s, ctx.params.name, generation))
      ctx.reply.code(204)
      return undefined
    },
  },
  {
    method: 'POST',
    url: `${GROUPS}/:name/members`,
    body: true,
    async handler(ctx) {
      const b = readJson(ctx, GROUP_MEMBERS_POST)
      const allowViolations = booleanParam(ctx, 'allow_violations')
      const name = ctx.params.name
      return ctx.store.write((s, now) => {
        let g = requireGroup(s, name)
        if (b.remove?.length) g = removeMembers(s, now, name, b.remove.map(canonicalUuid), {generation: b.generation})
        const generation = b.remove?.length ? undefined : b.generation
        if (b.add?.length) g = addMembers(s, now, name, b.add.map(canonicalUuid), {generation, allowViolations})
        return groupRecord(s, g, {placements: true})
      })
    },
  },
]
