/**
 * Hosts taken out of service and brought back (core/host-status.ts decides what that is). On
 * placemat (a daemon or --db) one write sets or removes COMPUTE_STATUS_DISABLED with the
 * reason, kept with the host. On plain Placement the trait alone, with the provider's
 * generation (read again and retried on 409): Placement has nowhere to keep a reason.
 */
import type {PlacementClient} from '../../client/client.js'
import {DISABLED_TRAIT} from '../../core/host.js'
import {hostListing, hostRecord, type HostListing, type HostRecord} from '../../core/host-status.js'
import {loadState, type Backend} from '../backend/backend.js'
import {badRequestError, notFoundError} from '../failure.js'
import {getProvider, resolveProvider} from './providers.js'
import {retryOnConcurrentUpdate} from './retry.js'
import {viewClasses} from '../topology/view-rows.js'

export type {HostListing, HostRecord}

/** The host (a root provider) an operator named by name or uuid. */
export async function resolveHost(client: PlacementClient, ref: string): Promise<{uuid: string; name: string}> {
  const p = await resolveProvider(client, ref)
  if (p.root_provider_uuid && p.root_provider_uuid !== p.uuid) {
    // The root by name, as the operator names hosts (its uuid if it went away meanwhile).
    const root = await getProvider(client, p.root_provider_uuid).catch(() => null)
    throw badRequestError(
      `${p.name} is not a host: it is a provider in the tree of ${root?.name ?? p.root_provider_uuid} (name the root provider)`,
    )
  }
  return {uuid: p.uuid, name: p.name}
}

/** The host as placemat shows it; on plain Placement, made the same way from a read of its tree. */
export async function showHost(backend: Backend, uuid: string): Promise<HostRecord> {
  if (backend.placemat) return backend.placemat.host(uuid)
  const s = await loadState(backend, {inTree: uuid, consumers: true})
  if (!s.providers.has(uuid)) throw notFoundError(`No resource provider with uuid '${uuid}' found`)
  return hostRecord(s, uuid)
}

/** Every host (core/host.ts decides which providers are hosts), by name; on plain Placement made the same way from a read of the cloud. */
export async function listHosts(backend: Backend): Promise<HostListing[]> {
  if (backend.placemat) return backend.placemat.hosts()
  return hostListing(await loadState(backend, {consumers: true}))
}

export interface StatusOutcome {
  host: HostRecord
  /** Whether this call changed anything. */
  changed: boolean
  /** Plain Placement: the reason given could not be kept. */
  reasonDropped: boolean
}

/** Takes a host out of service (`disabled`, with `reason`) or brings it back. */
export async function setHostStatus(backend: Backend, uuid: string, disabled: boolean, reason?: string): Promise<StatusOutcome> {
  const {client} = backend
  if (backend.placemat) {
    const before = await backend.placemat.host(uuid)
    const body: {disabled: boolean; reason?: string} = {disabled}
    if (reason !== undefined) body.reason = reason
    const host = await backend.placemat.setHostStatus(uuid, body)
    return {host, changed: host.generation !== before.generation, reasonDropped: false}
  }
  const changed = await retryOnConcurrentUpdate(async () => {
    const path = `/resource_providers/${uuid}/traits`
    const cur = await client.get<{traits: string[]; resource_provider_generation: number}>(path)
    if (cur.traits.includes(DISABLED_TRAIT) === disabled) return false
    const traits = disabled ? [...cur.traits, DISABLED_TRAIT] : cur.traits.filter((t) => t !== DISABLED_TRAIT)
    await client.put(path, {traits, resource_provider_generation: cur.resource_provider_generation})
    return true
  }, 10)
  return {host: await showHost(backend, uuid), changed, reasonDropped: Boolean(reason) && disabled}
}

/**
 * A host as text (key and value lines): status and reason, where it is, consumers, used/capacity
 * per class. The same keys for every host (empty when it has no reason or place), so -c and
 * -f value read the same lines whatever its state.
 */
export function hostLines(h: HostRecord | HostListing): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: h.name,
    uuid: h.uuid,
    status: h.disabled ? 'disabled' : 'enabled',
    reason: h.disabled_reason ?? '',
    rack: h.rack ?? '',
    row: h.row ?? '',
    room: h.room ?? '',
  }
  out.consumers = typeof h.consumers === 'number' ? h.consumers : h.consumers.length
  for (const rc of viewClasses([h])) out[rc] = `${h.used[rc] ?? 0}/${h.capacity[rc] ?? 0}`
  out.generation = h.generation
  return out
}
