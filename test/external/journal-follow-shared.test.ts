/** The journal-following scenario (test/helpers/journal-follow.ts) on PostgreSQL and on MariaDB: two daemons and the command line. */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {followRun as run} from '../helpers/journal-follow.js'
import {mariadbAvailable, startMariadb} from '../helpers/mariadb.js'
import {postgresAvailable, startPostgres} from '../helpers/postgres.js'

/** A database server of one kind: a new, empty database's URL (placemat's), and stopping it. */
interface Server {
  database(): Promise<string>
  stop(): Promise<void>
}

/** `keyOrder`: see test/helpers/state-description.ts. */
const servers: Array<{kind: string; available: boolean; keyOrder?: boolean; start: () => Promise<Server>}> = [
  {kind: 'PostgreSQL', available: postgresAvailable, start: startPostgres},
  {
    kind: 'MariaDB',
    available: mariadbAvailable,
    keyOrder: true,
    start: async () => {
      const server = await startMariadb()
      return {database: () => server.placematDatabase(), stop: () => server.stop()}
    },
  },
]

for (const s of servers) describe.skipIf(!s.available)(`processes following one ${s.kind} database`, () => followCases(s))

function followCases({keyOrder, start}: (typeof servers)[number]) {
  let server: Server
  beforeAll(async () => {
    server = await start()
  }, 60_000)
  afterAll(() => server?.stop())

  it('two daemons and the command line: every State and index equal a fresh load after every write', async () => {
    const {failures, refusals, catchUps} = await run(await server.database(), ['daemon A', 'daemon B', 'cli'], [4, 5], 70, {keyOrder})
    expect(failures).toBeGreaterThan(3)
    expect(refusals).toBeGreaterThan(2)
    // Small writes travel as their rows (one read of the journal); a failed write's keys are read again.
    expect(catchUps.images).toBeGreaterThan(50)
    expect(catchUps.rows).toBeGreaterThan(0)
  }, 240_000)
}
