/**
 * Migration 0010_aggregate_names (never edited once released).
 * The names an apply file gives aggregates (its `aggregates:` map and the names in providers'
 * lists): Placement keeps only the uuids, so listings could not show the names again.
 */
import type {Kysely, Migration} from 'kysely'

export const aggregateNames: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('aggregate_names')
      .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
  },
}
