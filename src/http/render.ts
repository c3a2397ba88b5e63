import type {Provider} from '../core/state/state.js'
import type {Version} from './microversion.js'

export const providerUrl = (uuid: string) => `/resource_providers/${uuid}`

/** A provider's links; `prefix` is the path the client reached the API under (context.ts linkPrefix). */
export function providerLinks(p: Pick<Provider, 'uuid'>, mv: Version, prefix = '') {
  const url = prefix + providerUrl(p.uuid)
  const rels = ['inventories', 'usages']
  if (mv.gte(1)) rels.push('aggregates')
  if (mv.gte(6)) rels.push('traits')
  if (mv.gte(11)) rels.push('allocations')
  return [{rel: 'self', href: url}, ...rels.map((rel) => ({rel, href: `${url}/${rel}`}))]
}

/** A provider as GET /resource_providers/{uuid} shows it at this microversion. */
export function renderProvider(p: Pick<Provider, 'uuid' | 'name' | 'generation' | 'parent' | 'root'>, mv: Version, prefix = '') {
  const out: Record<string, unknown> = {uuid: p.uuid, name: p.name, generation: p.generation, links: providerLinks(p, mv, prefix)}
  if (mv.gte(14)) {
    out.parent_provider_uuid = p.parent
    out.root_provider_uuid = p.root
  }
  return out
}

/** What GET /resource_providers shows of a provider: its uuid and what a write can change. */
type ListedFields = Pick<Provider, 'uuid' | 'name' | 'generation' | 'parent' | 'root'>

/**
 * The listed fields of `providers` as they are now, in a few flat arrays (a million providers:
 * some 30 MB), so that a list streamed out over seconds shows one moment, as Placement's single
 * query does, even if writes land while it is sent.
 */
export function listedNow(providers: Provider[]): {indexes: number[]; render: (i: number, mv: Version, prefix?: string) => unknown} {
  const n = providers.length
  const uuids = new Array<string>(n)
  const names = new Array<string>(n)
  const generations = new Float64Array(n)
  const parents = new Array<string | null>(n)
  const roots = new Array<string>(n)
  for (let i = 0; i < n; i++) {
    const p = providers[i]
    uuids[i] = p.uuid
    names[i] = p.name
    generations[i] = p.generation
    parents[i] = p.parent
    roots[i] = p.root
  }
  const row = (i: number): ListedFields => ({
    uuid: uuids[i],
    name: names[i],
    generation: generations[i],
    parent: parents[i],
    root: roots[i],
  })
  return {indexes: Array.from({length: n}, (_, i) => i), render: (i, mv, prefix) => renderProvider(row(i), mv, prefix)}
}

/** Newest updated time of a set of records (Placement's pick_last_modified), or null. */
export function lastModifiedOf(items: Iterable<{updatedAt: number}>): number | null {
  let max: number | null = null
  for (const it of items) if (max === null || it.updatedAt > max) max = it.updatedAt
  return max
}
