/**
 * A write that lost a race at COMMIT (Galera: another node's commit took the change counter's row
 * first) runs again after a random wait that grows with its losses, so that nodes writing at once
 * take turns instead of meeting again; after twelve losses it is answered 503 Database Contended.
 */
import {describe, expect, it, vi} from 'vitest'
import {Changes} from '../../src/core/state/changes.js'
import {DatabaseUnavailableError} from '../../src/store/database-faults.js'
import {Turns} from '../../src/store/turns.js'
import {raceBackoffMs, WriteQueue} from '../../src/store/write-queue.js'

/** MariaDB's answer when certification failed: error 1213. */
const certificationFailed = () =>
  Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), {
    errno: 1213,
    code: 'ER_LOCK_DEADLOCK',
    sqlState: '40001',
  })

/** A queue on Galera whose commits lose `losses` races, then commit; when each run began. */
function racingQueue(losses: number) {
  const runs: number[] = []
  const retried: string[] = []
  const run = () => {
    const all = new Changes()
    all.consumers.add('c1')
    return {outcomes: [{ok: true, value: 'made'}], all, threw: null}
  }
  const queue = new WriteQueue(
    {kind: 'mysql', server: true, durable: async () => {}} as never,
    {distrust() {}, settled() {}, publish() {}} as never,
    {sync: async () => {}} as never,
    {
      commit: async () => {
        runs.push(performance.now())
        return runs.length <= losses
          ? {committed: false, run: run(), error: certificationFailed(), committing: true}
          : {committed: true, run: run()}
      },
    } as never,
    new Turns(),
    {onWrite: null, othersServed: null, observer: {writeRetried: (why: string) => retried.push(why)}} as never,
  )
  return {queue, runs, retried}
}

describe('a write that loses a race at COMMIT', () => {
  it('waits a random time up to 2^losses ms (at most 256) before it runs again', () => {
    expect([1, 2, 3, 6, 8, 9, 12].map((n) => raceBackoffMs(n, () => 1))).toEqual([2, 4, 8, 64, 256, 256, 256])
    expect(raceBackoffMs(5, () => 0)).toBe(0)
    expect(raceBackoffMs(3, () => 0.5)).toBe(4)
  })

  it('runs again after each loss, the waits growing, and is answered as committed once it wins', async () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(1)
    try {
      const {queue, runs, retried} = racingQueue(3)
      await expect(queue.push(() => 'made', {})).resolves.toBe('made')
      expect(runs).toHaveLength(4)
      expect(retried).toEqual(['contended', 'contended', 'contended'])
      // 2, 4 and 8 ms (a timer may fire up to a millisecond early on this clock).
      const gaps = runs.slice(1).map((t, i) => t - runs[i])
      gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(2 ** (i + 1) - 1))
    } finally {
      random.mockRestore()
    }
  })

  it('is answered 503 Database Contended after losing twelve times, never run a thirteenth', async () => {
    // No wait (the waits are the test above's): the runs are what is counted here.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0)
    try {
      const {queue, runs} = racingQueue(100)
      const err = await queue.push(() => 'made', {}).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(DatabaseUnavailableError)
      expect((err as DatabaseUnavailableError).status).toBe(503)
      expect((err as DatabaseUnavailableError).title).toBe('Database Contended')
      expect(runs).toHaveLength(12)
    } finally {
      random.mockRestore()
    }
  })
})
