/**
 * Resolving providers named by uuid or by name, and the reads several commands share.
 */
import {ApiError, type PlacementClient} from '../../client/client.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import {notFoundError} from '../failure.js'
import {mapLimit} from '../../client/map-limit.js'

export interface ProviderRecord {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid?: string | null
  root_provider_uuid?: string
  links?: unknown
}

/** Uuids are recognised and written as Placement does (core/uuids.ts). */
export {isUuidLike, canonicalUuid as canonical} from '../../core/uuids.js'

const notFound = (ref: string) => notFoundError(`No resource provider with uuid or name '${ref}' found`)

/**
 * The provider a user named: a uuid (GET /resource_providers/{uuid}), else an exact
 * name (GET /resource_providers?name=). A uuid that matches no provider is tried as a
 * name too, since names are free text.
 */
export async function resolveProvider(client: PlacementClient, ref: string): Promise<ProviderRecord> {
  if (isUuidLike(ref)) {
    try {
      return await client.get<ProviderRecord>(`/resource_providers/${canonical(ref)}`)
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err
    }
  }
  const body = await client.get<{resource_providers: ProviderRecord[]}>('/resource_providers', {query: {name: ref}})
  const found = body.resource_providers[0]
  if (!found) throw notFound(ref)
  return found
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
