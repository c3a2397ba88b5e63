import {
  consumerAllocations,
  deleteAllocations,
  postAllocationErrors,
  putAllocationErrors,
  writeAllocations,
  NULL_CONSUMER_TYPE_ALIAS,
  INCOMPLETE_CONSUMER_ID,
  type ConsumerWrite,
} from '../../core/placement/allocations.js'
import {badRequest, notFound} from '../../core/errors.js'
import type {Consumer, Provider, State} from '../../core/state/state.js'
import {cacheHeaders, readJson, type AppOptions, type Ctx, type RouteDef} from '../context.js'
import {isUuidLike} from '../jsonschema.js'
import {mark, P, PROFILING} from '../../store/phase-profile.js'
import type {Version} from '../microversion.js'
import {
  allocationsPostSchema,
  allocationsPutDictSchema,
  allocationsPutListSchema,
  type AllocationListBody,
  type ConsumerAllocationsBody,
  type Resources,
} from '../schemas/allocation.js'

/** str(uuid.UUID(value)) for a value oslo's is_uuid_like accepted. */
function pythonUuidStr(value: string): string {
  const h = value
    .replaceAll('urn:', '')
    .replaceAll('uuid:', '')
    .replace(/^[{}]+|[{}]+$/g, '')
    .replaceAll('-', '')
    .toLowerCase()
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

type DictAllocations = ConsumerAllocationsBody['allocations']

/** One consumer's write, whichever form its body had (before 1.8 it names no project or user). */
type ConsumerBody = Omit<ConsumerAllocationsBody, 'project_id' | 'user_id'> & {project_id?: string; user_id?: string}

/** The list form (before 1.12) keyed by provider: later entries for the same provider replace earlier ones. */
function dictForm(data: AllocationListBody): ConsumerBody {
  const dict: DictAllocations = {}
  for (const a of data.allocations) dict[a.resource_provider.uuid] = {resources: a.resources}
  return {...data, allocations: dict}
}

function toAmounts(allocations: DictAllocations): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>()
  for (const [rp, entry] of Object.entries(allocations)) out.set(rp, new Map(Object.entries(entry.resources)))
  return out
}

function toWrite(uuid: string, body: ConsumerBody, mv: Version, incomplete?: AppOptions['incompleteConsumer']): ConsumerWrite {
  // Before 1.8 a write names no project: Placement's incomplete_consumer_project_id/_user_id.
  const missing = body.project_id === undefined || body.project_id === null
  const configured = missing && incomplete !== undefined
  return {
    uuid,
    allocations: toAmounts(body.allocations),
    project: configured ? (incomplete.project ?? INCOMPLETE_CONSUMER_ID) : (body.project_id ?? null),
    user: configured ? (incomplete.user ?? INCOMPLETE_CONSUMER_ID) : (body.user_id ?? null),
    generation: mv.gte(28) ? (body.consumer_generation ?? null) : undefined,
    type: mv.gte(38) ? body.consumer_type : undefined,
  }
}

/**
 * POST /allocations: several consumers' allocations in one write. `before` sees the writes in
 * the transaction, before they are made (placemat's twin of the route checks placement groups there).
 */
export async function postAllocations(ctx: Ctx, before?: (s: State, writes: ConsumerWrite[]) => void): Promise<undefined> {
  const data = readJson(ctx, allocationsPostSchema(ctx.mv))
  const writes = Object.entries(data).map(([uuid, body]) => toWrite(uuid, body, ctx.mv, ctx.options.incompleteConsumer))
  // Without placemat's check, what the write decides depends only on the consumers and providers it changes.
  await ctx.store.write(
    (s, now) => {
      before?.(s, writes)
      writeAllocations(s, now, writes, {checkGeneration: ctx.mv.gte(28), ...postAllocationErrors})
    },
    {selfContained: !before},
  )
  ctx.reply.code(204)
  return undefined
}

/** Newest write of any consumer holding something on `p` (allocation rows are only ever inserted). */
function providerAllocationsModified(s: State, p: Provider): number | null {
  let max: number | null = null
  for (const cu of p.allocations.keys()) {
    const c = s.consumers.get(cu)
    if (c && (max === null || c.updatedAt > max)) max = c.updatedAt
  }
  return max
}

function renderConsumerAllocations(s: State, c: Consumer | null, mv: Version) {
  const allocations: Record<string, {resources: Resources; generation: number}> = {}
  if (!c) return {allocations}
  for (const [rpUuid, amounts] of c.allocations) {
    const p = s.providers.get(rpUuid)
    if (!p) continue
    allocations[rpUuid] = {resources: Object.fromEntries(amounts), generation: p.generation}
  }
  const out: Record<string, unknown> = {allocations}
  if (mv.gte(12)) {
    out.project_id = c.project
    out.user_id = c.user
    if (mv.gte(28)) out.consumer_generation = c.generation
    if (mv.gte(38)) out.consumer_type = c.type ?? NULL_CONSUMER_TYPE_ALIAS
  }
  return out
}

async function putAllocations(ctx: Ctx) {
  const raw = ctx.params.consumer_uuid
  if (!isUuidLike(raw)) throw badRequest(`Malformed consumer_uuid: ${raw}`)
  const uuid = pythonUuidStr(raw)
  const body: ConsumerBody = ctx.mv.gte(12)
    ? readJson(ctx, allocationsPutDictSchema(ctx.mv))
    : dictForm(readJson(ctx, allocationsPutListSchema(ctx.mv)))
  const write = toWrite(uuid, body, ctx.mv, ctx.options.incompleteConsumer)
  if (PROFILING) mark(P['to write'])
  await ctx.store.write((s, now) => writeAllocations(s, now, [write], {checkGeneration: ctx.mv.gte(28), ...putAllocationErrors(uuid)}), {
    selfContained: true,
  })
  ctx.reply.code(204)
  return undefined
}

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/allocations/:consumer_uuid',
    async handler(ctx) {
      const s = await ctx.store.refresh()
      const c = consumerAllocations(s, ctx.params.consumer_uuid)
      cacheHeaders(ctx, c ? c.updatedAt : null)
      return renderConsumerAllocations(s, c, ctx.mv)
    },
  },
  {
    method: 'PUT',
    url: '/allocations/:consumer_uuid',
    body: true,
    handler: putAllocations,
  },
  {
    method: 'DELETE',
    url: '/allocations/:consumer_uuid',
    async handler(ctx) {
      await ctx.store.write((s) => deleteAllocations(s, ctx.params.consumer_uuid), {selfContained: true})
      ctx.reply.code(204)
      return undefined
    },
  },
  {
    method: 'POST',
    url: '/allocations',
    minVersion: 13,
    body: true,
    handler: (ctx) => postAllocations(ctx),
  },
  {
    method: 'GET',
    url: '/resource_providers/:uuid/allocations',
    async handler(ctx) {
      const s = await ctx.store.refresh()
      const uuid = ctx.params.uuid
      const p = s.providers.get(uuid)
      if (!p) throw notFound(`Resource provider '${uuid}' not found: No resource provider with uuid ${uuid} found`)
      const allocations: Record<string, {resources: Resources; consumer_generation?: number}> = {}
      for (const [cu, amounts] of p.allocations) {
        const entry: {resources: Resources; consumer_generation?: number} = {resources: Object.fromEntries(amounts)}
        if (ctx.mv.gte(28)) entry.consumer_generation = s.consumers.get(cu)?.generation
        allocations[cu] = entry
      }
      cacheHeaders(ctx, providerAllocationsModified(s, p))
      return {allocations, resource_provider_generation: p.generation}
    },
  },
]
