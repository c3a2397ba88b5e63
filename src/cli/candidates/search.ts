/**
 * Runs a candidates search: the query, topology rules resolved into filters, the right
 * endpoint (placemat orders by closeness server-side), every candidate checked against the
 * rules on the client (Placement applies a granular group's member_of to the provider
 * itself, not its host), ordering and the --limit cut.
 */
import {byCloseness, ruleViolation, type AffinityRule} from '../../core/affinity.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import type {Endpoint} from '../backend/backend.js'
import {PLACEMAT_CANDIDATES} from '../backend/placemat-api.js'
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
import {forGroups} from '../../core/candidates/group-fit.js'
import type {State} from '../../core/state.js'
import {NO_GROUPS_HERE} from '../groups/groups.js'

export type Resources = Record<string, number>

export interface CandidatesBody {
  allocation_requests: Array<{allocations: Record<string, {resources: Resources}>; mappings?: Record<string, string[]>}>
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
  /** The query as sent. */
  query: Query
  /** Which endpoint answered. */
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
 * Runs the search: builds the query, resolves topology rules into filters, asks the right
 * endpoint, checks the rules on every candidate, orders by closeness when asked, and cuts
 * to --limit.
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
  const placementGroup = placementGroupOf(flags.group)
  const consumer = opts.consumer !== undefined ? canonical(opts.consumer) : undefined
  if (placementGroup !== undefined && order)
    throw usage(`--group ${placementGroup} orders the candidates itself: not with --${order.direction}`)
  // Groups are judged by placemat (daemon or --db); on plain Placement here, on a snapshot with
  // the --groups file's groups (none without the file: there is nowhere else to keep them).
  let groupState: Promise<State> | undefined
  let placematGroups = false
  if (placementGroup !== undefined || consumer !== undefined) {
    const backend = await endpoint.backend()
    placematGroups = backend.placemat !== undefined
    if (!placematGroups) {
      if (placementGroup !== undefined && !flags.groups) throw usage(`--group ${placementGroup}: ${NO_GROUPS_HERE}`)
      if (flags.groups) {
        groupState = import('../groups/file-groups.js').then((m) => m.groupsSnapshot(backend, flags.groups!, flags.layout))
        groupState.catch(() => undefined)
      }
    }
  }
  const judged = placementGroup !== undefined || (consumer !== undefined && (placematGroups || groupState !== undefined))
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
      if (layout) topology = topologyFromLayout(layout, providers, true)
    }
  }
  const resolved = topology ? await resolveRules(client, topology, providers!, rules, opts.anchors) : []
  const exact = addRuleFilters(query, resolved)

  // Server-side ordering on placemat (the daemon's topology); client-side elsewhere.
  const serverOrder = order !== null && topology?.placemat === true && !flags.layout
  const clientCut =
    (!exact || (order !== null && !serverOrder) || (judged && (resolved.length > 0 || groupState !== undefined))) &&
    query.limit !== undefined
  const limit = flags.limit
  if (clientCut || opts.noLimit) delete query.limit
  // placemat's own parameters go to its own route; the rest is Placement's.
  let placematQuery = false
  const sent: Query = {...query}
  if (serverOrder) {
    placematQuery = true
    sent[order!.direction] = [canonical(order!.consumer)]
  } else if (placementGroup !== undefined && placematGroups) {
    // The daemon keeps the group: it filters (hard) or orders (soft) with every member where it is.
    placematQuery = true
    sent.group = [placementGroup]
  }
  // And the groups the consumer is a member of, the same way.
  if (consumer !== undefined && placematGroups) {
    placematQuery = true
    sent.consumer = [consumer]
  }
  const body = placematQuery
    ? await (await endpoint.backend()).placemat!.candidates<CandidatesBody>(sent)
    : await client.get<CandidatesBody>('/allocation_candidates', {query: sent})
  providers ??= await providersRead

  let ars = body.allocation_requests
  const rootOf = new Map<string, string>()
  for (const [uuid, s] of Object.entries(body.provider_summaries ?? {})) if (s.root_provider_uuid) rootOf.set(uuid, s.root_provider_uuid)
  const nodesOf = (ar: CandidatesBody['allocation_requests'][number]) =>
    placementInLayout(topology!, providers!, Object.keys(ar.allocations), rootOf)
  if (resolved.length) ars = ars.filter((ar) => resolved.every((r) => ruleViolation(nodesOf(ar), r.anchor, r) === null))
  if (groupState) ars = forGroups(await groupState, ars, (ar) => Object.keys(ar.allocations), {consumer, group: placementGroup})
  if (order && !serverOrder) {
    const anchorNodes =
      opts.anchors?.get(canonical(order.consumer)) ?? (await consumerNodes(client, topology!, providers!, canonical(order.consumer)))
    ars = byCloseness(ars, nodesOf, anchorNodes, order.direction)
  }
  if (limit !== undefined && !opts.noLimit && ars.length > limit) ars = ars.slice(0, limit)
  if (ars !== body.allocation_requests) body.allocation_requests = ars
  body.provider_summaries = narrowSummaries(body, rootOf)
  if (opts.keptNames && !providers) {
    const layout = await layoutRead
    providers = await keptProviders(endpoint, body, Boolean(layout))
    if (layout) topology = topologyFromLayout(layout, providers, true)
  }
  return {body, providers, topology, rules: resolved, query: sent, path: placematQuery ? PLACEMAT_CANDIDATES : '/allocation_candidates'}
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
