/**
 * MariaDB's connections: what a URL gives the driver, and which pooled connections are handed
 * out again: not one that met a fault of the database's, nor one retired because it is on
 * another Galera node than the newest (see galera-nodes.ts). A leaf of the MariaDB backend.
 */
import type mysql from 'mysql2'
import {databaseFault} from './database-faults.js'
import {parsePlacementUrl, type PlacementUrl} from './placement-db/connection.js'
import {describeTarget} from './target.js'

/**
 * A connection of kysely's pool (the schema, health, the node registry) that met a fault of the
 * database's, such as a Galera node out of the primary component answering 1047, or that
 * `retired` says is on the wrong node, is closed when kysely releases it, never handed out again.
 * The sessions drop theirs; a health probe that took this one back would say 503 while the
 * sessions, on new connections, serve.
 */
export function closeWhenDone(
  conn: Pick<mysql.PoolConnection, 'query' | 'release' | 'destroy'>,
  retired: () => boolean = () => false,
): void {
  let faulted = false
  const query = conn.query.bind(conn) as (...args: unknown[]) => unknown
  conn.query = ((...args: unknown[]) => {
    const last = args.length - 1
    const done = args[last]
    if (typeof done === 'function')
      args[last] = (err: unknown, ...rest: unknown[]) => {
        if (err && databaseFault(err)) faulted = true
        return (done as (...a: unknown[]) => unknown)(err, ...rest)
      }
    return query(...args)
  }) as typeof conn.query
  const release = conn.release.bind(conn)
  conn.release = () => (faulted || retired() ? conn.destroy() : release())
}

/** Tries, at most, to find a connection that is not retired (each retired one is closed, so the pool opens a new one). */
const MAX_RETIRED = 8

/**
 * kysely's view of `pool`: a connection `retired` says no longer serves is closed as it is taken
 * from the pool, and another taken in its place.
 */
export function poolWithout(pool: mysql.Pool, retired: (conn: mysql.PoolConnection) => boolean): Pick<mysql.Pool, 'getConnection' | 'end'> {
  const take = (callback: (err: unknown, conn: mysql.PoolConnection) => void, tries: number) =>
    pool.getConnection((err, conn) => {
      if (err || tries >= MAX_RETIRED || !retired(conn)) return callback(err, conn)
      conn.destroy()
      take(callback, tries + 1)
    })
  return {
    getConnection: ((callback: (err: unknown, conn: mysql.PoolConnection) => void) => take(callback, 0)) as mysql.Pool['getConnection'],
    end: pool.end.bind(pool),
  }
}

export {MAX_RETIRED}

/** The parts of a mysql:// URL the driver is given, read as placement.conf's URLs are (placement-db/connection.ts). */
export function mysqlConnection(url: string): mysql.PoolOptions {
  let target: PlacementUrl
  try {
    target = parsePlacementUrl(url)
  } catch (err) {
    throw new Error(`${describeTarget(url)}: ${(err as Error).message}`)
  }
  return {
    host: target.host ?? '127.0.0.1',
    port: target.port ?? 3306,
    user: target.user,
    password: target.password,
    database: target.database,
    ...(target.socket ? {socketPath: target.socket} : {}),
  }
}
