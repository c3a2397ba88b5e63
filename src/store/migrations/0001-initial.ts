/**
 * Migration 0001_initial (never edited once released).
 * The first schema: Placement's tables (resource classes, traits, providers, inventories,
 * provider traits and aggregates, consumers, allocations) and placemat_meta.
 */
import {type Kysely, type Migration, sql} from 'kysely'

export const initial: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('resource_classes')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('traits')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('resource_providers')
      .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
      .addColumn('name', 'varchar(200)', (c) => c.notNull().unique())
      .addColumn('generation', 'integer', (c) => c.notNull())
      .addColumn('parent_uuid', 'varchar(36)')
      .addColumn('root_uuid', 'varchar(36)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('resource_providers_root').on('resource_providers').column('root_uuid').execute()
    await db.schema
      .createTable('inventories')
      .addColumn('provider_uuid', 'varchar(36)', (c) => c.notNull())
      .addColumn('resource_class', 'varchar(255)', (c) => c.notNull())
      .addColumn('total', 'integer', (c) => c.notNull())
      .addColumn('reserved', 'integer', (c) => c.notNull())
      .addColumn('min_unit', 'integer', (c) => c.notNull())
      .addColumn('max_unit', 'integer', (c) => c.notNull())
      .addColumn('step_size', 'integer', (c) => c.notNull())
      .addColumn('allocation_ratio', 'double precision', (c) => c.notNull())
      .addPrimaryKeyConstraint('inventories_pk', ['provider_uuid', 'resource_class'])
      .execute()
    await db.schema
      .createTable('provider_traits')
      .addColumn('provider_uuid', 'varchar(36)', (c) => c.notNull())
      .addColumn('trait', 'varchar(255)', (c) => c.notNull())
      .addPrimaryKeyConstraint('provider_traits_pk', ['provider_uuid', 'trait'])
      .execute()
    await db.schema
      .createTable('provider_aggregates')
      .addColumn('provider_uuid', 'varchar(36)', (c) => c.notNull())
      .addColumn('aggregate_uuid', 'varchar(36)', (c) => c.notNull())
      .addPrimaryKeyConstraint('provider_aggregates_pk', ['provider_uuid', 'aggregate_uuid'])
      .execute()
    await db.schema
      .createTable('consumers')
      .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
      .addColumn('project_id', 'varchar(255)', (c) => c.notNull())
      .addColumn('user_id', 'varchar(255)', (c) => c.notNull())
      .addColumn('consumer_type', 'varchar(255)')
      .addColumn('generation', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('allocations')
      .addColumn('consumer_uuid', 'varchar(36)', (c) => c.notNull())
      .addColumn('provider_uuid', 'varchar(36)', (c) => c.notNull())
      .addColumn('resource_class', 'varchar(255)', (c) => c.notNull())
      .addColumn('used', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('allocations_pk', ['consumer_uuid', 'provider_uuid', 'resource_class'])
      .execute()
    await db.schema.createIndex('allocations_provider').on('allocations').column('provider_uuid').execute()
    await db.schema
      .createTable('placemat_meta')
      .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute()
    await sql`select 1`.execute(db)
  },
}
