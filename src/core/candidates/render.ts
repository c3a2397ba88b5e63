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

// ---- direct serialization ---------------------------------------------------------------------
// The same document as JSON.stringify(renderCandidates(...)), written straight to text: most of a
// large answer is provider summaries, whose text is cached per summary object (summaries are
// shared and immutable for a State version), so a 9,000-provider answer is mostly concatenation.

const SAFE = /^[A-Za-z0-9_.:-]*$/
const str = (s: string) => (SAFE.test(s) ? `"${s}"` : JSON.stringify(s))

function amountsText(res: Map<string, number>): string {
  let out = '{'
  let first = true
  for (const [rc, n] of res) {
    out += (first ? '' : ',') + str(rc) + ':' + n
    first = false
  }
  return out + '}'
}

const text27 = new WeakMap<ProviderSummary, string>()
const text29 = new WeakMap<ProviderSummary, string>()

/** `"uuid":{...}`: one provider_summaries entry. */
function summaryText(s: ProviderSummary, requested: Set<string>, version: Microversion): string {
  const allResources = atLeast(version, 27)
  const nested = atLeast(version, 29)
  // Below 1.27 the text depends on the requested classes: not cached.
  const cache = nested ? text29 : allResources ? text27 : null
  const hit = cache?.get(s)
  if (hit !== undefined) return hit
  let out = str(s.uuid) + ':{"resources":{'
  let first = true
  for (const r of s.resources) {
    if (!allResources && !requested.has(r.rc)) continue
    out += (first ? '' : ',') + str(r.rc) + ':{"capacity":' + r.capacity + ',"used":' + r.used + '}'
    first = false
  }
  out += '}'
  if (atLeast(version, 17)) out += ',"traits":' + (s.traits.length ? '[' + s.traits.map(str).join(',') + ']' : '[]')
  if (nested) {
    out += ',"parent_provider_uuid":' + (s.parentUuid === null ? 'null' : str(s.parentUuid))
    out += ',"root_provider_uuid":' + str(s.rootUuid)
  }
  out += '}'
  // Built with +=, the text is a deep rope that every later join would walk again; numeric
  // conversion makes V8 flatten it once, in place.
  Number(out)
  cache?.set(s, out)
  return out
}

/** renderCandidates, serialized: byte for byte what JSON.stringify would give, faster. */
export function renderCandidatesJson(result: CandidateResult, version: Microversion): string {
  const dictForm = atLeast(version, 12)
  const withMappings = atLeast(version, 34)
  const parts: string[] = ['{"allocation_requests":[']
  const ars = result.allocationRequests
  for (let i = 0; i < ars.length; i++) {
    const ar = ars[i]
    let out = i ? ',{"allocations":' : '{"allocations":'
    let first = true
    if (dictForm) {
      out += '{'
      for (const [uuid, res] of ar.allocations) {
        out += (first ? '' : ',') + str(uuid) + ':{"resources":' + amountsText(res) + '}'
        first = false
      }
      out += '}'
      if (withMappings) {
        const mappings: Record<string, string[]> = {}
        for (const [suffix, uuids] of ar.mappings) mappings[suffix] = uuids
        out += ',"mappings":' + JSON.stringify(mappings)
      }
    } else {
      out += '['
      for (const [uuid, res] of ar.allocations) {
        out += (first ? '' : ',') + '{"resource_provider":{"uuid":' + str(uuid) + '},"resources":' + amountsText(res) + '}'
        first = false
      }
      out += ']'
    }
    parts.push(out + '}')
  }
  parts.push('],"provider_summaries":{')
  const entries = result.providerSummaries.map((sum) => summaryText(sum, result.requestedClasses, version))
  parts.push(entries.join(','), '}}')
  return parts.join('')
}
