/**
 * A host described in full (core/host-view.ts decides what that is). On placemat (a daemon or
 * --db) GET /placemat/v1/hosts/{uuid}/description; on plain Placement the same record made by the
 * core from a read of the host's tree and of its consumers' projects, users and types, without
 * what Placement does not keep (placement groups, names of aggregates, racks, rows and rooms,
 * the reason a host is out of service).
 */
import {describeHost, type HostDescription} from '../../core/host-view.js'
import {loadState, type Backend} from '../backend/backend.js'
import {notFoundError} from '../failure.js'

export type {HostDescription}

export async function hostDescription(backend: Backend, uuid: string): Promise<HostDescription> {
  if (backend.placemat) return backend.placemat.hostDescription(uuid)
  const s = await loadState(backend, {inTree: uuid, consumers: true, consumerOwners: true, changeable: true})
  if (!s.providers.has(uuid)) throw notFoundError(`No resource provider with uuid '${uuid}' found`)
  return describeHost(s, uuid, {groups: false})
}
