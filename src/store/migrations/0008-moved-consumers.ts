/**
 * Migration 0008_moved_consumers (never edited once released).
 * What a consumer was when it gave its allocations away (claim move), while it holds nothing:
 * Placement deletes its record, and claiming it again or moving them back needs its project,
 * user and type.
 */
import type {Kysely, Migration} from 'kysely'

export const movedConsumers: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('moved_consumers')
      .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
      .addColumn('moved_to', 'varchar(36)', (c) => c.notNull())
      .addColumn('project_id', 'varchar(255)', (c) => c.notNull())
      .addColumn('user_id', 'varchar(255)', (c) => c.notNull())
      .addColumn('consumer_type', 'varchar(255)')
      .addColumn('moved_at', 'bigint', (c) => c.notNull())
      .execute()
  },
}
