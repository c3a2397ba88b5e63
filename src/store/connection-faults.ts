/**
 * What a database server's backend (PostgreSQL, MariaDB) tells its observer of its connections:
 * every fault a call or an idle connection meets, and the first call answered after one was lost
 * (a reconnect). Not the first connection opened: a Galera node out of the primary component
 * takes connections and refuses every query, and would be "answering again" thirty times a
 * second. A leaf of the store: both backends hold one.
 */
import type {BackendObserver} from './backends.js'
import {databaseFault} from './database-faults.js'

export class ConnectionFaults {
  /** A connection was lost since the last one opened: the next one opened is a reconnect. */
  private lost = false

  /** `observer`: the backend's, read at each event (the daemon sets it after the backend opens). */
  constructor(private readonly observer: () => BackendObserver | null) {}

  /** A database call or connection failed: the observer is told which fault (one not known is unavailable). */
  fault(err: unknown): void {
    const fault = databaseFault(err) ?? 'unavailable'
    if (fault === 'unavailable') this.lost = true
    this.observer()?.fault(fault, err)
  }

  /** A call was answered: after a connection was lost, the observer is told of the reconnect. */
  answered(): void {
    if (!this.lost) return
    this.lost = false
    this.observer()?.reconnect()
  }
}
