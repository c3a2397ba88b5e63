/**
 * OpenStack Placement's tables (placement/db/sqlalchemy/models.py), as kysely sees them, and the
 * schema versions placemat reads and writes: those of 8.0.0 and of the newest release, named by
 * their alembic revision (the newer one drops redundant indexes; the columns are the same).
 */

type Stamped = {created_at: string | Date | null; updated_at: string | Date | null}

export interface PlacementTables {
  alembic_version: {version_num: string}
  resource_classes: Stamped & {id: number; name: string}
  traits: Stamped & {id: number; name: string}
  resource_providers: Stamped & {
    id: number
    uuid: string
    name: string | null
    generation: number | null
    root_provider_id: number | null
    parent_provider_id: number | null
  }
  inventories: Stamped & {
    id: number
    resource_provider_id: number
    resource_class_id: number
    total: number
    reserved: number
    min_unit: number
    max_unit: number
    step_size: number
    allocation_ratio: number
  }
  resource_provider_traits: Stamped & {trait_id: number; resource_provider_id: number}
  placement_aggregates: Stamped & {id: number; uuid: string | null}
  resource_provider_aggregates: Stamped & {resource_provider_id: number; aggregate_id: number}
  projects: Stamped & {id: number; external_id: string}
  users: Stamped & {id: number; external_id: string}
  consumer_types: Stamped & {id: number; name: string}
  consumers: Stamped & {id: number; uuid: string; project_id: number; user_id: number; generation: number; consumer_type_id: number | null}
  allocations: Stamped & {id: number; resource_provider_id: number; consumer_id: string; resource_class_id: number; used: number}
}

/** Alembic head revision -> the Placement release whose schema it is. */
export const SUPPORTED_SCHEMAS: Record<string, string> = {
  '422ece571366': '8.0.0, releases 6.0.0 to 9.x',
  a082b8bb98d0: '15.0.0, releases 10.0.0 and later',
}

/** Custom resource classes start here; the standard ones have the ids of os-resource-classes' order. */
export const FIRST_CUSTOM_CLASS_ID = 10000
