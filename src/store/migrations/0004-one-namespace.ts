/**
 * Migration 0004_one_namespace (never edited once released).
 * Racks, rows and rooms join placemat's one namespace (uuid5 of "level:name" in the namespace
 * of apply files): each node's aggregate uuid changes, and so does every membership of it;
 * the providers whose aggregates changed get their generation bumped, as any aggregate write.
 */
import {NAMES_NAMESPACE, uuid5} from '../../core/uuids.js'
import type {Kysely, Migration} from 'kysely'

export const oneNamespace: Migration = {
  async up(db: Kysely<any>) {
    const nodes = await db.selectFrom('topology_nodes').select(['uuid', 'name', 'level']).execute()
    const moved = new Map<string, string>()
    for (const n of nodes) {
      const next = uuid5(`${n.level}:${n.name}`, NAMES_NAMESPACE)
      if (next !== n.uuid) moved.set(n.uuid, next)
    }
    const touched = new Set<string>()
    for (const [old, next] of moved) {
      await db.updateTable('topology_nodes').set({uuid: next}).where('uuid', '=', old).execute()
      await db.updateTable('topology_nodes').set({parent_uuid: next}).where('parent_uuid', '=', old).execute()
      for (const m of await db.selectFrom('provider_aggregates').select('provider_uuid').where('aggregate_uuid', '=', old).execute()) {
        touched.add(m.provider_uuid)
      }
      await db.updateTable('provider_aggregates').set({aggregate_uuid: next}).where('aggregate_uuid', '=', old).execute()
    }
    for (const uuid of touched) {
      await db
        .updateTable('resource_providers')
        .set((eb: any) => ({generation: eb('generation', '+', 1)}))
        .where('uuid', '=', uuid)
        .execute()
    }
  },
}
