/**
 * A consumer named on the command line and read as GET /allocations/{consumer} shows it, as the
 * backend and the services read it: its uuid written canonically, whether it holds anything,
 * its type, and how every command says the endpoint knows nothing of it.
 */
import type {PlacementClient} from '../../client/client.js'
import {canonicalUuid, isUuidLike} from '../../core/uuids.js'
import {notFoundError, usageError} from '../failure.js'
import type {ConsumerAllocations} from './backend.js'

/** What Placement calls a consumer without a type (GET shows it, PUT does not take it). */
export const UNKNOWN_CONSUMER_TYPE = 'unknown'

/** A consumer named on the command line: a uuid in any form Placement accepts, written canonically (exit 2 otherwise). */
export function consumerUuid(ref: string, what = 'consumer'): string {
  if (!isUuidLike(ref)) throw usageError(`'${ref}' is not a ${what} uuid`)
  return canonicalUuid(ref)
}

export const getConsumer = (client: PlacementClient, consumer: string) =>
  client.get<ConsumerAllocations>(`/allocations/${consumerUuid(consumer)}`)

export const hasAllocations = (c: ConsumerAllocations) => Object.keys(c.allocations ?? {}).length > 0

/**
 * How every command says the endpoint knows nothing of a consumer (exit 3): it holds no
 * allocations and placemat keeps no record of it (plain Placement keeps none).
 */
export const unknownConsumer = (uuid: string) => notFoundError(`No consumer ${uuid} found: it holds no allocations and has no record`)

/** A consumer's type, null for none (Placement shows none as "unknown"). */
export const typeOf = (c: {consumer_type?: string | null}): string | null =>
  c.consumer_type && c.consumer_type !== UNKNOWN_CONSUMER_TYPE ? c.consumer_type : null
