/**
 * Migration 0014_retire_keyed_check_v1 (never edited once released).
 * The contract of 0.2.0: the keyed check v1 is retired (no node of this release calls it), and
 * the database records 0.2.0 as the oldest release that may serve it. placemat 0.1.0 cannot read
 * that record; what it can meet is v1, now a refusal naming why, raised as SQLSTATE 57P03
 * (cannot_connect_now), which 0.1.0 takes for an unavailable database: its allocation writes
 * answer 503, its health turns 503 (a balancer takes the node out), and its log says why.
 */
import {type Kysely, type Migration, PostgresAdapter, sql} from 'kysely'
import {recordMinRelease} from '../release.js'

export const retireKeyedCheckV1: Migration = {
  async up(db: Kysely<any>) {
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`create or replace function placemat_keyed_check(pos bigint, providers text[], consumers text[], span bigint) returns void language plpgsql as $pm$
        begin
          raise exception using errcode = '57P03',
            message = 'this database was contracted by placemat 0.2.0 (0014_retire_keyed_check_v1): it needs placemat 0.2.0 or later, and this node runs an older release; upgrade it';
        end $pm$`.execute(db)
    }
    await recordMinRelease(db, {release: '0.2.0', migration: '0014_retire_keyed_check_v1'})
  },
}
