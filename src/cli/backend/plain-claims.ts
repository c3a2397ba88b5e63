/**
 * Claims and moves on plain Placement, through its standard writes: one consumer with
 * PUT /allocations/{consumer}, several or a move with one POST /allocations. It keeps no
 * placement groups and no topology, so nothing checks rules in the write: they held when the
 * candidates were read. A claim's group is the --groups file's, which takes the new member
 * after the write.
 */
import {receiverType} from '../../core/consumer-moves.js'
import {canonicalUuid as canonical} from '../../core/uuids.js'
import {notFoundError, usageError} from '../failure.js'
import {groupsOf} from '../groups/groups.js'
import {getConsumer, hasAllocations, typeOf} from './consumer-lookup.js'
import {retryOnConcurrentUpdate} from './retry.js'
import type {Backend, ClaimVia, ClaimWrite, ClaimWriteOptions, ConsumerAllocations, MoveAsk, MoveOutcome} from './backend.js'

type Allocations = ClaimWrite['allocations']

/** A claim as one consumer's entry of Placement's allocations body. */
const entryOf = (w: ClaimWrite): Record<string, unknown> => ({
  allocations: w.allocations,
  project_id: w.project,
  user_id: w.user,
  consumer_generation: w.generation,
  ...(w.type ? {consumer_type: w.type} : {}),
})

/** GET /allocations/{consumer}: Placement keeps nothing of a consumer that holds nothing. */
export const plainClaimant = (backend: Backend, uuid: string): Promise<ConsumerAllocations> => getConsumer(backend.client, uuid)

/** PUT /allocations/{consumer}; a consumer of no type at 1.37, which has none, so none is invented. */
export async function plainClaim(
  backend: Backend,
  w: ClaimWrite,
  opts: ClaimWriteOptions = {},
): Promise<{consumer_generation: number; via: ClaimVia}> {
  await backend.client.put(`/allocations/${w.consumer}`, entryOf(w), {version: w.type ? undefined : '1.37'})
  if (w.group !== undefined) {
    const groups = await groupsOf(backend, opts.files)
    await groups.members(w.group, {add: [w.consumer]}, {allowViolations: true})
  }
  return {consumer_generation: (w.generation ?? 0) + 1, via: 'PUT /allocations'}
}

/** One POST /allocations for all of them: all or nothing. */
export async function plainClaims(backend: Backend, writes: ClaimWrite[]): Promise<{via: ClaimVia}> {
  const group = writes.find((w) => w.group !== undefined)?.group
  if (group !== undefined) throw usageError(`--spread with --group ${group}: only on placemat, which checks the group in the write`)
  const typed = writes.filter((w) => w.type).length
  if (typed && typed !== writes.length) throw usageError('some consumers have a consumer type and some not: give --consumer-type')
  const body = Object.fromEntries(writes.map((w) => [w.consumer, entryOf(w)]))
  await backend.client.post('/allocations', body, {version: typed ? undefined : '1.37'})
  return {via: 'POST /allocations'}
}

const stripGenerations = (a: ConsumerAllocations['allocations']): Allocations =>
  Object.fromEntries(Object.entries(a ?? {}).map(([rp, x]) => [rp, {resources: {...x.resources}}]))

/**
 * One POST /allocations decided as placemat decides a move, on what can be read: both consumer
 * generations are sent, and a concurrent update reads both again and tries again (a few times).
 */
export function plainMove(backend: Backend, ask: MoveAsk): Promise<MoveOutcome> {
  const {client} = backend
  const {consumer, to: migration} = ask
  return retryOnConcurrentUpdate(async () => {
    const [source, target] = await Promise.all([getConsumer(client, consumer), getConsumer(client, migration)])
    if (!hasAllocations(source)) throw notFoundError(`consumer ${consumer} has no allocations to move`)
    const allocations = stripGenerations(source.allocations)
    // What can be known of the receiver here is its record while it holds something.
    const type = receiverType(ask.consumerType, hasAllocations(target) ? {type: typeOf(target)} : undefined, typeOf(source))
    const entry = (allocs: Allocations, generation: number | null | undefined, consumerType: string) => ({
      allocations: allocs,
      project_id: source.project_id,
      user_id: source.user_id,
      consumer_generation: generation ?? null,
      ...(type === null ? {} : {consumer_type: consumerType}),
    })
    const body = {
      // At 1.38 each consumer needs a type: one without gets the receiver's, never kept, as
      // Placement deletes the record of a consumer left with nothing.
      [canonical(consumer)]: entry({}, source.consumer_generation, typeOf(source) ?? type ?? ''),
      [canonical(migration)]: entry(allocations, target.consumer_generation, type ?? ''),
    }
    // No type to write: 1.37, which has none, so none is invented.
    await client.post('/allocations', body, {version: type === null ? '1.37' : undefined})
    return {
      consumer_uuid: canonical(consumer),
      migration_uuid: canonical(migration),
      allocations,
      overwrote: hasAllocations(target),
      consumer_type: type,
    }
  }, 5)
}
