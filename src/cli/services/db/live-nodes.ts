/**
 * The nodes serving a database, for `db status`, `upgrade check` and `db upgrade --contract`:
 * the daemons registered in placemat_nodes with a recent beat (placemat 0.2.0 and later), and
 * the traces of daemons of a release before registration, found as honestly as the database and
 * this machine allow:
 *   PostgreSQL  connections to the database, seen in pg_stat_activity, with no application_name
 *               (placemat 0.2.0 and later name theirs `placemat/<release>`) whose last statement
 *               is placemat's (it names placemat's tables, or takes its write lock). Grouped by
 *               client address: a node's connections cannot be told from another's on one host.
 *               A placemat `--db` command of an older release counts too (it writes as a node
 *               does); another program connecting without a name and running such statements
 *               would be counted wrongly.
 *   SQLite      the pid record beside the file (daemon/control.ts) of a live daemon that is not
 *               registered.
 */
import os from 'node:os'
import {sql} from 'kysely'
import {isAlive, readRecord} from '../../../daemon/control.js'
import {NODE_STALE_MS, readNode, type RegisteredNode} from '../../../store/node-registry.js'
import {RELEASE, compareReleases} from '../../../store/release.js'
import {inspect, type Inspector} from './inspect.js'

/** A daemon of a release before registration, as far as it can be seen. */
export interface UnregisteredNode {
  /** Where it was seen: a client address (PostgreSQL), or this host (SQLite's pid record). */
  where: string
  /** PostgreSQL: its connections, their backend pids, and since when the oldest is open. */
  connections?: number
  backendPids?: number[]
  since?: number
  /** SQLite: the daemon's pid and URL. */
  pid?: number
  url?: string
}

export interface LiveNodes {
  registered: RegisteredNode[]
  unregistered: UnregisteredNode[]
}

/** The live nodes of the database `target` (read-only). */
export async function liveNodes(target: string, now = Date.now()): Promise<LiveNodes> {
  const db = await inspect(target)
  try {
    return await liveNodesOf(db, target, now)
  } finally {
    await db.close()
  }
}

export async function liveNodesOf(db: Inspector, target: string, now = Date.now()): Promise<LiveNodes> {
  const registered = (await db.hasTable('placemat_nodes'))
    ? (
        await db.rows<Record<string, unknown>>(
          sql`select * from placemat_nodes where beat_at >= ${now - NODE_STALE_MS} order by started_at, id`,
        )
      ).map(readNode)
    : []
  const unregistered: UnregisteredNode[] = []
  if (db.unregisteredConnections) {
    const rows = await db.unregisteredConnections().catch(() => [])
    const byAddr = new Map<string, UnregisteredNode>()
    for (const r of rows) {
      const n = byAddr.get(r.addr) ?? {where: r.addr, connections: 0, backendPids: [], since: Number(r.since)}
      n.connections! += 1
      n.backendPids!.push(Number(r.pid))
      byAddr.set(r.addr, n)
    }
    unregistered.push(...byAddr.values())
  } else {
    const record = readRecord(target)
    const host = os.hostname()
    // A record naming this very process is one a killed container left (pid 1 again): no node.
    if (record && record.pid !== process.pid && isAlive(record.pid) && !registered.some((n) => n.pid === record.pid && n.host === host)) {
      unregistered.push({where: host, pid: record.pid, url: record.url})
    }
  }
  return {registered, unregistered}
}

/** The nodes of a release before `release` (every unregistered one is): what a contract would break. */
export function olderNodes(nodes: LiveNodes, release = RELEASE): string[] {
  return [
    ...nodes.registered.filter((n) => compareReleases(n.release, release) < 0).map((n) => describeNode(n)),
    ...nodes.unregistered.map((n) => describeUnregistered(n, release)),
  ]
}

const clock = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z')
const ago = (ms: number, now: number) => `${Math.max(0, Math.round((now - ms) / 1000))} s ago`

/** One node in a line: its release, where it runs, since when, its last beat. */
export function describeNode(n: RegisteredNode, now = Date.now()): string {
  return `placemat ${n.release} on ${n.host}, pid ${n.pid}, ${n.url}, serving since ${clock(n.startedAt)}, last beat ${ago(n.beatAt, now)} (schema ${n.schemaFrom} to ${n.schemaTo})`
}

/** A trace of an older daemon in a line, saying how it was found. */
export function describeUnregistered(n: UnregisteredNode, release = RELEASE): string {
  const what = `release before ${release} (not registered)`
  if (n.pid !== undefined) return `${what} on ${n.where}, pid ${n.pid}, ${n.url} (its pid record beside the file)`
  return (
    `${what}: ${n.connections} connection(s) from ${n.where} with no application_name running placemat's statements ` +
    `(backend pid ${n.backendPids!.join(', ')}; the oldest open since ${clock(n.since!)})`
  )
}

/** Every live node in a line each, registered ones first. */
export function describeNodes(nodes: LiveNodes, now = Date.now()): string[] {
  return [...nodes.registered.map((n) => describeNode(n, now)), ...nodes.unregistered.map((n) => describeUnregistered(n))]
}

/** How many nodes, in a few words: registered ones by release, and the traces of older ones. */
export function summarizeNodes(nodes: LiveNodes): string {
  if (!nodes.registered.length && !nodes.unregistered.length) return 'none live'
  const byRelease = new Map<string, number>()
  for (const n of nodes.registered) byRelease.set(n.release, (byRelease.get(n.release) ?? 0) + 1)
  const parts = [...byRelease].sort(([a], [b]) => compareReleases(a, b)).map(([release, n]) => `${n} of placemat ${release}`)
  if (nodes.unregistered.length)
    parts.push(`traces of a release before ${RELEASE} (not registered) from ${nodes.unregistered.length} place(s)`)
  return parts.join(', ')
}
