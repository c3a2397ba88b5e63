/**
 * Hosts on plain Placement, made by the core the way placemat makes them (core/host-status.ts,
 * core/host-view.ts) from a read of the cloud, or of the host's tree, through the standard API.
 * Taking a host out of service is the COMPUTE_STATUS_DISABLED trait alone, written with the
 * provider's generation (read again and retried on 409): Placement has nowhere to keep a reason,
 * nor placement groups, nor names of racks, rows and rooms.
 */
import {DISABLED_TRAIT} from '../../core/host.js'
import {hostListing, hostRecord, type HostListing, type HostRecord} from '../../core/host-status.js'
import {describeHost, type HostDescription} from '../../core/host-view.js'
import {notFoundError} from '../failure.js'
import {retryOnConcurrentUpdate} from './retry.js'
import {loadState, type Backend, type StatusOutcome} from './backend.js'

const noSuchProvider = (uuid: string) => notFoundError(`No resource provider with uuid '${uuid}' found`)

export async function plainHost(backend: Backend, uuid: string): Promise<HostRecord> {
  const s = await loadState(backend, {inTree: uuid, consumers: true})
  if (!s.providers.has(uuid)) throw noSuchProvider(uuid)
  return hostRecord(s, uuid)
}

export async function plainHosts(backend: Backend): Promise<HostListing[]> {
  return hostListing(await loadState(backend, {consumers: true}))
}

/** The host's tree and its consumers' projects, users and types. */
export async function plainHostDescription(backend: Backend, uuid: string): Promise<HostDescription> {
  const s = await loadState(backend, {inTree: uuid, consumers: true, consumerOwners: true, changeable: true})
  if (!s.providers.has(uuid)) throw noSuchProvider(uuid)
  return describeHost(s, uuid, {groups: false})
}

export async function plainHostStatus(backend: Backend, uuid: string, disabled: boolean, reason?: string): Promise<StatusOutcome> {
  const {client} = backend
  const changed = await retryOnConcurrentUpdate(async () => {
    const path = `/resource_providers/${uuid}/traits`
    const cur = await client.get<{traits: string[]; resource_provider_generation: number}>(path)
    if (cur.traits.includes(DISABLED_TRAIT) === disabled) return false
    const traits = disabled ? [...cur.traits, DISABLED_TRAIT] : cur.traits.filter((t) => t !== DISABLED_TRAIT)
    await client.put(path, {traits, resource_provider_generation: cur.resource_provider_generation})
    return true
  }, 10)
  return {host: await plainHost(backend, uuid), changed, reasonDropped: Boolean(reason) && disabled}
}
