/**
 * Migration 0006_change_journal (never edited once released).
 * The change journal: what each write changed, so other processes read only that
 * (store/journal.ts). The counter and the floor start where the database is: whoever loaded it is
 * current at 0.
 */
import type {Kysely, Migration} from 'kysely'
import {isMysql} from './dialect.js'

export const changeJournal: Migration = {
  async up(db: Kysely<any>) {
    // MariaDB: a key of its own, as Galera replicates only tables with a primary key (a table
    // new there, so no released database changes).
    const mysql = isMysql(db)
    await db.schema
      .createTable('placemat_changes')
      .$call((t) => (mysql ? t.addColumn('id', 'bigint', (c) => c.autoIncrement().primaryKey()) : t))
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'varchar(4)', (c) => c.notNull())
      .addColumn('key', 'varchar(255)', (c) => c.notNull())
      .addColumn('parts', 'integer', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('placemat_changes_seq').on('placemat_changes').columns(['seq', 'kind']).execute()
    // PostgreSQL loads providers in seq order.
    await db.schema.createIndex('resource_providers_seq').on('resource_providers').column('seq').execute()
    const have = await db.selectFrom('placemat_meta').select('key').where('key', 'in', ['change_counter', 'journal_floor']).execute()
    const keys = new Set(have.map((r: {key: string}) => r.key))
    const counter = await db.selectFrom('placemat_meta').select('value').where('key', '=', 'change_counter').executeTakeFirst()
    if (!keys.has('change_counter')) await db.insertInto('placemat_meta').values({key: 'change_counter', value: '0'}).execute()
    // Nothing before this point is journalled: a process behind it loads everything.
    const floor = String(Number(counter?.value ?? 0))
    if (!keys.has('journal_floor')) await db.insertInto('placemat_meta').values({key: 'journal_floor', value: floor}).execute()
  },
}
