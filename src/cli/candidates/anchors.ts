/**
 * Where things are, for topology rules: which aggregate is which rack, row or room (the
 * placemat daemon's layout, or --layout FILE against plain Placement), the racks, rows and
 * rooms of a set of providers' hosts, and where each rule's anchor consumer is now.
 */
import {LEVELS, emptyPlacement, type AffinityRule, type Placement} from '../../core/affinity.js'
import type {TopologyLevel} from '../../core/state/state.js'
import {layoutNodes, nodeUuid, type Layout, type RackLayout, type RowLayout} from '../../core/topology.js'
import {ApiError, type PlacementClient} from '../../client/client.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import type {Endpoint} from '../backend/backend.js'
import {listProviders, sharingProviders} from '../backend/standard-reads.js'
import {SHARES_VIA_AGGREGATE, hostsOfProviders, type HostFacts, type ProviderLookup} from '../../core/host.js'
import type {ListedProvider} from '../../core/wire.js'
import {notFoundError, usageError as usage} from '../failure.js'
import {readDocument} from '../formats/document.js'
import {layoutBody, parseLayout} from '../topology/layout-file.js'
import {mapLimit} from '../../client/map-limit.js'

/** A topology level (rack, row or room). */
export type Level = TopologyLevel
export {LEVELS}

export type NodeSets = Placement
export const emptyNodes = emptyPlacement

export interface Topology {
  /** aggregate uuid -> its level and name */
  nodes: Map<string, {level: Level; name: string}>
  /** host (root provider) uuid -> the racks, rows and rooms it is in */
  hosts: Map<string, NodeSets>
}

/** The layout the backend keeps; null on plain Placement, which keeps no names. */
export async function fetchLayout(endpoint: Endpoint): Promise<Layout | null> {
  return (await (await endpoint.backend()).currentLayout()) ?? null
}

/**
 * Refuses racks, rows and rooms that do not exist (exit 3), so that a typo is not taken for a
 * full cloud. They are known from the placemat endpoint's layout or --layout FILE; on plain
 * Placement without a file nothing can be checked (the names still map to their uuids).
 */
export async function checkTopologyNames(
  endpoint: Endpoint,
  refs: Array<{level: TopologyLevel; name: string}>,
  layoutFile?: string,
): Promise<void> {
  if (!refs.length) return
  const layout = layoutFile ? readLayoutFile(layoutFile) : await fetchLayout(endpoint)
  if (!layout) return
  const known = layoutNodes(layout)
  const missing = refs.filter((r) => !known.has(nodeUuid(r.level, r.name)))
  if (missing.length) throw notFoundError(missing.map((r) => `no ${r.level} named ${r.name}`).join('; '))
}

/** The layout file (--layout), checked as `topology apply` checks it; a document wrapping it in `topology:` is taken too. */
export function readLayoutFile(file: string): Layout {
  const data = readDocument(file, {fail: usage, jsonFastPath: true}) as {topology?: unknown} | null
  const inner =
    data && typeof data === 'object' && !Array.isArray(data) && data.topology && typeof data.topology === 'object' ? data.topology : data
  return layoutBody(parseLayout(inner ?? {}, file))
}

/** A listed provider, and whether it shares its inventory (what deciding its host needs). */
export type KnownProvider = ListedProvider & {sharing?: boolean}

/** Every provider, for names, roots and which of them share (two calls). */
export async function providersByUuid(client: PlacementClient): Promise<Map<string, KnownProvider>> {
  const [listed, sharing] = await Promise.all([listProviders(client), sharingProviders(client)])
  return new Map(listed.map((p) => [p.uuid, sharing.has(p.uuid) ? {...p, sharing: true} : p]))
}

const SHARING_TRAITS = new Set([SHARES_VIA_AGGREGATE])
const NO_TRAITS = new Set<string>()

/** Listed providers as the core's host definition reads them (`roots` overrides a provider's root). */
export function providerLookup(providers: Map<string, KnownProvider>, roots?: Map<string, string>): ProviderLookup {
  return {
    providers: {
      get(uuid: string): HostFacts | undefined {
        const p = providers.get(uuid)
        const root = roots?.get(uuid) ?? p?.root_provider_uuid ?? (p ? uuid : undefined)
        if (root === undefined) return undefined
        return {uuid, root, traits: p?.sharing ? SHARING_TRAITS : NO_TRAITS}
      },
    },
  }
}

/** Flattens a layout; hosts are named by name or uuid. */
export function topologyFromLayout(layout: Layout, providers: Map<string, KnownProvider>): Topology {
  const byName = new Map<string, string>()
  for (const p of providers.values()) byName.set(p.name, p.uuid)
  const t: Topology = {nodes: new Map(), hosts: new Map()}
  const node = (level: Level, name: string) => {
    const uuid = nodeUuid(level, name)
    t.nodes.set(uuid, {level, name})
    return uuid
  }
  const rack = (r: RackLayout, chain: Array<[Level, string]>) => {
    if (!r?.name) return
    const all: Array<[Level, string]> = [...chain, ['rack', node('rack', r.name)]]
    for (const ref of r.hosts ?? []) {
      const uuid = providers.has(String(ref))
        ? String(ref)
        : (byName.get(String(ref)) ?? (isUuidLike(String(ref)) ? canonical(String(ref)) : undefined))
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
  endpoint: Endpoint,
  providers: Map<string, KnownProvider>,
  layoutFile: string | undefined,
  why: string,
): Promise<Topology> {
  if (layoutFile) return topologyFromLayout(readLayoutFile(layoutFile), providers)
  const served = await fetchLayout(endpoint)
  if (!served) throw usage(`${why} needs the topology: this endpoint is not placemat, so give --layout FILE`)
  return topologyFromLayout(served, providers)
}

/**
 * The racks, rows and rooms of the hosts of a set of providers (the core's host definition), as
 * the layout places them (core's placementOf reads a State).
 */
export function placementInLayout(
  topo: Topology,
  providers: Map<string, KnownProvider>,
  uuids: Iterable<string>,
  roots?: Map<string, string>,
): NodeSets {
  const out = emptyNodes()
  for (const host of hostsOfProviders(providerLookup(providers, roots), uuids)) {
    const sets = topo.hosts.get(host)
    if (sets) for (const l of LEVELS) for (const n of sets[l]) out[l].add(n)
  }
  return out
}

/**
 * Where a consumer is: GET /allocations/{consumer}, its hosts (shared resources place it
 * nowhere), and their aggregates that are topology nodes.
 */
export async function consumerNodes(
  client: PlacementClient,
  topo: Topology,
  providers: Map<string, KnownProvider>,
  consumer: string,
): Promise<NodeSets> {
  const body = await client.get<{allocations: Record<string, unknown>}>(`/allocations/${encodeURIComponent(consumer)}`)
  const roots = hostsOfProviders(providerLookup(providers), Object.keys(body.allocations ?? {}))
  const out = emptyNodes()
  const aggs = await mapLimit(roots, 8, async (root) => {
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
  providers: Map<string, KnownProvider>,
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
