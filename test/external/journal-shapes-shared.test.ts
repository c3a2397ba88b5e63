/**
 * A node following what a newer release wrote into the journal (store/journal.ts readImage,
 * readKeys): an image of a format or shape it does not know is not used (it reads the rows the
 * keys name, and the image's own rows never reach the State), and a key of a kind it does not
 * know makes it load the State whole; neither is misapplied. The newer release's transactions are
 * written here by hand, as raw SQL, the way its writes would land in the tables: double-quoted
 * names and `?` parameters, one text for both servers, under each one's writers' lock.
 */
import mysql from 'mysql2/promise'
import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {putAllocationErrors, writeAllocations} from '../../src/core/placement/allocations.js'
import {mariadbAvailable, startMariadb} from '../helpers/mariadb.js'
import {postgresAvailable, startPostgres} from '../helpers/postgres.js'
import {C, P, Q, seed, watched} from '../helpers/journal-shapes.js'

type Query = (text: string, values?: unknown[]) => Promise<Array<Record<string, unknown>>>

/** A database server of one kind: a new database's URL, a transaction as a writer of placemat makes one, and stopping it. */
interface Server {
  database(): Promise<string>
  /** `fn` in one transaction that holds the writers' lock, committed when it returns. */
  locked<T>(url: string, fn: (q: Query) => Promise<T>): Promise<T>
  stop(): Promise<void>
}

/**
 * On both, an allocation write goes in one round trip that commits only if its keys stood still
 * (commitKeyed): a State behind an image it cannot read is refused there ('moved') and written
 * again.
 */
const servers: Array<{kind: string; available: boolean; start: () => Promise<Server>}> = [
  {
    kind: 'PostgreSQL',
    available: postgresAvailable,
    start: async () => {
      const server = await startPostgres()
      return {
        database: () => server.database(),
        async locked(url, fn) {
          const c = new pg.Client({connectionString: url})
          await c.connect()
          try {
            await c.query('begin')
            await c.query('select pg_advisory_xact_lock(1886154100)')
            const out = await fn(async (text, values) => {
              let n = 0
              return (
                await c.query(
                  text.replace(/\?/g, () => `$${++n}`),
                  values,
                )
              ).rows
            })
            await c.query('commit')
            return out
          } finally {
            await c.end()
          }
        },
        stop: () => server.stop(),
      }
    },
  },
  {
    kind: 'MariaDB',
    available: mariadbAvailable,
    start: async () => {
      const server = await startMariadb()
      return {
        database: () => server.placematDatabase(),
        async locked(url, fn) {
          const c = await mysql.createConnection(url)
          try {
            await c.query("set session sql_mode = 'ANSI_QUOTES'")
            await c.query('start transaction')
            // The change counter's row, the lock placemat's writers take on MariaDB (mysql-backend.ts).
            await c.query(`select "value" from placemat_meta where "key" = 'change_counter' for update`)
            const out = await fn(async (text, values) => (await c.query(text, values))[0] as Array<Record<string, unknown>>)
            await c.query('commit')
            return out
          } finally {
            await c.end()
          }
        },
        stop: () => server.stop(),
      }
    },
  },
]

for (const s of servers) describe.skipIf(!s.available)(`a node following a newer release on ${s.kind}`, () => shapesCases(s))

function shapesCases({start}: (typeof servers)[number]) {
  let server: Server
  beforeAll(async () => {
    server = await start()
  }, 60_000)
  afterAll(() => server?.stop())

  /** One transaction of the "newer release": Q renamed in its row, its key journalled, and the image `body` (format `format`) claiming otherwise. */
  function newerWrite(url: string, name: string, body: (seq: number) => object, format: number, extraKey?: [string, string, number]) {
    return server.locked(url, async (q) => {
      const seq = Number((await q(`select "value" from placemat_meta where "key" = 'change_counter'`))[0].value) + 1
      await q('update resource_providers set name = ? where uuid = ?', [name, Q])
      await q(`insert into placemat_changes (seq, kind, "key", parts) values (?, 'p', ?, 1)`, [seq, Q])
      if (extraKey) await q('insert into placemat_changes (seq, kind, "key", parts) values (?, ?, ?, ?)', [seq, ...extraKey])
      await q('insert into placemat_change_images (seq, body, format) values (?, ?, ?)', [seq, JSON.stringify(body(seq)), format])
      await q(`update placemat_meta set "value" = ? where "key" = 'change_counter'`, [String(seq)])
      return seq
    })
  }
  const claims =
    (name: string, keys: unknown[] = [['p', Q, 1]]) =>
    () => ({
      keys,
      rows: {
        providers: [
          {uuid: Q, name, generation: 0, parent_uuid: null, root_uuid: Q, created_at: 0, updated_at: 0, seq: 2, disabled_reason: null},
        ],
      },
    })

  it('reads the rows instead of an image of another format or shape, and loads whole for an unknown kind', async () => {
    const url = await server.database()
    const a = await watched(url)
    await seed(a.store)
    const b = await watched(url)
    try {
      // Another format: the image says q-wrong, the row says q-right.
      await newerWrite(url, 'q-right', claims('q-wrong'), 2)
      expect((await b.store.refresh()).providers.get(Q)?.name).toBe('q-right')
      // A field this release does not know, in the format it reads.
      await newerWrite(url, 'q-right-2', (seq) => ({v: 2, ...claims('q-wrong-2')(), seq}), 1)
      expect((await b.store.refresh()).providers.get(Q)?.name).toBe('q-right-2')
      expect(b.catchUps.filter((f) => f === 'images')).toEqual([])
      expect(b.reloads).toEqual([])
      // A kind of key it does not know, in the journal and the image: loaded whole.
      const seq = await newerWrite(
        url,
        'q-right-3',
        claims('q-wrong-3', [
          ['p', Q, 1],
          ['r', 'reservation-1', 0],
        ]),
        1,
        ['r', 'reservation-1', 0],
      )
      expect((await b.store.refresh()).providers.get(Q)?.name).toBe('q-right-3')
      expect(b.reloads).toEqual(['the journal names a change of a kind this release does not know (a newer release wrote it)'])
      expect(await b.store.health()).toMatchObject({journal: {position: seq, head: seq}})

      // A keyed write made on a State behind an image it cannot read: the check (v2) refuses it,
      // and it commits under the lock after reading the rows.
      await newerWrite(url, 'q-right-4', claims('q-wrong-4'), 2)
      await a.store.write(
        (s, now) =>
          writeAllocations(s, now, [{uuid: C, allocations: new Map([[P, new Map([['VCPU', 1]])]]), project: 'p', user: 'u'}], {
            checkGeneration: false,
            ...putAllocationErrors(C),
          }),
        {selfContained: true},
      )
      expect(a.retries).toContain('moved')
      const s = await a.store.refresh()
      expect(s.providers.get(Q)?.name).toBe('q-right-4')
      expect(s.consumers.get(C)?.allocations.get(P)?.get('VCPU')).toBe(1)
      expect((await b.store.refresh()).consumers.get(C)?.allocations.get(P)?.get('VCPU')).toBe(1)
    } finally {
      await b.store.close()
      await a.store.close()
    }
  })
}
