/**
 * Which Galera node a MariaDB backend's connections reach, and which of them to retire.
 *
 * Behind a balancer with one active server and the others as backups (kolla's haproxy), every
 * connection of every daemon should reach the same node. After a failover and a failback they
 * need not: pooled connections stay on the backup while any new one (pool growth, a reconnect, a
 * daemon restarted) reaches the returned node, and one cluster is written from two nodes, every
 * write a race lost or won at certification. The node the newest connection reached is the one
 * the balancer picks now: a connection on another node is retired (closed when it comes back to
 * its pool, never handed out again), so the daemon's connections move to one node.
 *
 * A balancer that spreads connections over every node (round robin, or none in front of a
 * cluster) moves the newest connection's node again and again: retiring then would only churn
 * connections, so after SPREAD_CHANGES changes within SPREAD_WINDOW_MS nothing is retired until
 * the node has held still for QUIET_MS.
 */

/** Changes of node, within SPREAD_WINDOW_MS, that show connections spread over several nodes at once. */
export const SPREAD_CHANGES = 4
export const SPREAD_WINDOW_MS = 30_000
/** How long the node must hold still after a spread before connections are retired again. */
export const QUIET_MS = 10 * 60_000

/** The SQL that names the node a connection reached: its host name and port, as `host:port`. */
export const NODE_QUERY = "select concat(@@hostname, ':', @@port) as node"

export interface NodeEvents {
  /** The newest connection reached `to`, not `from`: those on `from` are retired. */
  changed(from: string, to: string): void
  /** Connections reach several nodes at once: none is retired until the node holds still. */
  spread(nodes: readonly string[]): void
}

export class GaleraNodes {
  /** The node the newest connection reached, null before any. */
  current: string | null = null
  private readonly nodeOf = new WeakMap<object, string>()
  /** When the node changed lately (within SPREAD_WINDOW_MS), and the nodes it changed to. */
  private changes: Array<{at: number; to: string}> = []
  /** While connections are spread: retiring waits until this time (moved on by every change). */
  private spreadUntil = 0

  constructor(
    private readonly events: NodeEvents,
    private readonly now: () => number = Date.now,
  ) {}

  /** `conn` was opened and reached `node`: it becomes the current node. */
  reached(conn: object, node: string): void {
    this.nodeOf.set(conn, node)
    this.seen(node)
  }

  /** A connection (a pool's, or one opened only to ask) reached `node`. */
  seen(node: string): void {
    const was = this.current
    if (was === node) return
    this.current = node
    if (was === null) return
    const at = this.now()
    this.changes = this.changes.filter((c) => at - c.at < SPREAD_WINDOW_MS)
    this.changes.push({at, to: node})
    const spreading = at < this.spreadUntil
    if (this.changes.length >= SPREAD_CHANGES) {
      this.spreadUntil = at + QUIET_MS
      if (!spreading) this.events.spread([...new Set([was, ...this.changes.map((c) => c.to)])].sort())
    } else if (!spreading) this.events.changed(was, node)
  }

  /** Whether `conn` is on a node other than the current one (and connections are not spread). */
  retired(conn: object): boolean {
    const node = this.nodeOf.get(conn)
    return node !== undefined && this.current !== null && node !== this.current && this.now() >= this.spreadUntil
  }
}
