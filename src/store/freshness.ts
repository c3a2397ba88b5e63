/**
 * Read freshness: when the State may serve a read. SQLite asks its change mark (no I/O);
 * A server (PostgreSQL, MariaDB) proves read-your-writes across nodes with a round trip sent after the read arrived
 * (a probe of the change counter that reads arriving meanwhile share, or a write of ours).
 * When the State is behind, a catch-up takes its turn and has the follower apply what others
 * committed.
 */
import type {State} from '../core/state/state.js'
import type {Backend} from './backends.js'
import {asDatabaseError} from './database-faults.js'
import type {Follower} from './follower.js'
import type {Turns} from './turns.js'

export class Freshness {
  /**
   * A server: the State holds every commit made before this time (performance.now()): the send
   * time of the last round trip that found the change counter at our position.
   */
  private currentAsOf = -Infinity
  /** The probe of the change counter in flight, which reads arriving before it was sent share. */
  private probe: {sentAt: number; counter: Promise<number>} | null = null
  /** A catch-up waiting for its turn, which readers arriving meanwhile share. */
  private queuedCatchUp: Promise<State> | null = null

  constructor(
    private readonly state: State,
    private readonly backend: Backend,
    private readonly follower: Follower,
    private readonly turns: Turns,
  ) {}

  /** A round trip sent at `sentAt` found the State current. */
  currentAt(sentAt: number): void {
    this.currentAsOf = Math.max(this.currentAsOf, sentAt)
  }

  /** Whether the State is known to hold every commit made before `time`. */
  currentAsOfTime(time: number): boolean {
    return this.currentAsOf >= time
  }

  /**
   * Makes the State current with what other processes committed. Call before serving a read.
   * Rejects with a 503 (DatabaseUnavailableError) when the database cannot say.
   */
  refresh(): Promise<State> {
    if (this.backend.server) return this.currentFor(performance.now())
    const f = this.follower
    // The State holds a write not yet committed, or is being loaded, or is unsure of something:
    // wait for our turn. Otherwise it is what the database held at seenMark, writes of ours queued
    // or not: if nobody committed since, it is current, no waiting.
    if (f.holdsUncommitted || f.unsureOfSomething || f.seenMark < 0) return this.catchUp()
    let mark: number
    try {
      mark = this.backend.changeMark() as number
    } catch (err) {
      return Promise.reject(asDatabaseError(err))
    }
    return mark === f.seenMark ? Promise.resolve(this.state) : this.catchUp()
  }

  /**
   * A server: the State once it holds every commit made before `arrived` (read-your-writes across
   * nodes). A round trip sent after `arrived` that found the counter at or below our position
   * proves it: a probe of the counter, shared by the reads that arrived before it was sent, or a
   * write of ours. Reads arriving while our write is in flight wait for it, and a write sent after
   * them answers for them without a probe.
   */
  private async currentFor(arrived: number): Promise<State> {
    const f = this.follower
    let need: number | null = null
    for (;;) {
      if (f.unsureOfSomething || f.seenMark < 0) return this.catchUp()
      if (f.holdsUncommitted) {
        await this.turns.turnEnd()
        continue
      }
      if (this.currentAsOf >= arrived || (need !== null && f.position >= need)) return this.state
      if (need !== null) return this.catchUp(true)
      need = await this.counterSince(arrived)
    }
  }

  /** The change counter as read by a round trip sent at `arrived` or later (one shared by all who wait). */
  counterSince(arrived: number): Promise<number> {
    const probe = this.probe
    if (probe && probe.sentAt >= arrived) return probe.counter
    const f = this.follower
    const sentAt = performance.now()
    const counter = Promise.resolve()
      .then(() => (this.backend.server ? f.readAhead().then((a) => a.head.counter) : this.backend.changeMark()))
      .then(
        (m) => {
          if (this.probe?.counter === counter) this.probe = null
          f.sawHead(m)
          if (m <= f.position && !f.unsureOfSomething) this.currentAt(sentAt)
          return m
        },
        (err) => {
          if (this.probe?.counter === counter) this.probe = null
          throw asDatabaseError(err)
        },
      )
    this.probe = {sentAt, counter}
    return counter
  }

  /**
   * Waits for our writes in flight (the State may hold one not yet committed), and applies what
   * other processes committed since.
   */
  catchUp(moved = false): Promise<State> {
    // Readers that arrive while a catch-up waits for its turn share it: it has not read the
    // database yet, so what it reads is newer than their arrival (read-your-writes holds).
    if (this.queuedCatchUp) return this.queuedCatchUp
    const turn = this.turns.exclusive(() => {
      if (this.queuedCatchUp === turn) this.queuedCatchUp = null
      return this.sync(moved)
    })
    this.queuedCatchUp = turn
    return turn
  }

  /**
   * catchUp's work, for a caller that already has its turn. `moved`: the caller saw the mark move
   * (a server: no need to ask again before reading the window); else the mark is asked first,
   * and the window read only when it moved (after waiting for our own writes, it mostly has not).
   */
  async sync(moved = false): Promise<State> {
    const f = this.follower
    try {
      // A server is asked the head with the images (followImages), in the same round trip.
      const markBefore = moved || this.backend.server ? -1 : await this.backend.changeMark()
      if (markBefore !== -1 && markBefore === f.seenMark && !f.unsureOfSomething) return this.state
      const sentAt = performance.now()
      if (await f.followImages()) {
        f.seen(f.position)
        this.currentAt(sentAt)
        return this.state
      }
      await f.followRows()
      // A server's mark is the counter itself; SQLite's moves with every commit of another connection.
      f.seen(this.backend.server ? f.position : markBefore)
      if (!f.unsureOfSomething) this.currentAt(sentAt)
      return this.state
    } catch (err) {
      throw asDatabaseError(err)
    }
  }
}
