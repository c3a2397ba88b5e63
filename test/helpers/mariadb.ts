/**
 * A throwaway MariaDB (Debian's mariadb-server), Placement's usual database and one of placemat's:
 * its own data folder, socket and loopback port, no grant tables (any user gets in), stopped and
 * removed after (scripts/lib/mariadb.mjs, which the benchmarks share). `mariadbAvailable` is false
 * (and the tests that need it are skipped, saying so) where it is not installed.
 */
import {mariadbAvailable as available, startMariadb as start} from '../../scripts/lib/mariadb.mjs'

export const mariadbAvailable: boolean = available

export interface TestMariadb {
  port: number
  /** SQLAlchemy's URL (as placement.conf has it) of a new, empty database. */
  database(name: string): Promise<string>
  /** placemat's URL (mysql://) of a new, empty database of its own name. */
  placematDatabase(): Promise<string>
  /** A statement run through the server's socket (any user, no grants), its rows as tab-separated lines. */
  sql(text: string): Promise<string>
  /** Stops the server and keeps its data, for restart(). */
  shutdown(): Promise<void>
  /** Starts the server again on the same data and port (stopping it first if it runs); resolves once it answers. */
  restart(): Promise<void>
  stop(): Promise<void>
}

export const startMariadb = (): Promise<TestMariadb> => start()
