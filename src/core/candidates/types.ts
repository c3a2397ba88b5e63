/** The engine's public result types: allocation requests, provider summaries, options. */

export interface AllocationRequest {
  /** provider uuid -> resource class -> amount (providers that give resources only). */
  allocations: Map<string, Map<string, number>>
  /** group suffix ('' for the unsuffixed group) -> uuids of the providers satisfying it. */
  mappings: Map<string, string[]>
}

export interface SummaryResource {
  rc: string
  capacity: number
  used: number
}

/** One provider of provider_summaries. Shared, cached objects: do not mutate. */
export interface ProviderSummary {
  uuid: string
  parentUuid: string | null
  rootUuid: string
  /** Every inventory of the provider (render.ts narrows it below 1.27). */
  resources: SummaryResource[]
  /** Trait names, in trait id order. */
  traits: string[]
}

export interface CandidateResult {
  allocationRequests: AllocationRequest[]
  providerSummaries: ProviderSummary[]
  /** Union of the classes requested by all groups (provider_summaries below 1.27 show only these). */
  requestedClasses: Set<string>
}

export interface CandidateOptions {
  /** Stop generating after this many candidates (before `limit`); unlimited when absent (8.0.0). */
  maxCandidates?: number
  /** Placement's [placement]randomize_allocation_candidates: sample/shuffle the candidates. */
  randomize?: boolean
  /** With maxCandidates: exhaust one tree after another (default), or take turns between trees. */
  strategy?: 'breadth-first' | 'depth-first'
}
