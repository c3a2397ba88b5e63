/** placemat's make-room plans (POST /placemat/v1/make-room). Not part of Placement. */
import {MAX_INT, type Schema} from './common.js'

/**
 * POST /placemat/v1/make-room: one goal, `flavor` with `count` (K more of it fit), `free_hosts`
 * (N hosts empty) or `drain` (a domain emptied); `in` narrows the first two to a domain. Which
 * keys go together is the route's to say (one message for each way a body is wrong).
 */
export interface MakeRoomPostBody {
  /** A name in the daemon's flavor catalog, or a flavor as one entry of a flavor file. */
  flavor?: string | Record<string, unknown>
  count?: number
  free_hosts?: number
  /** LEVEL:NAME, LEVEL one of host, rack, row, room. */
  drain?: string
  in?: string
  max_moves?: number
}

const WHOLE = {type: 'integer', minimum: 0, maximum: MAX_INT}
const DOMAIN = {type: 'string', minLength: 1, maxLength: 255}

export const MAKE_ROOM_POST: Schema<MakeRoomPostBody> = {
  type: 'object',
  properties: {
    flavor: {type: ['string', 'object'], minLength: 1, maxLength: 255},
    count: WHOLE,
    free_hosts: WHOLE,
    drain: DOMAIN,
    in: DOMAIN,
    max_moves: WHOLE,
  },
  additionalProperties: false,
}
