/**
 * Hosts as the operator names them, lists them, shows them, and takes them out of service and
 * brings them back (core/host-status.ts decides what that is; the backend keeps it: placemat
 * with the reason, plain Placement the trait alone).
 */
import type {PlacementClient} from '../../client/client.js'
import type {HostListing, HostRecord} from '../../core/host-status.js'
import type {HostDescription} from '../../core/host-view.js'
import type {Backend, StatusOutcome} from '../backend/backend.js'
import {badRequestError} from '../failure.js'
import {getProvider, resolveProvider} from '../backend/provider-lookup.js'
import {viewClasses} from '../topology/view-rows.js'

export type {HostDescription, HostListing, HostRecord, StatusOutcome}

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

/** The host an operator named, with its status, where it is and what it holds. */
export async function showHost(backend: Backend, ref: string): Promise<HostRecord> {
  return backend.host((await resolveHost(backend.client, ref)).uuid)
}

/** The host an operator named, in full. */
export async function describeHost(backend: Backend, ref: string): Promise<HostDescription> {
  return backend.hostDescription((await resolveHost(backend.client, ref)).uuid)
}

/** Every host, by name. */
export const listHosts = (backend: Backend): Promise<HostListing[]> => backend.hosts()

/** Takes the host an operator named out of service (`disabled`, with `reason`) or brings it back. */
export async function setHostStatus(backend: Backend, ref: string, disabled: boolean, reason?: string): Promise<StatusOutcome> {
  return backend.setHostStatus((await resolveHost(backend.client, ref)).uuid, disabled, reason)
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
