/**
 * The store's turns: writes, catch-ups and loads run one at a time, first come first served.
 * (kysely's own connection lock wakes every waiter on each release; with many requests in flight
 * that churn shows.)
 */
export class Turns {
  /** The turn running now (or the last one). */
  private running: Promise<unknown> = Promise.resolve()
  private tail: Promise<unknown> = Promise.resolve()
  private pending = 0

  /** Runs `fn` in its turn, after every turn asked for before it. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.pending++
    const run = this.tail.then(() => {
      const turn = fn()
      this.running = turn
      return turn
    })
    const done = () => {
      this.pending--
    }
    this.tail = run.then(done, done)
    return run
  }

  /** Settles when the turn now running (a write, a catch-up, a load) has ended. */
  turnEnd(): Promise<void> {
    return this.running.then(
      () => undefined,
      () => undefined,
    )
  }

  /** Settles once every turn asked for, and every turn those ask for, has ended. */
  async idle(): Promise<void> {
    while (this.pending > 0) await this.tail
  }
}
