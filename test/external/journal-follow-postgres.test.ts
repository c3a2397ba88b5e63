/** The journal-following scenario (test/helpers/journal-follow.ts) on PostgreSQL: two daemons and the command line. */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {followRun as run} from '../helpers/journal-follow.js'
import {postgresAvailable, startPostgres, type TestPostgres} from '../helpers/postgres.js'

describe.skipIf(!postgresAvailable)('processes following one PostgreSQL database', () => {
  let pg: TestPostgres
  beforeAll(async () => {
    pg = await startPostgres()
  }, 60_000)
  afterAll(() => pg?.stop())

  it('two daemons and the command line: every State and index equal a fresh load after every write', async () => {
    const {failures, refusals, catchUps} = await run(await pg.database(), ['daemon A', 'daemon B', 'cli'], [4, 5], 70)
    expect(failures).toBeGreaterThan(3)
    expect(refusals).toBeGreaterThan(2)
    // Small writes travel as their rows (one read of the journal); a failed write's keys are read again.
    expect(catchUps.images).toBeGreaterThan(50)
    expect(catchUps.rows).toBeGreaterThan(0)
  }, 240_000)
})
