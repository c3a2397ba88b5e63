/**
 * Migration 0005_placement_groups (never edited once released).
 * Placement groups: named sets of consumers with a rule on where they may be.
 */
import type {Kysely, Migration} from 'kysely'

export const placementGroups: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('placement_groups')
      .addColumn('name', 'varchar(200)', (c) => c.primaryKey())
      .addColumn('policy', 'varchar(16)', (c) => c.notNull())
      .addColumn('level', 'varchar(16)', (c) => c.notNull())
      .addColumn('max_per', 'integer')
      .addColumn('max_skew', 'integer')
      .addColumn('soft', 'integer', (c) => c.notNull())
      .addColumn('generation', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('placement_group_members')
      .addColumn('group_name', 'varchar(200)', (c) => c.notNull())
      .addColumn('consumer_uuid', 'varchar(36)', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('placement_group_members_pk', ['group_name', 'consumer_uuid'])
      .execute()
  },
}
