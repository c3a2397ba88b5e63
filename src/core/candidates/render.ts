/**
 * Response bodies of GET /allocation_candidates per microversion
 * (placement/handlers/allocation_candidate.py): plain JSON-ready objects. Parts of the output
 * (provider summary objects, trait lists) may be shared between responses: serialize, do not
 * mutate.
 */
import type {CandidateResult, ProviderSummary} from './engine.js'
import type {Microversion} from './request.js'

const atLeast = (v: Microversion, minor: number) => v[0] > 1 || (v[0] === 1 && v[1] >= minor)

export interface CandidatesBody {
  allocation_requests: unknown[]
  provider_summaries: Record<string, unknown>
}

/**
 * allocation_requests: list form below 1.12 ({allocations: [{resource_provider: {uuid},
 * resources}]}), dict form from 1.12 ({allocations: {uuid: {resources}}}) with `mappings` from
 * 1.34. provider_summaries: resources (capacity, used) of the requested classes only below 1.27,
 * of every inventory from 1.27; traits from 1.17; parent/root provider uuids from 1.29.
 */
export function renderCandidates(result: CandidateResult, version: Microversion): CandidatesBody {
  const dictForm = atLeast(version, 12)
  const withMappings = atLeast(version, 34)
  const ars = result.allocationRequests
  const allocation_requests: unknown[] = new Array(ars.length)
  for (let i = 0; i < ars.length; i++) {
    const ar = ars[i]
    if (dictForm) {
      const allocations: Record<string, {resources: Record<string, number>}> = {}
      for (const [uuid, res] of ar.allocations) allocations[uuid] = {resources: amounts(res)}
      if (withMappings) {
        const mappings: Record<string, string[]> = {}
        for (const [suffix, uuids] of ar.mappings) mappings[suffix] = uuids
        allocation_requests[i] = {allocations, mappings}
      } else allocation_requests[i] = {allocations}
    } else {
      const allocations: unknown[] = []
      for (const [uuid, res] of ar.allocations) allocations.push({resource_provider: {uuid}, resources: amounts(res)})
      allocation_requests[i] = {allocations}
    }
  }
  return {allocation_requests, provider_summaries: renderSummaries(result.providerSummaries, result.requestedClasses, version)}
}

function amounts(res: Map<string, number>): Record<string, number> {
  const o: Record<string, number> = {}
  for (const [rc, n] of res) o[rc] = n
  return o
}

// Rendered summaries of the common formats, per (immutable, cached) ProviderSummary object.
const cache27 = new WeakMap<ProviderSummary, unknown>()
const cache29 = new WeakMap<ProviderSummary, unknown>()

function renderSummaries(
  summaries: ProviderSummary[],
  requested: Set<string>,
  version: Microversion,
): Record<string, unknown> {
  const allResources = atLeast(version, 27)
  const withTraits = atLeast(version, 17)
  const nested = atLeast(version, 29)
  const cache = nested ? cache29 : allResources ? cache27 : null
  const out: Record<string, unknown> = {}
  for (const s of summaries) {
    let o = cache?.get(s)
    if (!o) {
      const resources: Record<string, {capacity: number; used: number}> = {}
      for (const r of s.resources) {
        if (allResources || requested.has(r.rc)) resources[r.rc] = {capacity: r.capacity, used: r.used}
      }
      const body: Record<string, unknown> = {resources}
      if (withTraits) body.traits = s.traits
      if (nested) {
        body.parent_provider_uuid = s.parentUuid
        body.root_provider_uuid = s.rootUuid
      }
      o = body
      cache?.set(s, o)
    }
    out[s.uuid] = o
  }
  return out
}
