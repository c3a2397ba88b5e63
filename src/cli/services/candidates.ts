/**
 * Allocation candidates for the CLI (`placemat candidates`, `placemat claim`): the flags of
 * every GET /allocation_candidates query parameter (granular groups included), topology
 * affinity turned into aggregate filters, and soft ordering by closeness.
 *
 * Topology rules (--same LEVEL:CONSUMER, --different LEVEL:CONSUMER) become member_of
 * filters (in: / !in:) on the racks, rows or rooms the consumer's hosts are in, so they
 * work against any Placement endpoint. Which aggregate is which rack/row/room comes from
 * the placemat daemon (GET /placemat/v1/topology/layout) or, against plain Placement, from
 * a layout file (--layout; aggregate uuids as placemat makes them: nodeUuid(level, name)).
 * Every candidate is also checked against the rules on the client (Placement only applies
 * a granular group's member_of to the provider itself, not its host), and --near / --far
 * order the candidates: on placemat server-side (GET /placemat/v1/allocation_candidates),
 * elsewhere on the client.
 */
import {LEVELS, byCloseness, emptyPlacement, ruleViolation, type AffinityRule, type Placement} from '../../core/affinity.js'
import type {TopologyLevel} from '../../core/state.js'
import {notFoundError, usageError} from '../failure.js'
import {Errors, Flags} from '@oclif/core'
import {ApiError, type PlacementClient} from '../../client/client.js'
import {nodeUuid, type Layout, type RackLayout, type RowLayout} from '../../core/topology.js'
import {PLACEMAT_API} from './cloud-view.js'
import {canonical, isUuidLike, mapLimit, resolveProviderUuid} from './providers.js'
import {readDocument} from './document.js'

/** A topology level (rack, row or room). */
export type Level = TopologyLevel
export {LEVELS}

const usage = usageError

// ---- flags ---------------------------------------------------------------------------------

export const GROUP_HELP = `Granular request groups (--group, repeatable):
  --group SUFFIX:KEY=VALUE[,KEY=VALUE...]
  KEY is resources, required, member_of or in_tree (member-of, in-tree too); a value
  runs up to the next KEY=, so commas inside values need no quoting:
    --group _NET:resources=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:1000,required=CUSTOM_PHYSNET0
    --group _ACCEL:resources=FPGA:1,required=in:CUSTOM_FPGA_A,CUSTOM_FPGA_B,member_of=rack:r12
  becomes resources_NET=..., required_NET=..., member_of_ACCEL=... . required= and
  member_of= may be given several times in one group (all must hold); the same SUFFIX
  may be given in several --group flags. SUFFIX is 1-64 of [a-zA-Z0-9_-] (numbers work
  at any microversion). An empty group (only required/member_of) must be named in
  --same-subtree, as Placement asks.

Aggregates (--member-of, member_of=) are uuids, or placemat topology names: rack:NAME,
row:NAME, room:NAME (e.g. --member-of in:rack:r1,rack:r2 or --member-of '!row:r3').

Topology affinity (LEVEL is rack, row or room; CONSUMER a consumer uuid, or several
separated by commas; each flag repeatable):
  --same rack:CONSUMER        in a rack that CONSUMER's hosts are in
  --different row:C1,C2       in none of the rows C1's and C2's hosts are in
  --near CONSUMER             same rack first, then same row, then same room, then the rest
  --far CONSUMER              the reverse
On placemat (daemon or --db) the topology is the daemon's; against plain Placement give
--layout FILE (the rooms/rows/racks document of PUT /placemat/v1/topology/layout). The
rules become member_of filters, and every candidate is checked once more on the client.
Against plain Placement they hold when the candidates are read, not at the write.`

export const candidateFlags = {
  resources: Flags.string({description: 'the unsuffixed group: CLASS:AMOUNT,... e.g. VCPU:2,MEMORY_MB:4096', helpGroup: 'REQUEST'}),
  required: Flags.string({
    description: 'traits of the unsuffixed group: T1,!T2 or in:T1,T2 (repeatable: all must hold)',
    multiple: true,
    helpGroup: 'REQUEST',
  }),
  'member-of': Flags.string({
    description: 'aggregates of the unsuffixed group: AGG, in:A,B, !AGG, !in:A,B (rack:NAME etc. allowed; repeatable)',
    multiple: true,
    helpGroup: 'REQUEST',
  }),
  'in-tree': Flags.string({description: 'the unsuffixed group from the tree of this provider (name or uuid)', helpGroup: 'REQUEST'}),
  group: Flags.string({
    description: 'a granular group: SUFFIX:resources=...,required=...,member_of=...,in_tree=... (repeatable; see below)',
    multiple: true,
    helpGroup: 'REQUEST',
  }),
  'group-policy': Flags.string({description: 'how granular groups share providers', options: ['none', 'isolate'], helpGroup: 'REQUEST'}),
  'same-subtree': Flags.string({description: 'suffixes whose providers must share a subtree: _A,_B (repeatable)', multiple: true, helpGroup: 'REQUEST'}),
  'root-required': Flags.string({description: 'traits of the root provider: T1,!T2', helpGroup: 'REQUEST'}),
  limit: Flags.integer({description: 'at most this many candidates', min: 1, helpGroup: 'REQUEST'}),
  same: Flags.string({description: 'LEVEL:CONSUMER[,CONSUMER...]: in the same rack/row/room as these consumers (repeatable)', multiple: true, helpGroup: 'TOPOLOGY'}),
  different: Flags.string({
    description: 'LEVEL:CONSUMER[,CONSUMER...]: in another rack/row/room than these consumers (repeatable)',
    multiple: true,
    helpGroup: 'TOPOLOGY',
  }),
  near: Flags.string({description: 'order: same rack as CONSUMER first, then row, then room, then the rest', exclusive: ['far'], helpGroup: 'TOPOLOGY'}),
  far: Flags.string({description: 'order: the reverse of --near', helpGroup: 'TOPOLOGY'}),
  layout: Flags.string({description: 'topology layout file (YAML/JSON) for a plain Placement endpoint', helpGroup: 'TOPOLOGY'}),
}

export interface CandidateFlagValues {
  resources?: string
  required?: string[]
  'member-of'?: string[]
  'in-tree'?: string
  group?: string[]
  'group-policy'?: string
  'same-subtree'?: string[]
  'root-required'?: string
  limit?: number
  same?: string[]
  different?: string[]
  near?: string
  far?: string
  layout?: string
}

// ---- the query -------------------------------------------------------------------------------

export interface GranularGroup {
  suffix: string
  resources?: string
  required: string[]
  memberOf: string[]
  inTree?: string
}

const GROUP_KEY = /^(resources|required|member[_-]of|in[_-]tree)=(.*)$/

/** "SUFFIX:resources=A:1,B:2,required=T1,!T2,member_of=in:X,Y" into its parts. */
export function parseGroup(spec: string): GranularGroup {
  const colon = spec.indexOf(':')
  if (colon <= 0) throw usage(`--group ${spec}: expected SUFFIX:resources=...[,required=...][,member_of=...][,in_tree=...]`)
  const suffix = spec.slice(0, colon)
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(suffix)) throw usage(`--group ${spec}: the suffix must be 1-64 of [a-zA-Z0-9_-], not '${suffix}'`)
  const g: GranularGroup = {suffix, required: [], memberOf: []}
  const fields: Array<[string, string]> = []
  for (const token of spec.slice(colon + 1).split(',')) {
    const m = GROUP_KEY.exec(token.trim())
    if (m) fields.push([m[1].replace('-', '_'), m[2]])
    else if (fields.length) fields[fields.length - 1][1] += `,${token}`
    else throw usage(`--group ${spec}: '${token}' comes before any resources=, required=, member_of= or in_tree=`)
  }
  if (!fields.length) throw usage(`--group ${spec}: nothing after the suffix`)
  for (const [key, value] of fields) {
    if (value.trim() === '') throw usage(`--group ${spec}: ${key}= is empty`)
    if (key === 'resources') g.resources = g.resources ? `${g.resources},${value}` : value
    else if (key === 'required') g.required.push(value)
    else if (key === 'member_of') g.memberOf.push(value)
    else {
      if (g.inTree) throw usage(`--group ${spec}: in_tree given twice`)
      g.inTree = value
    }
  }
  return g
}

/** Merges the --group flags by suffix. */
export function parseGroups(specs: string[] = []): GranularGroup[] {
  const out = new Map<string, GranularGroup>()
  for (const spec of specs) {
    const g = parseGroup(spec)
    const prev = out.get(g.suffix)
    if (!prev) {
      out.set(g.suffix, g)
      continue
    }
    if (g.resources) prev.resources = prev.resources ? `${prev.resources},${g.resources}` : g.resources
    prev.required.push(...g.required)
    prev.memberOf.push(...g.memberOf)
    if (g.inTree) {
      if (prev.inTree && prev.inTree !== g.inTree) throw usage(`--group ${g.suffix}: two different in_tree`)
      prev.inTree = g.inTree
    }
  }
  return [...out.values()]
}

const TOPO_REF = /^(rack|row|room):(.+)$/

/** One member_of value with topology names (rack:NAME, row:NAME, room:NAME) made aggregate uuids. */
export function memberOfValue(value: string): string {
  let prefix = ''
  let rest = value.trim()
  for (const p of ['!in:', 'in:', '!']) {
    if (rest.startsWith(p)) {
      prefix = p
      rest = rest.slice(p.length)
      break
    }
  }
  const items = prefix.endsWith('in:') ? rest.split(',') : [rest]
  const mapped = items.map((item) => {
    const m = TOPO_REF.exec(item.trim())
    return m ? nodeUuid(m[1] as Level, m[2]) : item.trim()
  })
  return prefix + mapped.join(',')
}

/** The query as an ordered list of key -> values (the first appearance of a suffix orders the groups). */
export type Query = Record<string, string[]>

function add(q: Query, key: string, value: string): void {
  ;(q[key] ??= []).push(value)
}

/** GET /allocation_candidates query from the flags (provider names in in_tree resolved). */
export async function buildQuery(client: PlacementClient, flags: CandidateFlagValues): Promise<Query> {
  const q: Query = {}
  if (flags.resources) add(q, 'resources', flags.resources)
  for (const r of flags.required ?? []) add(q, 'required', r)
  for (const m of flags['member-of'] ?? []) add(q, 'member_of', memberOfValue(m))
  if (flags['in-tree']) add(q, 'in_tree', await resolveProviderUuid(client, flags['in-tree'], true))
  for (const g of parseGroups(flags.group)) {
    const s = g.suffix
    if (g.resources) add(q, `resources${s}`, g.resources)
    for (const r of g.required) add(q, `required${s}`, r)
    for (const m of g.memberOf) add(q, `member_of${s}`, memberOfValue(m))
    if (g.inTree) add(q, `in_tree${s}`, await resolveProviderUuid(client, g.inTree, true))
  }
  if (flags['group-policy']) add(q, 'group_policy', flags['group-policy'])
  for (const s of flags['same-subtree'] ?? []) add(q, 'same_subtree', s)
  if (flags['root-required']) add(q, 'root_required', flags['root-required'])
  if (flags.limit !== undefined) add(q, 'limit', String(flags.limit))
  const hasGroup = Object.keys(q).some((k) => k.startsWith('resources') || k.startsWith('required') || k.startsWith('member_of'))
  if (!hasGroup) throw usage('say what to place: --resources CLASS:AMOUNT,... and/or --group SUFFIX:resources=...')
  return q
}

/** The suffixes of the granular groups in a query. */
export const granularSuffixes = (q: Query) =>
  [...new Set(Object.keys(q).map((k) => /^(?:resources|required|member_of|in_tree)(.+)$/.exec(k)?.[1]).filter((s): s is string => !!s))]

// ---- topology --------------------------------------------------------------------------------

/** --same / --different values into rules. */
export function parseRules(flags: {same?: string[]; different?: string[]}): AffinityRule[] {
  const out: AffinityRule[] = []
  for (const relation of ['same', 'different'] as const) {
    for (const v of flags[relation] ?? []) {
      const m = /^(rack|row|room):(.+)$/.exec(v.trim())
      if (!m) throw usage(`--${relation} ${v}: expected LEVEL:CONSUMER[,CONSUMER...] with LEVEL rack, row or room`)
      for (const c of m[2].split(',').map((s) => s.trim()).filter(Boolean)) {
        if (!isUuidLike(c)) throw usage(`--${relation} ${v}: '${c}' is not a consumer uuid`)
        out.push({relation, level: m[1] as Level, consumer: canonical(c)})
      }
    }
  }
  return out
}

/** Topology node (aggregate) uuids per level: core's Placement. */
export type NodeSets = Placement
export const emptyNodes = emptyPlacement

export interface ProviderInfo {
  uuid: string
  name: string
  root_provider_uuid?: string
  parent_provider_uuid?: string | null
}

export interface Topology {
  /** Read from a placemat endpoint (its own API is there). */
  placemat: boolean
  /** aggregate uuid -> its level and name */
  nodes: Map<string, {level: Level; name: string}>
  /** host (root provider) uuid -> the racks, rows and rooms it is in */
  hosts: Map<string, NodeSets>
}

const notThere = (err: unknown) => err instanceof ApiError && (err.status === 404 || err.status === 405)

/** The placemat layout document, or null on an endpoint that is not placemat. */
export async function fetchLayout(client: PlacementClient): Promise<Layout | null> {
  try {
    return await client.get<Layout>(`${PLACEMAT_API}/topology/layout`)
  } catch (err) {
    if (notThere(err)) return null
    throw err
  }
}

export function readLayoutFile(file: string): Layout {
  const data = readDocument(file)
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw usage(`${file}: expected a layout: rooms, rows and/or racks`)
  const doc = data as Layout & {topology?: Layout}
  return doc.topology && typeof doc.topology === 'object' ? doc.topology : doc
}

/** Every provider, for names and roots (one call). */
export async function listProviders(client: PlacementClient): Promise<Map<string, ProviderInfo>> {
  const body = await client.get<{resource_providers: ProviderInfo[]}>('/resource_providers')
  return new Map(body.resource_providers.map((p) => [p.uuid, p]))
}

/** Flattens a layout; hosts are named by name or uuid. */
export function topologyFromLayout(layout: Layout, providers: Map<string, ProviderInfo>, placemat: boolean): Topology {
  const byName = new Map<string, string>()
  for (const p of providers.values()) byName.set(p.name, p.uuid)
  const t: Topology = {placemat, nodes: new Map(), hosts: new Map()}
  const node = (level: Level, name: string) => {
    const uuid = nodeUuid(level, name)
    t.nodes.set(uuid, {level, name})
    return uuid
  }
  const rack = (r: RackLayout, chain: Array<[Level, string]>) => {
    if (!r?.name) return
    const all: Array<[Level, string]> = [...chain, ['rack', node('rack', r.name)]]
    for (const ref of r.hosts ?? []) {
      const uuid = providers.has(String(ref)) ? String(ref) : byName.get(String(ref)) ?? (isUuidLike(String(ref)) ? canonical(String(ref)) : undefined)
      if (!uuid) continue
      const sets = t.hosts.get(uuid) ?? emptyNodes()
      for (const [level, u] of all) sets[level].add(u)
      t.hosts.set(uuid, sets)
    }
  }
  const row = (r: RowLayout, chain: Array<[Level, string]>) => {
    if (!r?.name) return
    const c: Array<[Level, string]> = [...chain, ['row', node('row', r.name)]]
    for (const k of r.racks ?? []) rack(k, c)
  }
  for (const m of layout.rooms ?? []) {
    if (!m?.name) continue
    const c: Array<[Level, string]> = [['room', node('room', m.name)]]
    for (const r of m.rows ?? []) row(r, c)
  }
  for (const r of layout.rows ?? []) row(r, [])
  for (const k of layout.racks ?? []) rack(k, [])
  return t
}

/**
 * The topology to work with: --layout FILE when given, else the placemat endpoint's; on a
 * plain Placement endpoint without --layout, a usage error (exit 2).
 */
export async function loadTopology(
  client: PlacementClient,
  providers: Map<string, ProviderInfo>,
  layoutFile: string | undefined,
  why: string,
): Promise<Topology> {
  const served = await fetchLayout(client)
  if (layoutFile) return topologyFromLayout(readLayoutFile(layoutFile), providers, served !== null)
  if (!served) throw usage(`${why} needs the topology: this endpoint is not placemat, so give --layout FILE`)
  return topologyFromLayout(served, providers, true)
}

/** The racks, rows and rooms of the hosts of a set of providers. */
export function placementOf(topo: Topology, providers: Map<string, ProviderInfo>, uuids: Iterable<string>, roots?: Map<string, string>): NodeSets {
  const out = emptyNodes()
  for (const u of uuids) {
    const root = roots?.get(u) ?? providers.get(u)?.root_provider_uuid ?? u
    const sets = topo.hosts.get(root)
    if (sets) for (const l of LEVELS) for (const n of sets[l]) out[l].add(n)
  }
  return out
}

/**
 * Where a consumer is: GET /allocations/{consumer}, the roots of its providers, and their
 * aggregates that are topology nodes.
 */
export async function consumerNodes(client: PlacementClient, topo: Topology, providers: Map<string, ProviderInfo>, consumer: string): Promise<NodeSets> {
  const body = await client.get<{allocations: Record<string, unknown>}>(`/allocations/${encodeURIComponent(consumer)}`)
  const roots = new Set<string>()
  for (const rp of Object.keys(body.allocations ?? {})) roots.add(providers.get(rp)?.root_provider_uuid ?? rp)
  const out = emptyNodes()
  const aggs = await mapLimit([...roots], 8, async (root) => {
    try {
      return (await client.get<{aggregates: string[]}>(`/resource_providers/${root}/aggregates`)).aggregates
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return []
      throw err
    }
  })
  for (const list of aggs) {
    for (const a of list) {
      const n = topo.nodes.get(a)
      if (n) out[n.level].add(a)
    }
  }
  return out
}

export interface ResolvedRule extends AffinityRule {
  /** Where the anchor consumer is. */
  anchor: Placement
}

/** Looks up every rule's anchor. A `same` rule whose consumer is nowhere at that level cannot hold: exit 3. */
export async function resolveRules(
  client: PlacementClient,
  topo: Topology,
  providers: Map<string, ProviderInfo>,
  rules: AffinityRule[],
  anchors: Map<string, NodeSets> = new Map(),
): Promise<ResolvedRule[]> {
  const wanted = [...new Set(rules.map((r) => r.consumer))].filter((c) => !anchors.has(c))
  const found = await mapLimit(wanted, 8, (c) => consumerNodes(client, topo, providers, c))
  wanted.forEach((c, i) => anchors.set(c, found[i]))
  return rules.map((r) => {
    const anchor = anchors.get(r.consumer)!
    if (r.relation === 'same' && anchor[r.level].size === 0) {
      throw notFoundError(`--same ${r.level}:${r.consumer}: that consumer has no allocations in any ${r.level}`)
    }
    return {...r, anchor}
  })
}

/**
 * Adds the rules as member_of filters: `same` as in:NODES on the unsuffixed group (where
 * Placement counts the host's aggregates for its nested providers), `different` as
 * !in:NODES on every group. Returns whether the filters alone are exact (else the caller
 * must filter on the client before applying a limit).
 */
export function addRuleFilters(q: Query, rules: ResolvedRule[]): boolean {
  const unsuffixed = Boolean(q.resources?.length)
  const suffixes = granularSuffixes(q)
  let exact = unsuffixed
  for (const r of rules) {
    const nodes = r.anchor[r.level]
    if (nodes.size === 0) continue // `different` from a consumer that is nowhere: nothing to avoid
    const list = [...nodes].sort().join(',')
    if (r.relation === 'same') {
      if (unsuffixed) add(q, 'member_of', `in:${list}`)
      continue
    }
    if (unsuffixed) add(q, 'member_of', `!in:${list}`)
    for (const s of suffixes) add(q, `member_of${s}`, `!in:${list}`)
  }
  if (!rules.length) exact = true
  return exact
}

// ---- candidates --------------------------------------------------------------------------------

export type Resources = Record<string, number>

export interface CandidatesBody {
  allocation_requests: Array<{allocations: Record<string, {resources: Resources}>; mappings?: Record<string, string[]>}>
  provider_summaries: Record<
    string,
    {resources: Record<string, {capacity: number; used: number}>; traits?: string[]; parent_provider_uuid?: string | null; root_provider_uuid?: string}
  >
}

export interface CandidateSearch {
  body: CandidatesBody
  /** The providers listing, when it was read (names, roots). */
  providers?: Map<string, ProviderInfo>
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
}

/**
 * Runs the search: builds the query, resolves topology rules into filters, asks the right
 * endpoint, checks the rules on every candidate, orders by closeness when asked, and cuts
 * to --limit.
 */
export async function searchCandidates(client: PlacementClient, flags: CandidateFlagValues, opts: SearchOptions = {}): Promise<CandidateSearch> {
  const query = await buildQuery(client, flags)
  const rules = [...parseRules(flags), ...(opts.extraRules ?? [])]
  const order = flags.near ? {direction: 'near' as const, consumer: flags.near} : flags.far ? {direction: 'far' as const, consumer: flags.far} : null
  if (order && !isUuidLike(order.consumer)) throw usage(`--${order.direction} ${order.consumer}: not a consumer uuid`)
  const needTopology = rules.length > 0 || order !== null || opts.topology === 'required'
  let providers: Map<string, ProviderInfo> | undefined
  let topology: Topology | undefined
  // Names alone are read beside the candidates; the topology needs them first.
  const providersRead = needTopology || opts.names || opts.topology === 'optional' ? listProviders(client) : undefined
  providersRead?.catch(() => undefined)
  if (needTopology) {
    const why = opts.topologyWhy ?? (rules.length ? '--same/--different' : `--${order!.direction}`)
    providers = await providersRead!
    topology = await loadTopology(client, providers, flags.layout, why)
  } else if (opts.topology === 'optional') {
    const [served, list] = await Promise.all([flags.layout ? readLayoutFile(flags.layout) : fetchLayout(client), providersRead!])
    providers = list
    if (served) topology = topologyFromLayout(served, providers, true)
  }
  const resolved = topology ? await resolveRules(client, topology, providers!, rules, opts.anchors) : []
  const exact = addRuleFilters(query, resolved)

  // Server-side ordering on placemat (the daemon's topology); client-side elsewhere.
  const serverOrder = order !== null && topology?.placemat === true && !flags.layout
  const clientCut = (!exact || (order !== null && !serverOrder)) && query.limit !== undefined
  const limit = flags.limit
  if (clientCut || opts.noLimit) delete query.limit
  let path = '/allocation_candidates'
  const sent: Query = {...query}
  if (serverOrder) {
    path = `${PLACEMAT_API}/allocation_candidates`
    sent[order!.direction] = [canonical(order!.consumer)]
  }
  const body = await client.get<CandidatesBody>(path, {query: sent})
  providers ??= await providersRead

  let ars = body.allocation_requests
  const rootOf = new Map<string, string>()
  for (const [uuid, s] of Object.entries(body.provider_summaries ?? {})) if (s.root_provider_uuid) rootOf.set(uuid, s.root_provider_uuid)
  const nodesOf = (ar: CandidatesBody['allocation_requests'][number]) => placementOf(topology!, providers!, Object.keys(ar.allocations), rootOf)
  if (resolved.length) ars = ars.filter((ar) => resolved.every((r) => ruleViolation(nodesOf(ar), r.anchor, r) === null))
  if (order && !serverOrder) {
    const anchorNodes = opts.anchors?.get(canonical(order.consumer)) ?? (await consumerNodes(client, topology!, providers!, canonical(order.consumer)))
    ars = byCloseness(ars, nodesOf, anchorNodes, order.direction)
  }
  if (limit !== undefined && !opts.noLimit && ars.length > limit) ars = ars.slice(0, limit)
  if (ars !== body.allocation_requests) body.allocation_requests = ars
  body.provider_summaries = narrowSummaries(body, rootOf)
  return {body, providers, topology, rules: resolved, query: sent, path}
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

// ---- rendering -------------------------------------------------------------------------------

export interface CandidateRow {
  index: number
  providers: string
  resources: string
  free_after: string
  rack: string
  row: string
  room: string
  uuids: string[]
}

const nameOf = (providers: Map<string, ProviderInfo> | undefined, uuid: string) => providers?.get(uuid)?.name ?? uuid

/** One row per candidate: provider names, amounts, and what is left of those classes after this claim. */
export function candidateRows(search: CandidateSearch): CandidateRow[] {
  const {body, providers, topology} = search
  return body.allocation_requests.map((ar, i) => {
    const uuids = Object.keys(ar.allocations)
    const parts: string[] = []
    const free: string[] = []
    for (const rp of uuids) {
      const res = ar.allocations[rp].resources
      const name = nameOf(providers, rp)
      parts.push(`${name}: ${Object.entries(res).map(([rc, n]) => `${rc}=${n}`).join(',')}`)
      const sum = body.provider_summaries?.[rp]?.resources ?? {}
      free.push(
        `${name}: ${Object.entries(res)
          .map(([rc, n]) => `${rc}=${sum[rc] ? sum[rc].capacity - sum[rc].used - n : '?'}`)
          .join(',')}`,
      )
    }
    const where = topology ? placementOf(topology, providers ?? new Map(), uuids) : emptyNodes()
    const names = (l: Level) => [...where[l]].map((u) => topology!.nodes.get(u)?.name ?? u).sort().join(',')
    return {index: i + 1, providers: uuids.map((u) => nameOf(providers, u)).join(','), resources: parts.join('; '), free_after: free.join('; '), rack: names('rack'), row: names('row'), room: names('room'), uuids}
  })
}
