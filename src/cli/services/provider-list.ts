/**
 * `provider list`: GET /resource_providers with its filters, racks, rows and rooms taken by
 * name in --member-of (as `candidates` takes them), and whether each provider's host is out of
 * service.
 */
import type {Endpoint} from '../backend/backend.js'

export interface ProviderRow {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid?: string | null
  root_provider_uuid?: string
  /** placemat's: its host is out of service (COMPUTE_STATUS_DISABLED on the root). */
  disabled?: boolean
}

export interface ProviderFilter {
  name?: string
  uuid?: string
  /** Aggregate filters; racks, rows and rooms also as rack:NAME, row:NAME, room:NAME. */
  memberOf?: string[]
  resources?: string
  required?: string[]
  inTree?: string
}

/**
 * The body of GET /resource_providers for `filter`, in Placement's order; with `disabled`, each
 * provider marked with whether its host is out of service (one more call).
 */
export async function listProviderRows(
  endpoint: Endpoint,
  filter: ProviderFilter,
  opts: {disabled: boolean},
): Promise<{resource_providers: ProviderRow[]} & Record<string, unknown>> {
  const {client} = endpoint
  // Which hosts are out of service is asked at once, beside the list: it does not depend on it.
  const disabledAsked = opts.disabled
    ? import('../backend/standard-reads.js').then(({disabledProviders}) => disabledProviders(client))
    : undefined
  disabledAsked?.catch(() => undefined) // awaited below; if the list fails first, its error is the one said
  let memberOf = filter.memberOf
  if (memberOf?.length) {
    // Racks, rows and rooms by name, as `candidates` takes them (checked only when named).
    const {memberOfValue, topologyRefs} = await import('../candidates/member-of.js')
    const named = memberOf.flatMap(topologyRefs)
    if (named.length) await (await import('../candidates/anchors.js')).checkTopologyNames(endpoint, named)
    memberOf = memberOf.map(memberOfValue)
  }
  const body = await client.get('/resource_providers', {
    query: {
      name: filter.name,
      uuid: filter.uuid,
      member_of: memberOf,
      resources: filter.resources,
      required: filter.required,
      in_tree: filter.inTree,
    },
  })
  if (disabledAsked) {
    // A provider whose host (its root) carries COMPUTE_STATUS_DISABLED is out of service: one call says which.
    const disabled = await disabledAsked
    for (const r of body.resource_providers as ProviderRow[]) r.disabled = disabled.has(r.root_provider_uuid ?? r.uuid)
  }
  return body
}
