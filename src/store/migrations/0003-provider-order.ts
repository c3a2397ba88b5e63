/**
 * Migration 0003_provider_order (never edited once released).
 * Creation order as a column: PostgreSQL has no rowid, and rewrites rows it updates
 * elsewhere in the table, so listing order must not depend on where rows sit.
 */
import {type Kysely, type Migration, sql} from 'kysely'

export const providerOrder: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('resource_providers').addColumn('seq', 'bigint').execute()
    const rows = await db
      .selectFrom('resource_providers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst()
    // Rows exist only in SQLite files made before this migration: keep their rowid order.
    if (Number(rows?.n ?? 0) > 0) await sql`update resource_providers set seq = rowid`.execute(db)
  },
}
