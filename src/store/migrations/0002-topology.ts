/**
 * Migration 0002_topology (never edited once released).
 * Racks, rows and rooms: named aggregates with a level and the node that contains them.
 */
import type {Kysely, Migration} from 'kysely'

export const topology: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('topology_nodes')
      .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('level', 'varchar(16)', (c) => c.notNull())
      .addColumn('parent_uuid', 'varchar(36)')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('topology_nodes_level_name', ['level', 'name'])
      .execute()
  },
}
