/** MariaDB's checks of a write, in the SQL the backend (mysql-backend.ts) sends with it. */
import mysql from 'mysql2'
import {GUARD_RANGE, IMAGE_FORMAT, KEY, type JournalRow} from './journal-keys.js'

/**
 * The checks of a write in one round trip (Session.commitIfAt, commitKeyed): compound statements,
 * run by the server after the counter's row is locked, that end the round trip with
 * SIGNAL (error 1644, this text) when another process committed what the write depends on. What
 * the round trip wrote before is rolled back by the session; the lock was held for the server's
 * work alone.
 */
const MOVED_TEXT = 'placemat: the change counter moved'
const SIGNALED = 1644
export const moved = (err: unknown) => (err as {errno?: unknown}).errno === SIGNALED && String((err as Error).message).includes(MOVED_TEXT)
const refuse = `signal sqlstate '45000' set message_text = '${MOVED_TEXT}'`

/** commitIfAt's check: the counter is still `position`. */
export const counterCheck = (position: number) =>
  `begin not atomic if coalesce((select cast("value" as signed) from placemat_meta where "key" = 'change_counter'), 0) <> ${position} then ${refuse}; end if; end`

/** A list of keys as an SQL list (never empty: `in (NULL)` matches nothing). */
const sqlList = (keys: readonly JournalRow[], kind: string) => {
  const list = keys.filter((k) => k.kind === kind).map((k) => mysql.escape(k.key))
  return list.length ? list.join(', ') : 'NULL'
}

/** commitKeyed's check, placemat_keyed_check_v2's (migrations/0013-keyed-check-v2.ts) in MariaDB's words: see postgres-backend.ts keyedGuard. */
export function keyedCheck(position: number, keys: readonly JournalRow[]): string {
  const p = position
  return `begin not atomic
  declare c bigint; declare f bigint;
  select coalesce(max(case when "key" = 'change_counter' then cast("value" as signed) end), 0),
         coalesce(max(case when "key" = 'journal_floor' then cast("value" as signed) end), 0)
    into c, f from placemat_meta where "key" in ('change_counter', 'journal_floor');
  if c <> ${p} and (f > ${p} or c - ${p} > ${GUARD_RANGE}
     or (select count(*) from placemat_change_images where seq > ${p} and seq <= c and format <= ${IMAGE_FORMAT}) <> c - ${p}
     or exists (select 1 from placemat_changes where seq > ${p} and seq <= c and (kind not in ('p', 'c')
        or (kind = 'p' and (parts not in (0, 2) or "key" in (${sqlList(keys, KEY.provider)})))
        or (kind = 'c' and "key" in (${sqlList(keys, KEY.consumer)}))))) then
    ${refuse};
  end if;
end`
}
