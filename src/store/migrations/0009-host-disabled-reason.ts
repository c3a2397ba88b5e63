/**
 * Migration 0009_host_disabled_reason (never edited once released).
 * Why a host is out of service (placemat host disable --reason): kept with the host, beside
 * the COMPUTE_STATUS_DISABLED trait Placement keeps.
 */
import type {Kysely, Migration} from 'kysely'

export const hostDisabledReason: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('resource_providers').addColumn('disabled_reason', 'varchar(255)').execute()
  },
}
