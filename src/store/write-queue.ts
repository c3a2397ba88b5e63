/**
 * The write queue: writes wait here for their turn and are committed together, a group at a
 * time (group commit), by Commits; the queue alone settles them with the outcome, keeping the
 * State true to the database when a group fails.
 */
import type {State} from '../core/state/state.js'
import type {Backend} from './backends.js'
import type {Commits, LostCommit} from './commits.js'
import {asDatabaseError, databaseFault, outcomeUnknown, type DatabaseFault} from './database-faults.js'
import type {Follower} from './follower.js'
import type {Freshness} from './freshness.js'
import type {GroupRun, Outcome, QueuedWrite, StoreHooks, WriteOptions} from './store-types.js'
import type {Turns} from './turns.js'
import {mark, P, PROFILING} from './phase-profile.js'

/** Writes committed together at most. */
const MAX_GROUP = 64

/** Races at COMMIT a write may lose before it is answered 503 (Galera: each is another node's commit to the same rows). */
const MAX_RACES_LOST = 12

/**
 * How long a write that lost its `lost`th race waits before it runs again: a random time up to
 * 2^lost ms, at most 256 ("full jitter"). Every Galera write takes the change counter's row, so
 * two nodes writing at once always race; run again at once, the loser meets the same winner's
 * next commit and loses again. Spread out, the nodes take turns. A daemon per node, 60 claims/s
 * offered, each claim's requests to one node: with at most 64 ms and 8 races, 51 writes lost every
 * race in 1,164 claims; with 256 ms and 12, 2 in 1,199 (docs/operator/mariadb.md).
 */
export const raceBackoffMs = (lost: number, random: () => number = Math.random): number => random() * Math.min(256, 2 ** lost)

/** Runs of a write whose COMMIT lost its connection and was found not kept, before it is answered 503. */
const MAX_LOST_UNKEPT = 2

export class WriteQueue {
  /** Writes waiting for their turn. */
  private queue: QueuedWrite[] = []
  private drainScheduled = false
  /** The fault the last write met, until a write commits again (a full disk shows only there). */
  private fault: DatabaseFault | null = null

  constructor(
    private readonly backend: Backend,
    private readonly follower: Follower,
    private readonly freshness: Freshness,
    private readonly commits: Commits,
    private readonly turns: Turns,
    private readonly hooks: StoreHooks,
  ) {}

  get writeFault(): DatabaseFault | null {
    return this.fault
  }

  /** Queues `fn`; a drain takes its turn for the writes waiting. */
  push<T>(fn: (state: State, now: number) => T, options: WriteOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        fn,
        resolve: resolve as (v: unknown) => void,
        reject,
        started: performance.now(),
        selfContained: options.selfContained ?? false,
      })
      this.scheduleDrain()
    })
  }

  /** A drain takes its turn for the writes waiting, unless one is on its way. */
  private scheduleDrain(): void {
    if (this.drainScheduled) return
    this.drainScheduled = true
    void this.turns.exclusive(() => this.drain())
  }

  /** Commits the writes waiting, a group at a time; every write is settled, whatever fails. */
  private async drain(): Promise<void> {
    // Let requests already received join this group before it starts.
    await new Promise((r) => setImmediate(r))
    this.drainScheduled = false
    const group = this.queue.splice(0, MAX_GROUP)
    if (this.queue.length) this.scheduleDrain()
    if (group.length === 0) return
    const outcome = await this.writeGroup(group)
    if (outcome === 'retry-alone') {
      // A write changed the State and then threw: nothing was committed; each write is tried
      // again on its own.
      for (const w of group) await this.writeGroup([w])
    }
  }

  /**
   * One transaction for `group`. Settles each write, or (a group of several where one write threw
   * after changing the State) settles none and asks for them to be run one by one.
   */
  private async writeGroup(group: QueuedWrite[]): Promise<'settled' | 'retry-alone'> {
    const outcome = await this.commits.commit(group)
    return outcome.committed
      ? this.succeed(group, outcome.run, outcome.decideAgain ?? [])
      : this.fail(group, outcome.run, outcome.error, outcome.committing, outcome.lost)
  }

  /**
   * The group committed (or changed nothing): the State shows it now, so the next group decides
   * on it, and its writes are answered once the commit is on disk. That wait is outside the
   * queue's turn: the next group commits meanwhile, and shares the next sync. The writes in
   * `decideAgain` (refusals made on a State that may have been behind) go back to the head of the
   * queue, to be decided on the State the commit left.
   */
  private succeed(group: QueuedWrite[], run: GroupRun, decideAgain: readonly number[]): 'settled' {
    this.fault = null
    this.follower.settled()
    if (!run.all.empty) this.follower.publish()
    if (PROFILING) mark(P['index patch'])
    const again = this.requeueToDecide(group, decideAgain)
    const answer = () => {
      if (PROFILING) mark(P.fdatasync)
      this.settleOutcomes(group, run, again)
    }
    if (run.all.empty) answer()
    else
      void this.backend.durable(this.queue.length === 0 && !this.hooks.othersServed?.()).then(answer, (err: unknown) => {
        // The sync failed: the commit may not be on disk. None of the group is acknowledged,
        // and what it touched is read again before it is trusted.
        this.follower.distrust(run.all)
        const fault = databaseFault(err) ?? 'unavailable'
        this.fault = fault
        const error = outcomeUnknown(fault, err, 'sync')
        group.forEach((w, k) => {
          if (!again.has(k)) this.settle(w, {ok: false, error})
        })
      })
    return 'settled'
  }

  /** Puts `writes` back at the head of the queue, with a drain for them. */
  private requeue(writes: QueuedWrite[]): void {
    this.queue.unshift(...writes)
    this.scheduleDrain()
  }

  /** The writes of `group` at `indexes` go back to the queue, to be decided again; those indexes. */
  private requeueToDecide(group: QueuedWrite[], indexes: readonly number[]): Set<number> {
    if (indexes.length) this.requeue(indexes.map((k) => group[k]))
    return new Set(indexes)
  }

  /** Each write of `group` but those at `again` is answered with the outcome it had in `run`. */
  private settleOutcomes(group: QueuedWrite[], run: GroupRun, again: ReadonlySet<number>): void {
    group.forEach((w, k) => {
      if (!again.has(k)) this.settle(w, run.outcomes[k])
    })
  }

  /**
   * Nothing of `group` was kept and the database answers: the writes `mayRunAgain` lets through
   * go back to the queue, to run again on what it holds; the others are answered 503 with `err`.
   */
  private runAgain(
    group: QueuedWrite[],
    err: unknown,
    mayRunAgain: (w: QueuedWrite) => boolean,
    waitMs?: (again: QueuedWrite[]) => number,
  ): 'settled' {
    const again = group.filter(mayRunAgain)
    const error = asDatabaseError(err)
    for (const w of group) if (!again.includes(w)) this.settle(w, {ok: false, error})
    if (again.length === 0) return 'settled'
    const ms = waitMs?.(again) ?? 0
    // Writes that arrive meanwhile go ahead: they are not behind these in any order a client saw.
    if (ms > 0) setTimeout(() => this.requeue(again), ms)
    else this.requeue(again)
    return 'settled'
  }

  /**
   * The group failed (a write threw after changing the State, the database refused, or a fault):
   * nothing of it is kept. Memory may hold what the database does not, so what the group touched
   * is read again, now if the database answers, else before the next read or write.
   */
  private async fail(
    group: QueuedWrite[],
    run: GroupRun,
    err: unknown,
    committing: boolean,
    lost?: LostCommit,
  ): Promise<'settled' | 'retry-alone'> {
    const thrownByWrite = run.threw !== null
    this.follower.distrust(run.all)
    this.follower.settled() // what the group touched is unsure now (refresh waits for it to be read again)
    const fault = databaseFault(err)
    // A refusal: the database answers, read back now. A fault: not now (it would wait on the
    // database again before this group is answered); the next read or write does.
    if (!fault && !run.all.empty) await this.freshness.sync().catch(() => undefined)
    if (thrownByWrite && group.length > 1) return 'retry-alone'
    if (fault === 'contended' && !thrownByWrite) {
      // Galera: another node's commit won certification and nothing of ours was written. The
      // writes run again, on what that node wrote (read again under the lock), a few times.
      this.hooks.observer?.writeRetried?.('contended')
      return this.runAgain(
        group,
        err,
        (w) => (w.racesLost = (w.racesLost ?? 0) + 1) < MAX_RACES_LOST,
        (again) => raceBackoffMs(Math.max(...again.map((w) => w.racesLost ?? 1))),
      )
    }
    if (fault) this.fault = fault
    if (fault === 'replaced') this.hooks.observer?.fault?.(fault, err)
    // Only a connection lost while COMMIT may have been on its way leaves the outcome unknown; a
    // statement refused (read-only, disk full) ended the transaction before it.
    const unknown = committing && fault === 'unavailable' && this.backend.server
    if (unknown) this.hooks.observer?.commitUnknown?.(err)
    // The database is asked, once it answers again, whether it kept the group: the writes are
    // then answered as if the answer had come (a client told "not made" of a kept claim would
    // leave it held by nobody).
    const found = unknown && lost ? await this.commits.findLost(run, lost) : null
    // Every lost COMMIT's line in the log is followed by what became of it.
    if (unknown && found?.kept !== true && found?.kept !== false) this.hooks.observer?.commitUnresolved?.(found?.why ?? 'too-large')
    if (found && found.kept !== null) {
      // The database answers again. Kept: answered as committed. Not kept: the writes run again,
      // on what it holds, as they would had they come a moment later (a few times, then 503).
      this.hooks.observer?.commitFound?.(found.kept)
      this.fault = null
      if (found.kept) {
        this.settleOutcomes(group, run, this.requeueToDecide(group, found.decideAgain))
        return 'settled'
      }
      return this.runAgain(group, err, (w) => (w.lostUnkept = (w.lostUnkept ?? 0) + 1) <= MAX_LOST_UNKEPT)
    }
    const error = thrownByWrite ? err : unknown ? outcomeUnknown(fault, err, 'commit') : asDatabaseError(err)
    for (const w of group) this.settle(w, {ok: false, error})
    // Writes that queued meanwhile would each wait out the same fault: they are answered now
    // (never sent, so nothing of them was kept).
    if (fault) for (const w of this.queue.splice(0)) this.settle(w, {ok: false, error: asDatabaseError(err)})
    return 'settled'
  }

  private settle(w: QueuedWrite, outcome: Outcome): void {
    const observer = this.hooks.onWrite
    if (observer) {
      try {
        observer((performance.now() - w.started) / 1000, outcome.ok)
      } catch {
        // an observer never changes a write's outcome
      }
    }
    if (outcome.ok) w.resolve(outcome.value)
    else w.reject(outcome.error)
  }
}
