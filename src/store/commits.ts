/**
 * How a group of writes is committed: run against the State in turn, then made durable by one
 * of three strategies, each answering an outcome (the write queue settles the writes with it).
 *
 *   optimistic (writeAtPosition)  PostgreSQL and one MariaDB (Backend.checkedCommits): one round
 *                                 trip that commits only if nobody committed since our position
 *   keyed                         as optimistic, for allocation writes: only if nobody touched
 *                                 the records they change (Backend.commitKeyed)
 *   locked (writeLocked)          a transaction that takes the write lock first and catches up
 *                                 under it (SQLite and Galera always; the others when overtaken)
 */
import {sql} from 'kysely'
import {inAnyGroup} from '../core/group-writes.js'
import type {State} from '../core/state/state.js'
import {Changes} from '../core/state/changes.js'
import type {Backend, Row} from './backends.js'
import type {Follower} from './follower.js'
import type {Freshness} from './freshness.js'
import {imageStatement, keyedKeys, keyedRecordStatements, type Recorded, recordStatements} from './journal.js'
import type {OpenOptions} from './open.js'
import type {StateWriter} from './state-writer.js'
import type {GroupRun, QueuedWrite, StoreHooks} from './store-types.js'
import {mark, P, PROFILING} from './phase-profile.js'

/**
 * A group's commit: committed (its writes are answered with their outcomes, but for those in
 * `decideAgain`), or failed with `error`.
 */
export type CommitOutcome =
  | {committed: true; run: GroupRun; decideAgain?: readonly number[]}
  | {committed: false; run: GroupRun; error: unknown; committing: boolean; lost?: LostCommit}

/**
 * A group whose COMMIT may have been on its way when the error came: the journal position it
 * wrote after, and the image it recorded, by which the database shows whether it was kept.
 */
export interface LostCommit {
  after: number
  image: string
}

/**
 * What the database shows of a lost commit: kept (the refusals in `decideAgain` are decided
 * again), not kept, or neither: it did not answer in time, or (Galera) not finding it on the
 * node asked does not show that no node will commit it.
 */
export type FoundCommit = {kept: true; decideAgain: readonly number[]} | {kept: false} | {kept: null; why: 'no-answer' | 'not-proven'}

/** How long a lost commit is looked for, while the database does not answer. */
const FIND_LOST_MS = 2000
/** The pause between two looks. */
const FIND_LOST_PAUSE_MS = 100

export class Commits {
  /** PostgreSQL and MariaDB: the share of recent writes tried in one round trip that another node overtook. */
  private overtakenRate = 0
  /** PostgreSQL and MariaDB: writes that took the lock first without trying, since the last try. */
  private lockedInARow = 0

  constructor(
    private readonly state: State,
    private readonly backend: Backend,
    private readonly writer: StateWriter,
    private readonly follower: Follower,
    private readonly freshness: Freshness,
    private readonly hooks: Pick<StoreHooks, 'observer'>,
    private readonly options: Pick<OpenOptions, 'beforeCommit'>,
  ) {}

  private get db() {
    return this.backend.db
  }

  /** Commits `group` in one transaction, choosing the strategy. */
  async commit(group: QueuedWrite[]): Promise<CommitOutcome> {
    if (this.backend.checkedCommits && !this.options.beforeCommit) {
      // What other nodes committed is read before, not under, the lock: the lock is what every
      // node's writes wait on, round trips under it are what would cap the cloud. But a try that
      // another node overtakes costs its round trips and the catch-up after it: while most tries
      // are overtaken (nodes writing at once), writes take the lock first, and one in
      // PROBE_EVERY tries again.
      const attempts = this.overtakenRate < 0.2 ? 2 : this.overtakenRate < 0.5 || ++this.lockedInARow >= PROBE_EVERY ? 1 : 0
      for (let attempt = 0; attempt < attempts; attempt++) {
        this.lockedInARow = 0
        try {
          // What other nodes committed before the group's first write arrived is asked first, in
          // the round trip reads share, with the images to catch up from: a try then meets only
          // what commits while it is on its way, instead of every commit since our last question.
          // (While others write: a node writing alone is overtaken by nobody, and saves the question.
          // Not for allocation writes, which others' commits overtake only when they touched the
          // same consumers or providers: the question would cost every write a round trip to spare
          // the few overtaken ones.)
          if (
            attempt === 0 &&
            !allSelfContained(group) &&
            !this.freshness.currentAsOfTime(group[0].started) &&
            performance.now() - this.follower.othersWroteAt < OTHERS_WRITING_MS
          ) {
            await this.freshness.counterSince(group[0].started)
          }
          if (!this.follower.currentAsFarAsKnown()) await this.freshness.sync(true)
        } catch (error) {
          return {committed: false, run: {outcomes: [], all: new Changes(), threw: null}, error, committing: false}
        }
        const outcome = await this.writeAtPosition(group)
        this.overtakenRate += ((outcome === 'moved' ? 1 : 0) - this.overtakenRate) * OVERTAKEN_WEIGHT
        if (outcome !== 'moved') return outcome
      }
    }
    return this.writeLocked(group)
  }

  /**
   * PostgreSQL or MariaDB, with the State current as far as this process knows: the group runs against it
   * before any round trip, and its rows go in one round trip that commits only if nobody
   * committed since, so the write lock is held for the server's work alone, never across the
   * network. 'moved': somebody had; nothing was written, what the group touched is read again,
   * and the group runs again (see commit).
   */
  private async writeAtPosition(group: QueuedWrite[]): Promise<CommitOutcome | 'moved'> {
    const f = this.follower
    const base = f.position
    const run = this.runGroup(group, Date.now())
    let committing = false
    const recorded: Recorded = {image: null}
    try {
      if (run.threw) throw run.threw.error
      if (run.all.empty) {
        // Refusals and no-ops decided on a State that may be behind: they stand if nobody
        // committed since (one round trip, no lock).
        const sentAt = performance.now()
        // With the images since: when it moved, the try again catches up from them.
        const mark = (await f.readAhead()).head.counter
        f.settled()
        f.sawHead(mark)
        if (mark === base) {
          this.freshness.currentAt(sentAt)
          return {committed: true, run}
        }
        this.hooks.observer?.writeRetried?.('moved')
        return 'moved'
      }
      // A write that depends only on what it changes (allocations) needs only those to stand
      // still; others' commits since, touching other consumers and providers, are applied after it.
      const keys = allSelfContained(group) ? keyedKeys(run.all) : null
      const keyed = keys !== null && !inAnyGroup(this.state, run.all)
      const record = keyed
        ? keyedRecordStatements(this.db, run.all, keys, base, f.image()!, recorded)
        : recordStatements(this.db, run.all, base + 1, f.image(), recorded)
      const statements = concat(this.writer.statements(this.state, run.all), record)
      let sentAt = 0
      const outcome = await this.backend.session((s): Promise<Row[] | 'committed' | 'moved' | 'too-big'> => {
        committing = true
        sentAt = performance.now()
        return keyed ? s.commitKeyed!(base, keys, statements) : s.commitIfAt!(base, statements)
      })
      if (outcome === 'moved' || outcome === 'too-big') {
        f.distrust(run.all)
        f.settled()
        this.hooks.observer?.writeRetried?.(outcome)
        return 'moved'
      }
      f.committedAt(base, outcome)
      this.freshness.currentAt(sentAt)
      // The keyed check covers what the group changed, not what its refusals read: when others
      // committed between our position and our commit, a refusal may rest on a State older than a
      // write another node acknowledged before it arrived (a release answered 404 while the claim
      // stays). Those are decided again, on the State that now holds every commit up to ours.
      const othersBefore = Array.isArray(outcome) && outcome.length > 0 && Number(outcome[outcome.length - 1].seq) > base + 1
      const decideAgain = othersBefore ? refusals(run) : []
      return decideAgain.length ? {committed: true, run, decideAgain} : {committed: true, run}
    } catch (error) {
      return failed(run, error, committing, base, recorded)
    }
  }

  /**
   * The group in a transaction that takes the write lock first: BEGIN, the lock and what others
   * committed since our position in one round trip; the rows those name only when there are any;
   * the group's rows, the journal and COMMIT in the last.
   */
  private async writeLocked(group: QueuedWrite[]): Promise<CommitOutcome> {
    const f = this.follower
    let run: GroupRun = {outcomes: [], all: new Changes(), threw: null}
    let committing = false
    let after = 0
    const recorded: Recorded = {image: null}
    if (PROFILING) mark(P.queue)
    try {
      this.backend.checkWritable()
      await this.backend.session(async (s) => {
        const db = this.db
        const opening = this.backend.beginWrite()
        const sentAt = performance.now()
        await f.catchUpUnderLock(s, opening)
        // Current at the head: reads need not wait until our write begins to change the State.
        // (SQLite: catching up under the lock took the change mark it is current at.)
        if (this.backend.server) {
          f.seen(f.position)
          this.freshness.currentAt(sentAt)
        }
        if (PROFILING) mark(P.lock)
        run = this.runGroup(group, Date.now())
        if (PROFILING) mark(P.decide)
        if (run.threw) throw run.threw.error
        if (run.all.empty) {
          await s.run([sql`commit`.compile(db)])
          return
        }
        after = f.position
        const seq = after + 1
        if (this.options.beforeCommit) {
          await s.run(this.writer.statements(this.state, run.all))
          await this.options.beforeCommit()
          committing = true
          await s.run([...recordStatements(db, run.all, seq, f.image(), recorded), sql`commit`.compile(db)])
        } else {
          // One more round trip (more for a big batch): the rows, the journal, the counter, COMMIT.
          committing = true
          const rows = this.writer.statements(this.state, run.all)
          const records = recordStatements(db, run.all, seq, f.image(), recorded)
          const commit = [sql`commit`.compile(db)]
          await s.run(
            PROFILING ? concat(rows, marked(P.statements), records, marked(P['journal+image']), commit) : concat(rows, records, commit),
          )
          if (PROFILING) mark(P.commit)
        }
        f.committedLocked(seq)
      })
    } catch (error) {
      return failed(run, error, committing, after, recorded)
    }
    f.settled()
    return {committed: true, run}
  }

  /**
   * Whether a group whose connection was lost during COMMIT was kept, looked for by the image it
   * recorded under the write lock: the lost transaction, if its server still runs it, holds that
   * lock until it ends. Neither kept nor not when the database does not answer within
   * FIND_LOST_MS, or where not finding it does not show it was not kept: on MariaDB the answer may
   * come from another Galera node than the one that may yet commit it. PostgreSQL has one server,
   * which ran it or not.
   */
  async findLost(run: GroupRun, lost: LostCommit): Promise<FoundCommit> {
    const deadline = performance.now() + FIND_LOST_MS
    for (;;) {
      try {
        const opening = this.backend.beginWrite()
        const rows = await this.backend.session((s) =>
          s.run([...opening, imageStatement(this.db, lost.after, lost.image), sql`rollback`.compile(this.db)]),
        )
        // Compared again here: MariaDB's text equality ignores case and trailing spaces.
        const found = rows[opening.length].find((r) => r.body === lost.image)
        if (found) return {kept: true, decideAgain: Number(found.seq) > lost.after + 1 ? refusals(run) : []}
        return this.backend.provesUnkept ? {kept: false} : {kept: null, why: 'not-proven'}
      } catch {
        if (performance.now() + FIND_LOST_PAUSE_MS >= deadline) return {kept: null, why: 'no-answer'}
        await new Promise((r) => setTimeout(r, FIND_LOST_PAUSE_MS))
      }
    }
  }

  /** Runs the group's writes against the State in turn, each seeing what the ones before it did. */
  private runGroup(group: QueuedWrite[], now: number): GroupRun {
    const run: GroupRun = {outcomes: [], all: new Changes(), threw: null}
    this.follower.changing()
    for (const w of group) {
      const changes = new Changes()
      this.state.changes = changes
      try {
        run.outcomes.push({ok: true, value: w.fn(this.state, now)})
      } catch (error) {
        if (!changes.empty) {
          // The State holds part of it: the whole group is undone.
          run.all.absorb(changes)
          run.threw = {error}
          return run
        }
        run.outcomes.push({ok: false, error})
      } finally {
        this.state.changes = null
      }
      run.all.absorb(changes)
    }
    return run
  }
}

/** Nothing to run: marks the end of phase `p` when the statements before it have run. */
// biome-ignore lint/correctness/useYield: a step of the statements' sequence that only marks where a phase ends
function* marked(p: number): Generator<never> {
  mark(p)
}

function* concat<T>(...parts: Iterable<T>[]): Generator<T> {
  for (const p of parts) yield* p
}

/** A group that failed; one whose COMMIT may have been on its way with what finds it again. */
function failed(run: GroupRun, error: unknown, committing: boolean, after: number, recorded: Recorded): CommitOutcome {
  return committing && recorded.image !== null
    ? {committed: false, run, error, committing, lost: {after, image: recorded.image}}
    : {committed: false, run, error, committing}
}

/** The indexes of the group's writes that were refused (they changed nothing). */
function refusals(run: GroupRun): number[] {
  const out: number[] = []
  run.outcomes.forEach((o, k) => {
    if (!o.ok) out.push(k)
  })
  return out
}

/** Whether every write of `group` depends only on what it changes (allocation writes: see keyedKeys). */
const allSelfContained = (group: readonly QueuedWrite[]): boolean => group.every((w) => w.selfContained)

/**
 * PostgreSQL and MariaDB: for this long after another node's commit was applied, a write asks what others
 * committed before it is tried (a node writing alone saves the question).
 */
const OTHERS_WRITING_MS = 1000

/** PostgreSQL and MariaDB: how much each try in one round trip counts in the rate of those overtaken. */
const OVERTAKEN_WEIGHT = 0.1

/** PostgreSQL and MariaDB: while tries are mostly overtaken, one write in this many tries again anyway. */
const PROBE_EVERY = 16
