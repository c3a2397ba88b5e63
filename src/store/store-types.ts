/**
 * What a store tells its owner and what its writes carry (a leaf module: the store's parts and
 * the store itself read it).
 */
import type {Changes} from '../core/state/changes.js'
import type {State} from '../core/state/state.js'
import type {DatabaseFault} from './database-faults.js'

/** What a store tells its owner (the daemon's log and metrics) besides each write's timing. */
export interface StoreObserver {
  /** Another process's commits were applied: `keys` changed, in `seconds`. */
  caughtUp?(keys: number, seconds: number, from: 'images' | 'rows'): void
  /** The State was loaded whole again, and why. */
  reloaded?(reason: string, seconds: number): void
  /** A database call failed for a reason of the database's. */
  fault?(kind: DatabaseFault, err: unknown): void
  /** A connection was opened again after one was lost. */
  reconnected?(): void
  /** MariaDB: new connections reach node `to`, not `from` (a balancer moved them): the connections on `from` are closed. */
  nodeChanged?(from: string, to: string): void
  /** MariaDB: new connections reach several nodes at once: none is closed for it until they reach one again. */
  nodesSpread?(nodes: readonly string[]): void
  /** A write lost its connection during COMMIT: whether it committed is not known (the State follows the database). */
  commitUnknown?(err: unknown): void
  /** That write was looked for once the database answered again: kept, or (PostgreSQL) not, and run again. */
  commitFound?(kept: boolean): void
  /**
   * That write's fate stays unknown (answered 503 "may or may not"): the database did not answer
   * in time, did not show it (Galera: another node may yet commit it), or the write was too large
   * to record the rows it is looked for by.
   */
  commitUnresolved?(why: 'no-answer' | 'not-proven' | 'too-large'): void
  /**
   * A write made in one round trip found that another process had committed first (or was too
   * big for one round trip): it runs again under the lock. 'contended': another node's commit won
   * a race at COMMIT (Galera's certification), and the write runs again from the start.
   */
  writeRetried?(why: 'moved' | 'too-big' | 'contended'): void
  /** The schema was judged again (a heartbeat) and the verdict changed: why this release no longer serves it, or null (it does again). */
  schemaJudged?(refusal: string | null): void
}

/** Where the store's owner hangs its observers (the Store itself: both may be set after it opens). */
export interface StoreHooks {
  readonly observer: StoreObserver | null
  /**
   * Told after each write transaction how long it ran (seconds, from its turn in the queue to
   * COMMIT or ROLLBACK) and whether it committed.
   */
  readonly onWrite: ((seconds: number, ok: boolean) => void) | null
  /** Whether other requests are being served as a write commits (the daemon's HTTP layer). */
  readonly othersServed: (() => boolean) | null
}

/** What a store's health check says (see Store.health). */
export interface StoreHealth {
  status: 'ok' | 'catching-up' | 'starting' | DatabaseFault
  journal: {position: number; head: number}
}

export interface WriteOptions {
  /**
   * What the write decides depends only on the records it changes (Placement's allocation
   * writes: a consumer's generation, its providers' inventories and usages). On PostgreSQL it then
   * commits unless another node changed one of those since (see Backend.commitKeyed), instead of
   * unless another node committed anything.
   */
  selfContained?: boolean
}

export type Outcome = {ok: true; value: unknown} | {ok: false; error: unknown}

/** What a group's writes did to the State: each one's outcome, and all they changed. */
export interface GroupRun {
  outcomes: Outcome[]
  all: Changes
  /** A write threw after changing the State. */
  threw: {error: unknown} | null
}

/** A write waiting in the store's queue. */
export interface QueuedWrite {
  fn: (state: State, now: number) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  started: number
  selfContained: boolean
  /** The races at COMMIT it lost (another node's commit won): run again up to MAX_RACES_LOST. */
  racesLost?: number
  /** Times its group's COMMIT lost its connection and the database showed nothing was kept (PostgreSQL): it runs again. */
  lostUnkept?: number
}
