/**
 * Migration 0011_change_images (never edited once released).
 * What each small write transaction left (its rows, as JSON), beside its keys in the journal:
 * another node applies it from this one row, without reading the rows it names (store/journal.ts).
 * PostgreSQL also gets the check of a keyed write (Backend.commitKeyed) as a function, so that
 * its plan is made once per connection, not with every write. Its kinds and part are
 * store/journal.ts's KEY.provider, KEY.consumer and PART.generation.
 */
import {type Kysely, type Migration, PostgresAdapter, sql} from 'kysely'
import {isMysql} from './dialect.js'

export const changeImages: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('placemat_change_images')
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      // MariaDB's text holds 64 KiB; an image may be up to a MiB of characters.
      .addColumn('body', isMysql(db) ? sql`mediumtext` : 'text', (c) => c.notNull())
      .execute()
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
    await sql`create or replace function placemat_keyed_check(pos bigint, providers text[], consumers text[], span bigint) returns void language plpgsql as $pm$
      declare c bigint; f bigint;
      begin
        select coalesce(max(case when key = 'change_counter' then cast(value as bigint) end), 0),
               coalesce(max(case when key = 'journal_floor' then cast(value as bigint) end), 0)
          into c, f from placemat_meta where key in ('change_counter', 'journal_floor');
        if c = pos then return; end if;
        if f > pos or c - pos > span
           or (select count(*) from placemat_change_images where seq > pos and seq <= c) <> c - pos
           or exists (select 1 from placemat_changes where seq > pos and seq <= c and (kind not in ('p', 'c')
                      or (kind = 'p' and (parts not in (0, 2) or key = any(providers))) or (kind = 'c' and key = any(consumers)))) then
          raise exception using errcode = 'PM409', message = 'a change since touched what this write depends on';
        end if;
      end $pm$`.execute(db)
  },
}
