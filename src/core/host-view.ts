/**
 * One host described in full (`placemat host describe`, GET /placemat/v1/hosts/{uuid}/description):
 * what `host show` says of it (in service or not and why, where it is, capacity and usage of its
 * tree), and besides each provider of its tree with its inventories, usage, traits and
 * aggregates (named: racks, rows and rooms, and the names apply files gave), and each consumer
 * holding resources there with what it holds there and its placement groups. Decided here for
 * every transport; on plain Placement groups and names are unknown (null).
 */
import {aggregateLabel, type NamedAggregate} from './aggregate-names.js'
import {compareAggregates} from './listing-order.js'
import {groupsByMember} from './consumer-list.js'
import {hostRecord, type HostRecord} from './host-status.js'
import {inventoryViews, type InventoryView} from './placement/inventories.js'
import type {State, TopologyLevel} from './state/state.js'

/** An aggregate of a provider, with its name when placemat has one (a rack, row or room, or an apply file's). */
export interface AggregateRef {
  uuid: string
  name: string | null
  level: TopologyLevel | null
  /** "rack k1", an apply file's name, or null. */
  label: string | null
}

export interface ProviderView {
  uuid: string
  name: string
  parent_provider_uuid: string | null
  generation: number
  inventories: Record<string, InventoryView>
  traits: string[]
  aggregates: AggregateRef[]
}

export interface HostConsumer {
  uuid: string
  project_id: string
  user_id: string
  consumer_type: string | null
  consumer_generation: number
  /** What it holds in this host's tree, per class. */
  resources: Record<string, number>
  /** Its placement groups, by name; null where groups are unknown. */
  groups: string[] | null
}

export interface HostDescription extends Omit<HostRecord, 'consumers'> {
  /** The host's own traits and aggregates (its root provider's). */
  traits: string[]
  aggregates: AggregateRef[]
  /** Every provider of its tree, the host first, then depth-first. */
  providers: ProviderView[]
  consumers: HostConsumer[]
}

export interface DescribeOptions {
  /** Whether placement groups are known (placemat). */
  groups: boolean
}

/** The aggregate named as placemat names it: the topology's name first, else an apply file's. */
export function aggregateRef(s: State, uuid: string): AggregateRef {
  const node = s.topology.get(uuid)
  const named: Pick<NamedAggregate, 'name' | 'level'> | undefined = node
    ? {name: node.name, level: node.level}
    : s.aggregateNames.has(uuid)
      ? {name: s.aggregateNames.get(uuid)!.name, level: null}
      : undefined
  return {uuid, name: named?.name ?? null, level: named?.level ?? null, label: named ? aggregateLabel(named) : null}
}

/** 404 for no such provider, 400 for one that is not a host (hostRecord's own checks). */
export function describeHost(s: State, uuid: string, opts: DescribeOptions = {groups: true}): HostDescription {
  const {consumers: held, ...record} = hostRecord(s, uuid)
  const host = s.providers.get(uuid)!
  const tree = s.subtree(uuid)
  const providers: ProviderView[] = tree.map((p) => ({
    uuid: p.uuid,
    name: p.name,
    parent_provider_uuid: p.parent,
    generation: p.generation,
    inventories: inventoryViews(p),
    traits: [...p.traits].sort(),
    aggregates: [...p.aggregates].map((a) => aggregateRef(s, a)).sort(compareAggregates),
  }))
  const memberships = opts.groups ? groupsByMember(s) : undefined
  const consumers: HostConsumer[] = held.flatMap((c) => {
    const consumer = s.consumers.get(c)
    if (!consumer) return []
    const resources: Record<string, number> = {}
    for (const p of tree) for (const [rc, n] of p.allocations.get(c) ?? []) resources[rc] = (resources[rc] ?? 0) + n
    return [
      {
        uuid: c,
        project_id: consumer.project,
        user_id: consumer.user,
        consumer_type: consumer.type,
        consumer_generation: consumer.generation,
        resources,
        groups: memberships ? (memberships.get(c) ?? []) : null,
      },
    ]
  })
  return {...record, traits: [...host.traits].sort(), aggregates: providers[0].aggregates, providers, consumers}
}
