/**
 * Moving a consumer's allocations to another consumer, as Nova's move operations do (the
 * instance's allocations go to a migration consumer; moving them back is a revert), and what
 * placemat keeps of the consumer that gave them. Placement deletes the record of a consumer
 * left with nothing, so its project, user and type would be lost: placemat keeps them (a
 * MovedConsumer) until the consumer holds allocations again, for the claim that places it
 * again and for the revert.
 *
 * Types are never invented: the receiver keeps its own type (a record, or a moved one), else
 * takes one from the giver (a MIGRATION gives back to an INSTANCE, any other type gives to a
 * MIGRATION), and a giver without a type gives to a receiver without one.
 */
import {postAllocationErrors, writeAllocations} from './placement/allocations.js'
import {badRequest, notFound} from './errors.js'
import {refuseNewBreaches} from './groups.js'
import type {Amounts, MovedConsumer, State} from './state/state.js'

export const MIGRATION = 'MIGRATION'
export const INSTANCE = 'INSTANCE'

/**
 * The type the receiving consumer is written with: `given`, else its own (`receiver`: what is
 * known of it; a type of null is known to be none), else from the giver's. null: no type.
 */
export function receiverType(
  given: string | undefined,
  receiver: {type: string | null} | undefined,
  giverType: string | null,
): string | null {
  if (given) return given
  if (receiver) return receiver.type
  if (giverType === null) return null
  return giverType === MIGRATION ? INSTANCE : MIGRATION
}

/** What placemat knows of a consumer, as GET /placemat/v1/consumers/{uuid} answers it. */
export interface KnownConsumer {
  uuid: string
  project_id: string
  user_id: string
  consumer_type: string | null
  /** null: no record (the next write makes a new one). */
  consumer_generation: number | null
  allocations: Record<string, {resources: Record<string, number>}>
  /** It gave its allocations to this consumer and holds nothing since. */
  moved_to?: string
}

/** The consumer's record (with or without allocations), else what it was when it gave its allocations away. */
export function knownConsumer(s: State, uuid: string): KnownConsumer | undefined {
  const c = s.consumers.get(uuid)
  if (c) {
    return {
      uuid,
      project_id: c.project,
      user_id: c.user,
      consumer_type: c.type,
      consumer_generation: c.generation,
      allocations: Object.fromEntries([...c.allocations].map(([rp, amounts]) => [rp, {resources: Object.fromEntries(amounts)}])),
    }
  }
  const m = s.moved.get(uuid)
  if (!m) return undefined
  return {
    uuid,
    project_id: m.project,
    user_id: m.user,
    consumer_type: m.type,
    consumer_generation: null,
    allocations: {},
    moved_to: m.movedTo,
  }
}

/** A moved consumer as GET /placemat/v1/moves lists it (and a snapshot carries it). */
export interface MovedRecord {
  uuid: string
  moved_to: string
  project_id: string
  user_id: string
  consumer_type: string | null
  moved_at: string
}

export const movedRecord = (m: MovedConsumer): MovedRecord => ({
  uuid: m.uuid,
  moved_to: m.movedTo,
  project_id: m.project,
  user_id: m.user,
  consumer_type: m.type,
  moved_at: new Date(m.movedAt).toISOString(),
})

export interface MoveRequest {
  consumer: string
  to: string
  /** The receiver's type (default: see receiverType). */
  consumerType?: string
  /** When given, the consumers' generations must be these (null: the receiver has no record). */
  consumerGeneration?: number
  toGeneration?: number | null
}

export interface MoveResult {
  consumer_uuid: string
  migration_uuid: string
  allocations: Record<string, {resources: Record<string, number>}>
  /** The receiver held allocations before (overwritten, as Nova does). */
  overwrote: boolean
  consumer_type: string | null
}

/**
 * One write: the receiver gets the giver's allocations, project and user, the giver's are
 * emptied (Placement deletes its record) and what it was is kept as moved. Placement groups of
 * both are checked (409 placemat.affinity_violation unless allowed); generations and capacity
 * as POST /allocations checks them.
 */
export function moveAllocations(s: State, now: number, req: MoveRequest, opts: {allowViolations?: boolean} = {}): MoveResult {
  if (req.consumer === req.to) throw badRequest('A consumer cannot move its allocations to itself.')
  const giver = s.consumers.get(req.consumer)
  if (!giver || giver.allocations.size === 0) throw notFound(`Consumer ${req.consumer} has no allocations to move.`)
  const receiver = s.consumers.get(req.to)
  const type = receiverType(req.consumerType, receiver ?? s.moved.get(req.to), giver.type)
  const allocations = new Map<string, Amounts>([...giver.allocations].map(([rp, amounts]) => [rp, new Map(amounts)]))
  const placements = new Map<string, Iterable<string>>([
    [req.to, [...allocations.keys()]],
    [req.consumer, []],
  ])
  refuseNewBreaches(s, {placements}, opts.allowViolations)
  const was: MovedConsumer = {uuid: giver.uuid, movedTo: req.to, project: giver.project, user: giver.user, type: giver.type, movedAt: now}
  const overwrote = (receiver?.allocations.size ?? 0) > 0
  writeAllocations(
    s,
    now,
    [
      {
        uuid: giver.uuid,
        allocations: new Map(),
        project: giver.project,
        user: giver.user,
        generation: req.consumerGeneration ?? giver.generation,
      },
      {
        uuid: req.to,
        allocations,
        project: giver.project,
        user: giver.user,
        generation: req.toGeneration !== undefined ? req.toGeneration : (receiver?.generation ?? null),
        type: type ?? undefined,
      },
    ],
    {checkGeneration: true, ...postAllocationErrors},
  )
  s.setMoved(was)
  return {
    consumer_uuid: giver.uuid,
    migration_uuid: req.to,
    allocations: Object.fromEntries([...allocations].map(([rp, amounts]) => [rp, {resources: Object.fromEntries(amounts)}])),
    overwrote,
    consumer_type: type,
  }
}
