/**
 * The records placemat's own API answers (GET /placemat/v1/providers and /consumers) and
 * the command line reads, from placemat or pieced together from Placement's standard API:
 * one declaration for the daemon that renders them and the clients that read them.
 */
import type {Consumer, Inventory, Provider} from './state/state.js'

/** A provider as GET /resource_providers lists it (and GET /resource_providers/{uuid} answers it). */
export interface ListedProvider {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid?: string | null
  root_provider_uuid?: string
}

/** A provider with everything about it, as one record. */
export interface ProviderRecord {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid: string | null
  root_provider_uuid: string
  inventories: Record<string, Inventory>
  usages: Record<string, number>
  traits: string[]
  aggregates: string[]
}

/** A consumer with its allocations; a plain Placement endpoint may not give the rest. */
export interface ConsumerRecord {
  uuid: string
  project_id?: string
  user_id?: string
  consumer_type?: string | null
  consumer_generation?: number | null
  /** ISO times; only a placemat endpoint reports them. */
  created_at?: string
  updated_at?: string
  allocations: Record<string, {resources: Record<string, number>}>
}

export function providerRecord(p: Provider): ProviderRecord {
  return {
    uuid: p.uuid,
    name: p.name,
    generation: p.generation,
    parent_provider_uuid: p.parent,
    root_provider_uuid: p.root,
    inventories: Object.fromEntries(p.inventories),
    usages: Object.fromEntries(p.usages),
    traits: [...p.traits],
    aggregates: [...p.aggregates],
  }
}

export function consumerRecord(c: Consumer): ConsumerRecord {
  return {
    uuid: c.uuid,
    project_id: c.project,
    user_id: c.user,
    consumer_type: c.type,
    consumer_generation: c.generation,
    created_at: new Date(c.createdAt).toISOString(),
    updated_at: new Date(c.updatedAt).toISOString(),
    allocations: Object.fromEntries([...c.allocations].map(([rp, amounts]) => [rp, {resources: Object.fromEntries(amounts)}])),
  }
}
