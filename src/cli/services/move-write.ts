/**
 * One consumer moved in one write: its whole allocations after the move, its project, user and
 * type, guarded by its consumer generation (placemat: POST /placemat/v1/allocations, which also
 * checks its placement groups' rules in the write; plain Placement: POST /allocations). Drain and
 * make-room carry out their plans' moves through it.
 */
import {ApiError} from '../../client/client.js'
import type {DrainMove} from '../../core/drain.js'
import type {Backend} from '../backend/backend.js'

export async function writeMove(backend: Backend, move: DrainMove): Promise<void> {
  const entry: Record<string, unknown> = {
    allocations: Object.fromEntries(Object.entries(move.allocations).map(([rp, resources]) => [rp, {resources}])),
    project_id: move.project,
    user_id: move.user,
    consumer_generation: move.generation,
  }
  if (move.type !== null) entry.consumer_type = move.type
  // A consumer of no type is written at 1.37, which has none, so none is invented.
  const opts = move.type === null ? {version: '1.37'} : undefined
  await backend.writeAllocations({[move.consumer]: entry}, opts)
}

/** A write refused because the cloud moved on (the room was taken, the consumer changed, a rule): plan again. */
export const isConflict = (err: unknown): err is ApiError => err instanceof ApiError && err.status === 409
