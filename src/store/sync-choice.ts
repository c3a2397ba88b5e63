/**
 * How a commit alone is made durable: an fdatasync of the WAL on the event loop (inline: the
 * syscall's time and nothing else, as SQLite's own synchronous=FULL pays it), or in Node's thread
 * pool (the loop serves meanwhile, but the answer waits for a thread and a wake-up). Which is
 * cheaper depends on the machine and its day (the disk's flush, the pool's hop), so both are timed
 * as they run and the cheaper is taken, the other tried now and then to keep its figure current.
 * A commit that others are queued behind always goes to the pool: they share its sync. So does
 * one made while the daemon serves other requests (Store.othersServed): an inline sync would hold
 * them all for its length, and under ten concurrent claimers that cost more than the hop saves.
 */

/** How much each sync counts in its method's running figure. */
const WEIGHT = 0.1
/** One sync in this many (alone) tries the method not chosen. */
const PROBE_EVERY = 32
/** Syncs of each method timed before the figures are trusted. */
const FIRST = 4

export type SyncMethod = 'inline' | 'pool'

export class SyncChoice {
  private readonly ms: Record<SyncMethod, number> = {inline: 0, pool: 0}
  private readonly count: Record<SyncMethod, number> = {inline: 0, pool: 0}
  private alone = 0

  /** The method for a commit with nobody queued behind it. */
  forCommitAlone(): SyncMethod {
    // Both timed a few times first, in turn.
    if (this.count.inline < FIRST || this.count.pool < FIRST) return this.count.inline <= this.count.pool ? 'inline' : 'pool'
    const best: SyncMethod = this.ms.inline <= this.ms.pool ? 'inline' : 'pool'
    if (++this.alone % PROBE_EVERY === 0) return best === 'inline' ? 'pool' : 'inline'
    return best
  }

  /** A sync by `method` took `ms`, from the commit's asking to its answer being free to go. */
  timed(method: SyncMethod, ms: number): void {
    const n = ++this.count[method]
    this.ms[method] = n === 1 ? ms : this.ms[method] + (ms - this.ms[method]) * WEIGHT
  }

  /** The running figures (for the metrics and the bench). */
  figures(): Record<SyncMethod, {ms: number; count: number}> {
    return {
      inline: {ms: this.ms.inline, count: this.count.inline},
      pool: {ms: this.ms.pool, count: this.count.pool},
    }
  }
}
