/**
 * Migration 0013_keyed_check_v2 (never edited once released).
 * An image's format (store/journal.ts IMAGE_FORMAT) in a column of its own, so that a node is never
 * handed an image it cannot read: 1, the JSON every release so far writes, is the default, which
 * placemat 0.1.0's inserts (they name seq and body) get. PostgreSQL: the keyed check v2, which
 * this release calls, also refuses a write whose window holds an image of a format newer than
 * its writer reads (the write is retried under the lock, where the rows are read instead).
 * v1 (0011) stays for the nodes of 0.1.0 until the contract (0014).
 */
import {type Kysely, type Migration, PostgresAdapter, sql} from 'kysely'

export const keyedCheckV2: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('placemat_change_images')
      .addColumn('format', 'integer', (c) => c.notNull().defaultTo(1))
      .execute()
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
    await sql`create or replace function placemat_keyed_check_v2(pos bigint, providers text[], consumers text[], span bigint, formats integer) returns void language plpgsql as $pm$
      declare c bigint; f bigint;
      begin
        select coalesce(max(case when key = 'change_counter' then cast(value as bigint) end), 0),
               coalesce(max(case when key = 'journal_floor' then cast(value as bigint) end), 0)
          into c, f from placemat_meta where key in ('change_counter', 'journal_floor');
        if c = pos then return; end if;
        if f > pos or c - pos > span
           or (select count(*) from placemat_change_images where seq > pos and seq <= c and format <= formats) <> c - pos
           or exists (select 1 from placemat_changes where seq > pos and seq <= c and (kind not in ('p', 'c')
                      or (kind = 'p' and (parts not in (0, 2) or key = any(providers))) or (kind = 'c' and key = any(consumers)))) then
          raise exception using errcode = 'PM409', message = 'a change since touched what this write depends on';
        end if;
      end $pm$`.execute(db)
  },
}
