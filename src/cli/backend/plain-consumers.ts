/**
 * Consumers on plain Placement, made by the core as placemat makes them (core/consumer-list.ts)
 * from the standard API: the providers' allocations (of the filter's tree, or of every
 * provider), then each consumer's allocations, project, user and type. Placement keeps no
 * placement groups (their groups are null) and no names of racks, rows and rooms.
 */
import type {PlacementClient} from '../../client/client.js'
import {mapLimit} from '../../client/map-limit.js'
import {checkConsumerFilter, consumerListing, consumerView, type ConsumerFilter, type ConsumerView} from '../../core/consumer-list.js'
import {SHARES_VIA_AGGREGATE} from '../../core/host.js'
import {stateFromSnapshot} from '../../core/snapshot.js'
import type {ConsumerRecord, ListedProvider} from '../../core/wire.js'
import {usageError} from '../failure.js'
import {unknownConsumer} from './consumer-lookup.js'
import type {Backend, ConsumerList} from './backend.js'
import {listProviders, sharingProviders} from './standard-reads.js'

/** Plain Placement asked for a group's members. */
export const NO_GROUPS_ON_PLAIN =
  'placement groups are kept by placemat (a daemon or --db): plain OpenStack Placement has none to list consumers by'

const CONCURRENCY = 16

export async function plainConsumers(backend: Backend, filter: ConsumerFilter): Promise<ConsumerList> {
  if (filter.group !== undefined) throw usageError(NO_GROUPS_ON_PLAIN)
  const [providers, sharing] = await Promise.all([listProviders(backend.client), sharingProviders(backend.client)])
  const tree = filter.inTree ? treeOf(providers, filter.inTree) : providers
  const held = new Set<string>()
  await mapLimit(tree, CONCURRENCY, async (p) => {
    const body = await backend.client.get<{allocations: Record<string, unknown>}>(`/resource_providers/${p.uuid}/allocations`)
    for (const c of Object.keys(body.allocations)) held.add(c)
  })
  const consumers = await mapLimit([...held].sort(), CONCURRENCY, (c) => readConsumer(backend.client, c))
  const s = stateFromSnapshot({providers: providerRecords(providers, sharing), consumers})
  checkConsumerFilter(s, filter)
  return {consumers: consumerListing(s, filter, {groups: false}), groupsKept: false}
}

export async function plainConsumer(backend: Backend, uuid: string): Promise<ConsumerView> {
  const [providers, sharing, record] = await Promise.all([
    listProviders(backend.client),
    sharingProviders(backend.client),
    readConsumer(backend.client, uuid),
  ])
  const s = stateFromSnapshot({
    providers: providerRecords(providers, sharing),
    consumers: Object.keys(record.allocations).length ? [record] : [],
  })
  const view = consumerView(s, uuid, {groups: false})
  if (!view) throw unknownConsumer(uuid)
  return view
}

/** GET /allocations/{consumer} as a record. */
async function readConsumer(client: PlacementClient, uuid: string): Promise<ConsumerRecord> {
  const body = await client.get<Omit<ConsumerRecord, 'uuid'>>(`/allocations/${uuid}`)
  return {
    uuid,
    project_id: body.project_id,
    user_id: body.user_id,
    consumer_type: body.consumer_type,
    consumer_generation: body.consumer_generation,
    allocations: body.allocations ?? {},
  }
}

/** The providers of the tree under `top` (itself included). */
function treeOf(providers: ListedProvider[], top: string): ListedProvider[] {
  const children = new Map<string, ListedProvider[]>()
  for (const p of providers) {
    const parent = p.parent_provider_uuid ?? null
    if (parent) children.set(parent, [...(children.get(parent) ?? []), p])
  }
  const out: ListedProvider[] = []
  const walk = (p: ListedProvider) => {
    out.push(p)
    for (const c of children.get(p.uuid) ?? []) walk(c)
  }
  const root = providers.find((p) => p.uuid === top)
  if (root) walk(root)
  return out
}

/** Listed providers as snapshot records: names, trees and which share, what deciding their hosts needs. */
const providerRecords = (providers: ListedProvider[], sharing: Set<string>) =>
  providers.map((p) => ({
    ...p,
    parent_provider_uuid: p.parent_provider_uuid ?? null,
    root_provider_uuid: p.root_provider_uuid ?? p.uuid,
    traits: sharing.has(p.uuid) ? [SHARES_VIA_AGGREGATE] : [],
  }))
