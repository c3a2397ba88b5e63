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
  stop(): Promise<void>
}

export const startMariadb = (): Promise<TestMariadb> => start()
