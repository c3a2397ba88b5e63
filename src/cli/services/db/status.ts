/**
 * `placemat db status`: the database itself, its schema version, pending migrations by phase
 * (schema-contract.ts) and the nodes serving it (live-nodes.ts). All of this works on the
 * database directly, without a daemon, on a SQLite file, a PostgreSQL URL or a MariaDB one; the
 * checks of its data are check.ts's, the upgrade itself upgrade.ts's.
 */
import {sql} from 'kysely'
import {isAlive, readRecord} from '../../../daemon/control.js'
import {MIN_RELEASE_KEY, RELEASE, parseMinRelease, type MinRelease} from '../../../store/release.js'
import {judgeSchema} from '../../../store/schema-contract.js'
import {describeTarget, isDatabaseUrl, resolveTarget} from '../../../store/target.js'
import {executedMigrations, inspect, knownMigrations} from './inspect.js'
import {liveNodesOf, type LiveNodes} from './live-nodes.js'

/** Exit codes of the db commands (besides 0 ok, 1 error, 2 usage, 3 no such file). */
export const DbExit = {
  /** db status: migrations are pending (run db upgrade). */
  UPGRADE_NEEDED: 7,
  /** db check: warnings only. */
  WARNINGS: 8,
  /** db check: at least one failure; db status: the integrity check failed. */
  FAILURES: 9,
  /** db upgrade: a daemon serves the file, or (--contract) a node of an older release serves the database. */
  IN_USE: 4,
} as const

const known = knownMigrations

export interface DbStatus {
  file: string
  /** The newest migration the file has (null: an empty file). */
  schema_version: string | null
  /** The newest migration this placemat knows. */
  latest: string
  applied: string[]
  pending: string[]
  /** Migrations the file has and this placemat does not know: it was written by a newer placemat. */
  unknown: string[]
  state: 'current' | 'upgrade-needed' | 'newer' | 'empty'
  integrity: string[]
  integrity_ok: boolean
  journal_mode: string
  counts: Record<string, number>
  /** A SQLite file's daemon on this machine (its pid record); absent for a database URL, whose daemons are `nodes`. */
  daemon?: {pid: number; url: string} | null
  /** This placemat's release, whether it serves the database, and why not. */
  release: string
  serves: boolean
  refusal: string | null
  /** This release's pending migrations by phase: expand (db upgrade --expand) and contract (--contract). */
  pending_expand: string[]
  pending_contract: string[]
  /** The oldest release a contract allows to serve the database. */
  min_release: MinRelease | null
  /** The nodes serving it: registered (0.2.0 and later) and traces of older ones (live-nodes.ts). */
  nodes: LiveNodes
}

function daemonOn(file: string): DbStatus['daemon'] {
  const record = readRecord(file)
  if (!record || resolveTarget(record.db) !== resolveTarget(file) || !isAlive(record.pid)) return null
  // A record left by a daemon that was killed in a container names pid 1, which is this process
  // when it runs in the next container on the same volume: it is no daemon.
  if (record.pid === process.pid) return null
  return {pid: record.pid, url: record.url}
}

/** Whether a database (a URL: a file is judged by its being there) holds placemat's schema already. */
export async function holdsPlacemat(url: string): Promise<boolean> {
  const db = await inspect(url)
  try {
    return (await executedMigrations(db)).length > 0
  } finally {
    await db.close()
  }
}

export async function dbStatus(file: string): Promise<DbStatus> {
  const db = await inspect(file)
  try {
    const applied = await executedMigrations(db)
    const all = known()
    const pending = all.filter((m) => !applied.includes(m))
    const unknown = applied.filter((m) => !all.includes(m))
    const integrity = await db.integrity()
    const counts: Record<string, number> = {}
    for (const t of ['resource_providers', 'inventories', 'consumers', 'allocations', 'resource_classes', 'traits']) {
      if (await db.hasTable(t)) counts[t] = Number((await db.rows<{n: number}>(`select count(*) as n from ${t}`))[0].n)
    }
    const state: DbStatus['state'] =
      applied.length === 0 ? 'empty' : unknown.length ? 'newer' : pending.length ? 'upgrade-needed' : 'current'
    const minRelease = (await db.hasTable('placemat_meta'))
      ? parseMinRelease(
          (
            await db.rows<{value: string}>(sql`select ${sql.ref('value')} from placemat_meta where ${sql.ref('key')} = ${MIN_RELEASE_KEY}`)
          )[0]?.value,
        )
      : null
    const verdict = judgeSchema({applied, minRelease}, describeTarget(file))
    return {
      file: describeTarget(file),
      schema_version: applied.at(-1) ?? null,
      latest: all.at(-1)!,
      applied,
      pending,
      unknown,
      state,
      integrity,
      integrity_ok: integrity.length === 1 && integrity[0] === 'ok',
      journal_mode: await db.storage(),
      counts,
      ...(isDatabaseUrl(file) ? {} : {daemon: daemonOn(file)}),
      release: RELEASE,
      serves: applied.length > 0 && verdict.serves,
      refusal: applied.length > 0 ? verdict.refusal : null,
      pending_expand: [...verdict.pending.baseline, ...verdict.pending.expand],
      pending_contract: verdict.pending.contract,
      min_release: minRelease,
      nodes: await liveNodesOf(db, file),
    }
  } finally {
    await db.close()
  }
}
