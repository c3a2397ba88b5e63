/**
 * Racks, rows and rooms on plain Placement, which keeps the aggregates but not their names: the
 * operator's --layout file names them, and the hosts in each are read from the aggregates. A
 * layout is planned as placemat plans it (core/topology.ts) on what is read, and applied as each
 * changed host's aggregates; an edit reads, edits, applies and writes back the file, which is the
 * record of the names.
 */
import fs from 'node:fs'
import {mapLimit} from '../../client/map-limit.js'
import {DISABLED_TRAIT, SHARES_VIA_AGGREGATE} from '../../core/host.js'
import {stateFromSnapshot} from '../../core/snapshot.js'
import {
  currentLayout,
  layoutChanges,
  layoutNodes,
  legacyNodeUuid,
  observedNodes,
  type Layout,
  type WantedNode,
} from '../../core/topology.js'
import {topologyView} from '../../core/topology-view.js'
import {usageError} from '../failure.js'
import {retryOnConcurrentUpdate} from './retry.js'
import {NEEDS_LAYOUT} from '../topology/edit.js'
import {layoutBody, layoutYaml, readLayoutFile, type LayoutDoc} from '../topology/layout-file.js'
import type {
  Backend,
  LayoutApplyOptions,
  LayoutApplyResult,
  LayoutEditOptions,
  LayoutEditResult,
  LocalFiles,
  TopologyAnswer,
} from './backend.js'
import {disabledProviders, listProviders, loadStandard, membersOf, sharingProviders} from './standard-reads.js'

/** The --layout file's racks, rows and rooms (none without one). */
const layoutOf = (files?: LocalFiles): Layout | undefined => (files?.layout ? layoutBody(readLayoutFile(files.layout)) : undefined)

/** The racks, rows and rooms of the --layout file, each rack's hosts as its aggregate has them now. */
export async function plainCurrentLayout(backend: Backend, files?: LocalFiles): Promise<Layout | undefined> {
  const file = layoutOf(files)
  if (!file) return undefined
  const nodes = layoutNodes(file)
  const racks = [...nodes.values()].filter((n) => n.level === 'rack').map((n) => n.uuid)
  const [providers, members] = await Promise.all([listProviders(backend.client), membersOf(backend.client, racks, 16)])
  const s = stateFromSnapshot({providers: withAggregates(providers, members), topology: [...nodes.values()]})
  const {generation: _generation, ...layout} = currentLayout(s)
  return layout
}

/** The view placemat computes, over the racks, rows and rooms of the --layout file. */
export async function plainTopologyView(
  backend: Backend,
  files?: LocalFiles,
  opts: {concurrency?: number; onProgress?: (done: number, total: number) => void} = {},
): Promise<TopologyAnswer | undefined> {
  const file = layoutOf(files)
  if (!file) return undefined
  const {client} = backend
  const [cloud, disabled, sharing] = await Promise.all([
    loadStandard(client, {parts: {inventories: true, usages: true, traits: false, aggregates: true}, ...opts}),
    // Which hosts are out of service and which providers share (no hosts), in one call each
    // rather than every provider's traits.
    disabledProviders(client),
    sharingProviders(client),
  ])
  const traitsOf = (uuid: string) => [...(disabled.has(uuid) ? [DISABLED_TRAIT] : []), ...(sharing.has(uuid) ? [SHARES_VIA_AGGREGATE] : [])]
  const providers = [...cloud.providers.values()].map((p) => ({...p, traits: traitsOf(p.uuid)}))
  const s = stateFromSnapshot({providers, topology: [...layoutNodes(file).values()]})
  return {generation: null, topology: topologyView(s)}
}

/**
 * Reads who is in each of the layout's aggregates (and the previous layout's), plans as
 * placemat would, and sets each changed host's aggregates, keeping its other aggregates.
 * Without `previous`, a rack/row/room left out of the layout cannot be known, so even with
 * prune its hosts keep that aggregate. There is no topology generation to pin and no group
 * to break here, so a dry run has no refusal to predict.
 */
export async function plainApplyLayout(backend: Backend, layout: Layout, opts: LayoutApplyOptions = {}): Promise<LayoutApplyResult> {
  const {client} = backend
  const concurrency = opts.concurrency ?? 16
  const named = layoutNodes(layout)
  const previous = opts.previous ? layoutNodes(opts.previous) : new Map<string, WantedNode>()
  const aggs = [...new Set([...previous.keys(), ...named.keys()])]
  // The same nodes under their uuids from before the one namespace: hosts still there move out.
  const legacy = [...new Set([...previous.values(), ...named.values()].map((n) => legacyNodeUuid(n.level, n.name)))]
  let reads = 0
  const toRead = aggs.length + legacy.length
  const progress = () => opts.onProgress?.(++reads, toRead, `reading ${toRead} aggregates`)
  const [providers, members, legacyMembers] = await Promise.all([
    listProviders(client),
    membersOf(client, aggs, concurrency, progress),
    membersOf(client, legacy, concurrency, progress),
  ])
  const records = withAggregates(providers, members)
  const aggregatesOf = new Map(records.map((r) => [r.uuid, r.aggregates]))
  const topology = observedNodes(
    previous,
    named,
    (a) => members.get(a) ?? [],
    (p) => aggregatesOf.get(p) ?? [],
  )
  const s = stateFromSnapshot({providers: records, topology})
  const prune = Boolean(opts.prune)
  const {plan, hostAggs, resolved} = layoutChanges(s, layout, {prune})
  // Hosts still in an old-namespace aggregate move out (into the new one where they are placed);
  // without prune, one placed nowhere keeps what it has.
  for (const list of legacyMembers.values()) {
    for (const u of list)
      if (!hostAggs.has(u) && s.providers.has(u) && (prune || resolved.hosts.has(u))) hostAggs.set(u, resolved.hosts.get(u) ?? [])
  }
  opts.onPlan?.(plan)
  if (opts.dryRun || hostAggs.size === 0) return {transport: backend.kind, plan, applied: false, writes: 0}

  const topologyAggs = new Set([...aggs, ...legacy])
  let done = 0
  const total = hostAggs.size
  opts.onProgress?.(0, total, `0/${total} hosts`)
  await mapLimit([...hostAggs], concurrency, ([uuid, wanted]) =>
    retryOnConcurrentUpdate(async () => {
      // The snapshot knew only the topology aggregates: keep whatever else the host has now.
      const path = `/resource_providers/${uuid}/aggregates`
      const cur = await client.get<{aggregates: string[]; resource_provider_generation: number}>(path, {version: '1.19'})
      const next = [...cur.aggregates.filter((a) => !topologyAggs.has(a)), ...wanted.filter((a) => topologyAggs.has(a))]
      const same = next.length === cur.aggregates.length && next.every((a) => cur.aggregates.includes(a))
      if (!same)
        await client.put(path, {aggregates: next, resource_provider_generation: cur.resource_provider_generation}, {version: '1.19'})
      opts.onProgress?.(++done, total, `${done}/${total} hosts`)
    }, 10),
  )
  return {transport: backend.kind, plan, applied: true, writes: total}
}

/**
 * The --layout file is read, edited, applied (the old file as `previous`) and written back.
 * The edited layout is the whole topology: what the edit took out is emptied (prune).
 */
export async function plainEditLayout(
  backend: Backend,
  edit: (doc: Layout) => void,
  opts: LayoutEditOptions = {},
): Promise<LayoutEditResult> {
  const file = opts.files?.layout
  if (!file) throw usageError(NEEDS_LAYOUT)
  const before: LayoutDoc = fs.existsSync(file) ? readLayoutFile(file) : {}
  const doc = structuredClone(layoutBody(before))
  edit(doc)
  const res = await plainApplyLayout(backend, doc, {
    dryRun: opts.dryRun,
    previous: before,
    prune: true,
    concurrency: opts.concurrency,
    onProgress: opts.onProgress,
  })
  if (!opts.dryRun)
    fs.writeFileSync(file, layoutYaml(doc, ['placemat topology layout (plain Placement: this file is the record of the names)']))
  return {...res, layout: doc}
}

/** Listed providers with the aggregates (among those read) each is a member of. */
function withAggregates(providers: Awaited<ReturnType<typeof listProviders>>, members: Map<string, string[]>) {
  const aggs = new Map<string, string[]>()
  for (const [agg, list] of members) for (const u of list) aggs.set(u, [...(aggs.get(u) ?? []), agg])
  return providers.map((p) => ({...p, aggregates: aggs.get(p.uuid) ?? []}))
}
