import type {Provider} from '../core/state.js'
import type {Version} from './microversion.js'

export const providerUrl = (uuid: string) => `/resource_providers/${uuid}`

export function providerLinks(p: Provider, mv: Version) {
  const url = providerUrl(p.uuid)
  const rels = ['inventories', 'usages']
  if (mv.gte(1)) rels.push('aggregates')
  if (mv.gte(6)) rels.push('traits')
  if (mv.gte(11)) rels.push('allocations')
  return [{rel: 'self', href: url}, ...rels.map((rel) => ({rel, href: `${url}/${rel}`}))]
}

/** A provider as GET /resource_providers/{uuid} shows it at this microversion. */
export function renderProvider(p: Provider, mv: Version) {
  const out: Record<string, unknown> = {uuid: p.uuid, name: p.name, generation: p.generation, links: providerLinks(p, mv)}
  if (mv.gte(14)) {
    out.parent_provider_uuid = p.parent
    out.root_provider_uuid = p.root
  }
  return out
}

/** Newest updated time of a set of records (Placement's pick_last_modified), or null. */
export function lastModifiedOf(items: Iterable<{updatedAt: number}>): number | null {
  let max: number | null = null
  for (const it of items) if (max === null || it.updatedAt > max) max = it.updatedAt
  return max
}
