/**
 * What a write is told when the database went away under it: "nothing was changed" only when
 * nothing can have been; "may or may not have been kept" when its COMMIT was on its way (a client
 * told otherwise would leave a kept claim behind, held by nobody).
 */
import {describe, expect, it} from 'vitest'
import {Changes} from '../../src/core/state/changes.js'
import {DatabaseUnavailableError, OUTCOME_UNKNOWN} from '../../src/store/database-faults.js'
import type {FoundCommit} from '../../src/store/commits.js'
import {Turns} from '../../src/store/turns.js'
import {WriteQueue} from '../../src/store/write-queue.js'

/**
 * A queue whose every group fails with `error`, `committing` or not, on a backend of `kind`; with
 * `found`, the group recorded an image, and the database, asked for it, answers `found`.
 */
function failingQueue(kind: string, error: unknown, committing: boolean, found?: FoundCommit) {
  const unknown: unknown[] = []
  const looked: Array<boolean | string> = []
  const run = () => {
    const all = new Changes()
    all.consumers.add('c1')
    return {outcomes: [{ok: true, value: 'made'}], all, threw: null}
  }
  const lost = found === undefined ? {} : {lost: {after: 7, image: '{"keys":[]}'}}
  const queue = new WriteQueue(
    {kind, server: kind !== 'sqlite'} as never,
    {distrust() {}, settled() {}} as never,
    {sync: async () => {}} as never,
    {commit: async () => ({committed: false, run: run(), error, committing, ...lost}), findLost: async () => found} as never,
    new Turns(),
    {
      onWrite: null,
      othersServed: null,
      observer: {
        commitUnknown: (err: unknown) => unknown.push(err),
        commitFound: (kept: boolean) => looked.push(kept),
        commitUnresolved: (why: string) => looked.push(why),
      },
    } as never,
  )
  return {queue, unknown, looked}
}

const answer = async (queue: WriteQueue) => {
  const err = await queue.push(() => undefined, {}).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(DatabaseUnavailableError)
  return err as DatabaseUnavailableError
}

const lost = Object.assign(new Error('Connection terminated unexpectedly'), {code: 'ECONNRESET'})

describe('a write the database went away under', () => {
  for (const kind of ['postgres', 'mysql']) {
    it(`on ${kind}, lost during COMMIT: 503 saying it may or may not have been kept, and counted`, async () => {
      const {queue, unknown} = failingQueue(kind, lost, true)
      const err = await answer(queue)
      expect(err.status).toBe(503)
      expect(err.detail).toContain(OUTCOME_UNKNOWN)
      expect(err.detail).not.toContain('nothing was changed')
      expect(unknown).toEqual([lost])
    })
  }

  it('lost during COMMIT and found kept once the database answers: answered as committed', async () => {
    const {queue, unknown, looked} = failingQueue('postgres', lost, true, {kept: true, decideAgain: []})
    expect(await queue.push(() => 'made', {})).toBe('made')
    expect(unknown).toEqual([lost])
    expect(looked).toEqual([true])
    expect(queue.writeFault).toBeNull()
  })

  it('lost during COMMIT and not found on PostgreSQL: run again, twice at most, then nothing was changed', async () => {
    const {queue, looked} = failingQueue('postgres', lost, true, {kept: false})
    const err = await answer(queue)
    expect(err.detail).toContain('nothing was changed')
    expect(err.detail).not.toContain(OUTCOME_UNKNOWN)
    expect(looked).toEqual([false, false, false])
  })

  it('lost during COMMIT, not found, and committed when run again: answered as committed', async () => {
    let runs = 0
    const all = new Changes()
    all.consumers.add('c1')
    const run = {outcomes: [{ok: true, value: 'made'}], all, threw: null}
    const queue = new WriteQueue(
      {kind: 'postgres', server: true, durable: () => Promise.resolve()} as never,
      {distrust() {}, settled() {}, publish() {}} as never,
      {sync: async () => {}} as never,
      {
        commit: async () =>
          ++runs === 1 ? {committed: false, run, error: lost, committing: true, lost: {after: 7, image: '{}'}} : {committed: true, run},
        findLost: async () => ({kept: false}),
      } as never,
      new Turns(),
      {onWrite: null, othersServed: null, observer: null} as never,
    )
    expect(await queue.push(() => 'made', {})).toBe('made')
    expect(runs).toBe(2)
  })

  for (const why of ['no-answer', 'not-proven'] as const)
    it(`lost during COMMIT and ${why === 'no-answer' ? 'the database not answering' : 'not sure (Galera)'}: it may or may not have been kept, and that is said after the loss`, async () => {
      const {queue, unknown, looked} = failingQueue('mysql', lost, true, {kept: null, why})
      expect((await answer(queue)).detail).toContain(OUTCOME_UNKNOWN)
      expect(unknown).toEqual([lost])
      expect(looked).toEqual([why])
    })

  it('lost during COMMIT, too large to be looked for: the loss is followed by why it stays unknown', async () => {
    const {queue, looked} = failingQueue('postgres', lost, true)
    expect((await answer(queue)).detail).toContain(OUTCOME_UNKNOWN)
    expect(looked).toEqual(['too-large'])
  })

  it('a COMMIT a Galera node failed out of the primary component is not told as a lost connection', async () => {
    const refused = Object.assign(
      new Error('Error while appending streaming replication fragment(provider status: Not connected to Primary Component)'),
      {errno: 1180, code: 'ER_ERROR_DURING_COMMIT', sqlState: 'HY000'},
    )
    const {queue} = failingQueue('mysql', refused, true, {kept: null, why: 'not-proven'})
    const err = await answer(queue)
    expect(err.detail).toContain(OUTCOME_UNKNOWN)
    expect(err.detail).toContain('failed the commit')
    expect(err.detail).not.toContain('connection')
  })

  it('lost before COMMIT was sent: nothing was changed', async () => {
    const {queue, unknown} = failingQueue('postgres', lost, false)
    const err = await answer(queue)
    expect(err.detail).toContain('nothing was changed')
    expect(unknown).toEqual([])
  })

  it('committed, but its sync failed: 503 saying it may or may not have been kept', async () => {
    const all = new Changes()
    all.consumers.add('c1')
    const queue = new WriteQueue(
      {kind: 'sqlite', durable: () => Promise.reject(Object.assign(new Error('fdatasync: EIO'), {code: 'EIO'}))} as never,
      {distrust() {}, settled() {}, publish() {}} as never,
      {sync: async () => {}} as never,
      {commit: async () => ({committed: true, run: {outcomes: [{ok: true, value: undefined}], all, threw: null}})} as never,
      new Turns(),
      {onWrite: null, othersServed: null, observer: null} as never,
    )
    const err = await answer(queue)
    expect(err.detail).toContain(OUTCOME_UNKNOWN)
  })

  it('on SQLite (the commit is the process’s own): nothing was changed', async () => {
    const {queue} = failingQueue('sqlite', Object.assign(new Error('disk I/O error'), {code: 'SQLITE_IOERR'}), true)
    expect((await answer(queue)).detail).toContain('nothing was changed')
  })
})
