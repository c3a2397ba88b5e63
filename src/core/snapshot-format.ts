/**
 * The snapshot format: what `placemat export` writes and `placemat import` reads, and what a
 * Placement database is read as (store/placement-db/reader.ts). Types and constants only.
 *
 * The snapshot is plain data, in a fixed order, so export -> import -> export gives the
 * same text:
 *
 *   placemat_snapshot: 1                   # 2 when it carries any of placemat's own parts (below)
 *   resource_classes: [CUSTOM_...]         # custom classes (standard ones are built in)
 *   traits: [CUSTOM_...]                   # custom traits
 *   providers:                             # parents before children; roots by uuid, children by uuid
 *     - uuid, name, generation, parent_provider_uuid,
 *       inventories: {CLASS: {total, reserved, min_unit, max_unit, step_size, allocation_ratio}},  # in its order
 *       traits: [sorted], aggregates: [sorted],
 *       disabled_reason?                   # placemat's: why the host is out of service (GET
 *                                          # /placemat/v1/hosts/{uuid}); only when it has one
 *   consumers:                             # by uuid
 *     - uuid, project_id, user_id, consumer_type (null: none), generation,
 *       allocations: {provider uuid: {CLASS: amount}}
 *   topology:                              # placemat's racks, rows and rooms (GET /placemat/v1/topology/layout)
 *     generation: N
 *     nodes:                               # rooms, rows, racks, each by name
 *       - level, name, parent (the name of its row or room; null: standing alone)
 *   groups:                                # placement groups by name (GET /placemat/v1/groups)
 *     - name, policy, level, max_per?, max_skew?, soft, generation, created_at, updated_at,
 *       members: [consumer uuids, in the order they joined]
 *   moved_consumers:                       # by uuid (GET /placemat/v1/moves): consumers that gave
 *     - uuid, moved_to, project_id,        # their allocations away (claim move) and hold nothing
 *       user_id, consumer_type, moved_at   # since: what they were
 *   aggregate_names:                       # by name (GET /placemat/v1/aggregates, its names): the
 *     - name, uuid                         # names apply files gave aggregates
 *
 * Which hosts are in which rack, row and room is carried by the hosts' aggregates (a node's
 * aggregate uuid is fixed by its level and name). A snapshot without topology, groups, moved
 * consumers, hosts' disabled reasons or aggregate names is version 1, as placemat wrote before
 * it carried them; one with any of them is version 2, which a placemat that cannot load them
 * refuses rather than drop them.
 *
 * Not carried: created/updated times of providers, consumers, racks, rows and rooms and
 * aggregate names (the API does not show them) and consumers that hold no allocations (the API
 * cannot see them).
 */
import type {GroupLevel, GroupPolicy} from './groups.js'
import type {MovedRecord} from './consumer-moves.js'
import type {Inventory, TopologyLevel} from './state/state.js'

/** The version of a snapshot with placemat's own sections; one without them is version 1. */
export const SNAPSHOT_VERSION = 2
/** The versions `import` reads. */
export const SNAPSHOT_VERSIONS: readonly number[] = [1, 2]

export interface SnapshotProvider {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid: string | null
  inventories: Record<string, Inventory>
  traits: string[]
  aggregates: string[]
  /** Why the host is out of service (placemat's own); absent when it has no reason. */
  disabled_reason?: string
}

export interface SnapshotConsumer {
  uuid: string
  project_id: string
  user_id: string
  consumer_type: string | null
  generation: number
  allocations: Record<string, Record<string, number>>
}

/** A rack, row or room; `parent` is the name of its row (a rack's) or room (a row's). */
export interface SnapshotNode {
  level: TopologyLevel
  name: string
  parent: string | null
}

export interface SnapshotTopology {
  generation: number
  nodes: SnapshotNode[]
}

export interface SnapshotGroup {
  name: string
  policy: GroupPolicy
  level: GroupLevel
  max_per?: number
  max_skew?: number
  soft: boolean
  generation: number
  created_at: string
  updated_at: string
  /** Consumer uuids, in the order they joined. */
  members: string[]
}

/** A name an apply file gave an aggregate. */
export interface SnapshotAggregateName {
  name: string
  uuid: string
}

export interface Snapshot {
  placemat_snapshot: number
  resource_classes: string[]
  traits: string[]
  providers: SnapshotProvider[]
  consumers: SnapshotConsumer[]
  topology?: SnapshotTopology
  groups?: SnapshotGroup[]
  moved_consumers?: MovedRecord[]
  aggregate_names?: SnapshotAggregateName[]
}

/** What placemat keeps beyond Placement's records: absent on plain Placement. */
export interface PlacematParts {
  topology?: SnapshotTopology
  groups?: SnapshotGroup[]
  moved_consumers?: MovedRecord[]
  aggregate_names?: SnapshotAggregateName[]
}

export const TOPOLOGY_LEVELS: readonly TopologyLevel[] = ['room', 'row', 'rack']

/** A snapshot file read item by item, each checked on its own as it comes. */
export type SnapshotItem =
  | {kind: 'resource_class'; name: string}
  | {kind: 'trait'; name: string}
  | {kind: 'provider'; provider: SnapshotProvider}
  | {kind: 'consumer'; consumer: SnapshotConsumer}
  | {kind: 'topology'; topology: SnapshotTopology}
  | {kind: 'group'; group: SnapshotGroup}
  | {kind: 'moved'; moved: MovedRecord}
  | {kind: 'aggregate_name'; name: SnapshotAggregateName}
