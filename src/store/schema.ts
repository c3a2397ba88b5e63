import type {Migration} from 'kysely'
import {RELEASE} from './release.js'
import {initial} from './migrations/0001-initial.js'
import {topology} from './migrations/0002-topology.js'
import {providerOrder} from './migrations/0003-provider-order.js'
import {oneNamespace} from './migrations/0004-one-namespace.js'
import {placementGroups} from './migrations/0005-placement-groups.js'
import {changeJournal} from './migrations/0006-change-journal.js'
import {osTraits390} from './migrations/0007-os-traits-3-9-0.js'
import {movedConsumers} from './migrations/0008-moved-consumers.js'
import {hostDisabledReason} from './migrations/0009-host-disabled-reason.js'
import {aggregateNames} from './migrations/0010-aggregate-names.js'
import {changeImages} from './migrations/0011-change-images.js'
import {nodes} from './migrations/0012-nodes.js'
import {keyedCheckV2} from './migrations/0013-keyed-check-v2.js'
import {retireKeyedCheckV1} from './migrations/0014-retire-keyed-check-v1.js'

/** Row types of the database, as kysely sees them. Times are epoch milliseconds. */
export interface Database {
  resource_classes: {id: number; name: string; created_at: number; updated_at: number}
  traits: {id: number; name: string; created_at: number; updated_at: number}
  resource_providers: {
    uuid: string
    name: string
    generation: number
    parent_uuid: string | null
    root_uuid: string
    created_at: number
    updated_at: number
    /** Creation order (0003): the order providers are listed and searched in. */
    seq: number
    /** Why the host is out of service (0009; core/host-status.ts): placemat's own, null for none. */
    disabled_reason?: string | null
  }
  inventories: {
    provider_uuid: string
    resource_class: string
    total: number
    reserved: number
    min_unit: number
    max_unit: number
    step_size: number
    allocation_ratio: number
  }
  provider_traits: {provider_uuid: string; trait: string}
  provider_aggregates: {provider_uuid: string; aggregate_uuid: string}
  consumers: {
    uuid: string
    project_id: string
    user_id: string
    consumer_type: string | null
    generation: number
    created_at: number
    updated_at: number
  }
  allocations: {consumer_uuid: string; provider_uuid: string; resource_class: string; used: number}
  placemat_meta: {key: string; value: string}
  topology_nodes: {
    uuid: string
    name: string
    level: string
    parent_uuid: string | null
    created_at: number
    updated_at: number
  }
  placement_groups: {
    name: string
    policy: string
    level: string
    max_per: number | null
    max_skew: number | null
    soft: number
    generation: number
    created_at: number
    updated_at: number
  }
  /** `seq`: the order members joined. */
  placement_group_members: {group_name: string; consumer_uuid: string; seq: number}
  /** The change journal (journal.ts): the keys each write transaction changed, under its sequence number. */
  placemat_changes: {seq: number; kind: string; key: string; parts: number}
  /** Consumers that gave their allocations to another (core/consumer-moves.ts): who they were, and to whom. */
  moved_consumers: {uuid: string; moved_to: string; project_id: string; user_id: string; consumer_type: string | null; moved_at: number}
  /** Names apply files gave aggregates (0010; core/aggregate-names.ts): one name an aggregate, one aggregate a name. */
  aggregate_names: {uuid: string; name: string; updated_at: number}
  /** The rows each small write transaction left, as JSON (0011; journal.ts): followers apply them without reading the tables. */
  placemat_change_images: {
    seq: number
    body: string
    /** How `body` is laid out (0013): IMAGE_FORMAT for the JSON every release so far writes; absent from 0.1.0's inserts (the default). */
    format?: number
  }
  /** The nodes serving the database (0012; node-registry.ts): each daemon's release, the schema it serves, where it runs, its last beat. */
  placemat_nodes: {
    id: string
    release: string
    schema_from: string
    schema_to: string
    host: string
    pid: number
    url: string
    started_at: number
    beat_at: number
  }
}

/**
 * Each table's primary key, as the migrations make it: MariaDB keeps rows in its order, so a load
 * there reads them in it, and a follower reads a key's rows again in the same order.
 */
export const PRIMARY_KEYS: Record<keyof Database, readonly string[]> = {
  resource_classes: ['id'],
  traits: ['id'],
  resource_providers: ['uuid'],
  inventories: ['provider_uuid', 'resource_class'],
  provider_traits: ['provider_uuid', 'trait'],
  provider_aggregates: ['provider_uuid', 'aggregate_uuid'],
  consumers: ['uuid'],
  allocations: ['consumer_uuid', 'provider_uuid', 'resource_class'],
  placemat_meta: ['key'],
  topology_nodes: ['uuid'],
  placement_groups: ['name'],
  placement_group_members: ['group_name', 'consumer_uuid'],
  placemat_changes: ['id'],
  moved_consumers: ['uuid'],
  aggregate_names: ['uuid'],
  placemat_change_images: ['seq'],
  placemat_nodes: ['id'],
}

/**
 * Schema migrations, in order, one a file (migrations/NNNN-name.ts). The map is static so a
 * bundled build carries them; new migrations are appended with the next number and never edited
 * once released. Each key is the name kysely records in kysely_migration: never changed.
 */
export const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_topology': topology,
  '0003_provider_order': providerOrder,
  '0004_one_namespace': oneNamespace,
  '0005_placement_groups': placementGroups,
  '0006_change_journal': changeJournal,
  '0007_os_traits_3_9_0': osTraits390,
  '0008_moved_consumers': movedConsumers,
  '0009_host_disabled_reason': hostDisabledReason,
  '0010_aggregate_names': aggregateNames,
  '0011_change_images': changeImages,

  // ---- placemat 0.2.0: two expands, then its contract (PHASES) ----
  '0012_nodes': nodes,
  '0013_keyed_check_v2': keyedCheckV2,
  '0014_retire_keyed_check_v1': retireKeyedCheckV1,
}

/** The schema placemat 0.1.0 serves: the migrations up to it are the baseline of the expand/contract contract. */
export const BASELINE = '0011_change_images'

/**
 * Each migration after the baseline: the release that brought it, and its phase. An expand is
 * additive: every node of the release before keeps serving the database, and what those nodes
 * write reads right here. A contract is what only its release and later can live with: it
 * records that release as the oldest that may serve (placemat_meta min_release). A release's
 * contracts come after its expands; its code serves the database before and after them.
 */
export const PHASES: Record<string, {release: string; phase: 'expand' | 'contract'}> = {
  '0012_nodes': {release: '0.2.0', phase: 'expand'},
  '0013_keyed_check_v2': {release: '0.2.0', phase: 'expand'},
  '0014_retire_keyed_check_v1': {release: '0.2.0', phase: 'contract'},
}

export const LATEST_MIGRATION = Object.keys(migrations).sort().at(-1)!

/** This release's range: the oldest schema it serves (its last expand) and its newest migration. */
export const SCHEMA_RANGE = {
  from:
    Object.keys(PHASES)
      .filter((m) => PHASES[m].release === RELEASE && PHASES[m].phase === 'expand')
      .sort()
      .at(-1) ?? BASELINE,
  to: LATEST_MIGRATION,
}
