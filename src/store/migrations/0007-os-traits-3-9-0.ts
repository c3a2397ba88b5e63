/**
 * Migration 0007_os_traits_3_9_0 (never edited once released).
 * os-traits 3.9.0: the traits a current nova-compute sets that 2.9.0 lacked. A new database gets
 * every standard trait when it is first opened (Store.ensureStandard); an older one gets these
 * here, and the counter and the floor move so that every process following it loads again.
 */
import {TRAITS_ADDED_SINCE_2_9_0} from '../../core/standard.js'
import type {Kysely, Migration} from 'kysely'

export const osTraits390: Migration = {
  async up(db: Kysely<any>) {
    const rows: Array<{name: string; id: number | string}> = await db.selectFrom('traits').select(['name', 'id']).execute()
    if (!rows.length) return
    const have = new Set(rows.map((r) => r.name))
    const missing = TRAITS_ADDED_SINCE_2_9_0.filter((t) => !have.has(t))
    if (!missing.length) return
    const now = Date.now()
    let id = rows.reduce((m, r) => Math.max(m, Number(r.id)), 0) + 1
    await db
      .insertInto('traits')
      .values(missing.map((name) => ({id: id++, name, created_at: now, updated_at: now})))
      .execute()
    const counter = await db.selectFrom('placemat_meta').select('value').where('key', '=', 'change_counter').executeTakeFirst()
    const next = String(Number(counter?.value ?? 0) + 1)
    for (const key of ['change_counter', 'journal_floor'])
      await db.updateTable('placemat_meta').set({value: next}).where('key', '=', key).execute()
  },
}
