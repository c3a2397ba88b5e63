/**
 * The provider an operator named, by uuid or by name, as the backend, the candidates' filters,
 * the layout's edits and the services look it up: one GET for a uuid, one for a name.
 */
import {ApiError, type PlacementClient} from '../../client/client.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import type {ListedProvider} from '../../core/wire.js'
import {mapLimit} from '../../client/map-limit.js'
import {notFoundError} from '../failure.js'

const notFound = (ref: string) => notFoundError(`No resource provider with uuid or name '${ref}' found`)

/**
 * The provider a user named: a uuid (GET /resource_providers/{uuid}), else an exact
 * name (GET /resource_providers?name=). A uuid that matches no provider is tried as a
 * name too, since names are free text.
 */
export async function resolveProvider(client: PlacementClient, ref: string): Promise<ListedProvider> {
  const found = await findProvider(client, ref)
  if (!found) throw notFound(ref)
  return found
}

/** The provider a user named, as resolveProvider finds it; null when there is none. */
export async function findProvider(client: PlacementClient, ref: string): Promise<ListedProvider | null> {
  if (isUuidLike(ref)) {
    const p = await getProvider(client, canonical(ref))
    if (p) return p
  }
  const body = await client.get<{resource_providers: ListedProvider[]}>('/resource_providers', {query: {name: ref}})
  return body.resource_providers[0] ?? null
}

/** GET /resource_providers/{uuid}; null when there is no such provider. */
export async function getProvider(client: PlacementClient, uuid: string): Promise<ListedProvider | null> {
  try {
    return await client.get<ListedProvider>(`/resource_providers/${uuid}`)
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null
    throw err
  }
}

/** Only the uuid: skips the round trip when the reference already is a uuid and `trustUuid` is set. */
export async function resolveProviderUuid(client: PlacementClient, ref: string, trustUuid = false): Promise<string> {
  if (trustUuid && isUuidLike(ref)) return canonical(ref)
  return (await resolveProvider(client, ref)).uuid
}

/**
 * Resolves several references (uuids are trusted as they are, names looked up once each),
 * as a map from reference to uuid.
 */
export async function resolveProviderUuids(client: PlacementClient, refs: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(refs)]
  const uuids = await mapLimit(unique, 8, (r) => resolveProviderUuid(client, r, true))
  return new Map(unique.map((r, i) => [r, uuids[i]]))
}
