/**
 * Runs a candidates search: the query, topology rules resolved into filters, the backend's
 * candidates (the placement groups judged and the closeness order made where the backend
 * keeps them), every candidate checked against the rules here (Placement applies a granular
 * group's member_of to the provider itself, not its host), and the --limit cut.
 */
import {ruleViolation, type AffinityRule} from '../../core/affinity.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import type {CandidatesAsk, Endpoint} from '../backend/backend.js'
import {candidatesAt} from '../backend/candidates.js'
import {notFoundError, usageError as usage} from '../failure.js'
import type {ListedProvider} from '../../core/wire.js'
import type {Layout} from '../../core/topology.js'
import {
  checkTopologyNames,
  providersByUuid,
  consumerNodes,
  fetchLayout,
  loadTopology,
  placementInLayout,
  readLayoutFile,
  resolveRules,
  topologyFromLayout,
  type NodeSets,
  type ResolvedRule,
  type Topology,
} from './anchors.js'
import type {CandidateFlagValues} from './flags.js'
import {keptProviders} from './kept-providers.js'
import {topologyRefs} from './member-of.js'
import {addRuleFilters, buildQuery, parseGroups, parseRules, placementGroupOf, type Query} from './query.js'

export type Resources = Record<string, number>

/** One allocation candidate: what it takes of which providers. */
export interface Candidate {
  allocations: Record<string, {resources: Resources}>
  mappings?: Record<string, string[]>
}

export interface CandidatesBody {
  allocation_requests: Candidate[]
  provider_summaries: Record<
    string,
    {
      resources: Record<string, {capacity: number; used: number}>
      traits?: string[]
      parent_provider_uuid?: string | null
      root_provider_uuid?: string
    }
  >
}

export interface CandidateSearch {
  body: CandidatesBody
  /** The providers listing when it was read, or the kept candidates' providers (names, roots). */
  providers?: Map<string, ListedProvider>
  topology?: Topology
  rules: ResolvedRule[]
  /** What was asked of the backend (why asks the same). */
  ask: CandidatesAsk
  /** The query as sent, and to which route. */
  query: Query
  path: string
}

export interface SearchOptions {
  /** Read the providers listing (names for tables). */
  names?: boolean
  /** Look up only the providers of the candidates kept (names for a table of them), not the listing. */
  keptNames?: boolean
  /** Read the topology even without rules (for rack columns or spreading); false/undefined: only when needed. */
  topology?: 'required' | 'optional'
  /** Why the topology is required (for the error). */
  topologyWhy?: string
  /** Anchors already known (consumer -> nodes), e.g. members of a batch. */
  anchors?: Map<string, NodeSets>
  /** Extra rules (e.g. from a spread). */
  extraRules?: AffinityRule[]
  /** Ignore --limit (the caller cuts). */
  noLimit?: boolean
  /**
   * The consumer the candidates are for (a claim's): the rules of every placement group it is a
   * member of keep (hard) or order (soft) them, as --group's does.
   */
  consumer?: string
}

/**
 * Runs the search: builds the query, resolves topology rules into filters, asks the backend
 * (with the placement group, the consumer and the order asked for), checks the rules on every
 * candidate, and cuts to --limit where the backend could not.
 */
export async function searchCandidates(endpoint: Endpoint, flags: CandidateFlagValues, opts: SearchOptions = {}): Promise<CandidateSearch> {
  const {client} = endpoint
  const named = [...(flags['member-of'] ?? []), ...parseGroups(flags.group).flatMap((g) => g.memberOf)].flatMap(topologyRefs)
  const [query] = await Promise.all([buildQuery(client, flags), checkTopologyNames(endpoint, named, flags.layout)])
  const rules = [...parseRules(flags), ...(opts.extraRules ?? [])]
  const order = flags.near
    ? {direction: 'near' as const, consumer: flags.near}
    : flags.far
      ? {direction: 'far' as const, consumer: flags.far}
      : null
  if (order && !isUuidLike(order.consumer)) throw usage(`--${order.direction} ${order.consumer}: not a consumer uuid`)
  // A consumer that holds nothing is nowhere: there is nothing to be near to (or far from).
  const anchorHeld = order ? client.get<{allocations: Record<string, unknown>}>(`/allocations/${order.consumer}`) : undefined
  anchorHeld?.catch(() => undefined)
  const group = placementGroupOf(flags.group)
  const consumer = opts.consumer !== undefined ? canonical(opts.consumer) : undefined
  if (group !== undefined && order) throw usage(`--group ${group} orders the candidates itself: not with --${order.direction}`)
  if (order && !Object.keys((await anchorHeld!).allocations).length) {
    throw notFoundError(
      `--${order.direction} ${order.consumer}: that consumer holds no allocations, so it is in no rack, row or room to order by`,
    )
  }
  const needTopology = rules.length > 0 || order !== null || opts.topology === 'required'
  let providers: Map<string, ListedProvider> | undefined
  let topology: Topology | undefined
  // Names alone are read beside the candidates; the topology needs them first.
  const listing = needTopology || opts.names || (opts.topology === 'optional' && !opts.keptNames)
  const providersRead = listing ? providersByUuid(client) : undefined
  providersRead?.catch(() => undefined)
  // Without rules the layout only names the kept candidates' racks: it waits for their providers.
  let layoutRead: Promise<Layout | null> | undefined
  if (needTopology) {
    const why = opts.topologyWhy ?? (rules.length ? '--same/--different' : `--${order!.direction}`)
    providers = await providersRead!
    topology = await loadTopology(endpoint, providers, flags.layout, why)
  } else if (opts.topology === 'optional') {
    const served = flags.layout ? readLayoutFile(flags.layout) : fetchLayout(endpoint)
    if (opts.keptNames) {
      layoutRead = Promise.resolve(served)
      layoutRead.catch(() => undefined)
    } else {
      const [layout, list] = await Promise.all([served, providersRead!])
      providers = list
      if (layout) topology = topologyFromLayout(layout, providers)
    }
  }
  const resolved = topology ? await resolveRules(client, topology, providers!, rules, opts.anchors) : []
  const exact = addRuleFilters(query, resolved)
  const placeOf = (body: CandidatesBody) => {
    const roots = rootsOf(body)
    return (ar: Candidate) => placementInLayout(topology!, providers!, Object.keys(ar.allocations), roots)
  }

  // What the rules' filters do not keep exactly is checked here, and then cut here.
  const cutHere = !exact || (resolved.length > 0 && (group !== undefined || consumer !== undefined))
  const limit = opts.noLimit ? undefined : flags.limit
  if (cutHere || opts.noLimit) delete query.limit
  const ask: CandidatesAsk = {query, group, consumer, files: {layout: flags.layout, groups: flags.groups}}
  if (order) {
    const anchor = canonical(order.consumer)
    ask.order = {
      direction: order.direction,
      consumer: anchor,
      place: {
        of: placeOf,
        anchor: async () => opts.anchors?.get(anchor) ?? consumerNodes(client, topology!, providers!, anchor),
      },
    }
  }
  const answer = await candidatesAt(endpoint, ask)
  const {body} = answer
  providers ??= await providersRead

  let ars = body.allocation_requests
  if (resolved.length) {
    const nodesOf = placeOf(body)
    ars = ars.filter((ar) => resolved.every((r) => ruleViolation(nodesOf(ar), r.anchor, r) === null))
  }
  if (cutHere && limit !== undefined && ars.length > limit) ars = ars.slice(0, limit)
  if (ars !== body.allocation_requests) body.allocation_requests = ars
  body.provider_summaries = narrowSummaries(body, rootsOf(body))
  if (opts.keptNames && !providers) {
    const layout = await layoutRead
    providers = await keptProviders(endpoint, body, Boolean(layout))
    if (layout) topology = topologyFromLayout(layout, providers)
  }
  return {body, providers, topology, rules: resolved, ask, query: answer.query, path: answer.path}
}

/** Each provider's root, as the summaries give it (microversion 1.29 and later). */
function rootsOf(body: CandidatesBody): Map<string, string> {
  const out = new Map<string, string>()
  for (const [uuid, s] of Object.entries(body.provider_summaries ?? {})) if (s.root_provider_uuid) out.set(uuid, s.root_provider_uuid)
  return out
}

/** provider_summaries of the trees the kept candidates use (a filtered list keeps the body consistent). */
function narrowSummaries(body: CandidatesBody, rootOf: Map<string, string>): CandidatesBody['provider_summaries'] {
  const summaries = body.provider_summaries ?? {}
  if (!rootOf.size) return summaries
  const roots = new Set<string>()
  for (const ar of body.allocation_requests) for (const rp of Object.keys(ar.allocations)) roots.add(rootOf.get(rp) ?? rp)
  const out: CandidatesBody['provider_summaries'] = {}
  for (const [uuid, s] of Object.entries(summaries)) if (roots.has(s.root_provider_uuid ?? uuid)) out[uuid] = s
  return out
}
