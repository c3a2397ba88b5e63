/**
 * Migration 0012_nodes (never edited once released).
 * The nodes serving the database (store/node-registry.ts): each daemon registers its release, the
 * schema range it serves, host, pid and URL, and beats every few seconds, outside the journal.
 * A new table: placemat 0.1.0 never reads it.
 */
import type {Kysely, Migration} from 'kysely'

export const nodes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('placemat_nodes')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('release', 'varchar(64)', (c) => c.notNull())
      .addColumn('schema_from', 'varchar(255)', (c) => c.notNull())
      .addColumn('schema_to', 'varchar(255)', (c) => c.notNull())
      .addColumn('host', 'varchar(255)', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('url', 'varchar(1024)', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('beat_at', 'bigint', (c) => c.notNull())
      .execute()
  },
}
