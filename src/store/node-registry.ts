/**
 * The nodes serving a database (placemat_nodes, migration 0012): each daemon registers its
 * release, the schema range it serves, its host, pid, URL and start time, and beats every
 * NODE_BEAT_MS in one statement of its own, outside the change journal (the counter does not
 * move, so no node catches up for it). A node that stops removes its row; one that dies ages out:
 * a node is live while its last beat is younger than NODE_STALE_MS. `db status`, `upgrade check`
 * and `db upgrade --contract` read them.
 */
import {sql, type CompiledQuery, type Kysely} from 'kysely'
import type {Row} from './backends.js'
import type {Database} from './schema.js'
import {statementText} from './statement-text.js'

/** How often a node beats. */
export const NODE_BEAT_MS = 5000

/** A node whose last beat is older than this is taken for dead. */
export const NODE_STALE_MS = 30_000

/** Rows of nodes silent this long are deleted when a node registers (those that died, long ago). */
const NODE_FORGET_MS = 24 * 3600_000

/** What a node says of itself. */
export interface NodeInfo {
  release: string
  /** The schema range it serves: its last expand migration, and its newest one. */
  schemaFrom: string
  schemaTo: string
  host: string
  pid: number
  url: string
  /** Epoch ms. */
  startedAt: number
}

export interface RegisteredNode extends NodeInfo {
  id: string
  /** Epoch ms of its last beat. */
  beatAt: number
}

/** The node's row written (again, if a beat finds it gone): one statement, its own transaction. */
export function beatStatement(db: Kysely<Database>, id: string, info: NodeInfo, now: number): CompiledQuery {
  const row = {
    id,
    release: info.release,
    schema_from: info.schemaFrom,
    schema_to: info.schemaTo,
    host: info.host,
    pid: info.pid,
    url: info.url,
    started_at: info.startedAt,
    beat_at: now,
  }
  return statementText(db).insertOne('placemat_nodes', row, {key: 'id', update: ['beat_at']})
}

/** Forgets the nodes silent for a day (a node registering tidies up after those that died). */
export function forgetStatement(db: Kysely<Database>, now: number): CompiledQuery {
  return sql`delete from placemat_nodes where beat_at < ${now - NODE_FORGET_MS}`.compile(db)
}

/** A node that stops removes itself. */
export function leaveStatement(db: Kysely<Database>, id: string): CompiledQuery {
  return sql`delete from placemat_nodes where id = ${id}`.compile(db)
}

/** The live nodes (a beat within NODE_STALE_MS of `now`), oldest first. */
export function liveNodesStatement(db: Kysely<Database>, now: number): CompiledQuery {
  return sql`select * from placemat_nodes where beat_at >= ${now - NODE_STALE_MS} order by started_at, id`.compile(db)
}

export function readNode(r: Row): RegisteredNode {
  return {
    id: String(r.id),
    release: String(r.release),
    schemaFrom: String(r.schema_from),
    schemaTo: String(r.schema_to),
    host: String(r.host),
    pid: Number(r.pid),
    url: String(r.url),
    startedAt: Number(r.started_at),
    beatAt: Number(r.beat_at),
  }
}
