/**
 * Consumers as the command line lists and shows them (core/consumer-list.ts decides what they
 * are), as the backend has them: placemat answers them with their placement groups; plain
 * Placement's are made by the core from its standard API, without groups (null) and without
 * names of racks, rows and rooms.
 */
import type {ConsumerFilter, ConsumerView} from '../../core/consumer-list.js'
import type {Backend, ConsumerList} from '../backend/backend.js'
import {consumerUuid} from '../backend/consumer-lookup.js'

export type {ConsumerList}

/** The consumers that pass `filter` (its provider a uuid), as listings, and whether their groups are known. */
export const listConsumers = (backend: Backend, filter: ConsumerFilter): Promise<ConsumerList> => backend.consumers(filter)

/** One consumer in full; exit 3 (unknownConsumer) when the endpoint knows nothing of it. */
export async function showConsumer(backend: Backend, ref: string): Promise<ConsumerView> {
  return backend.consumer(consumerUuid(ref))
}
