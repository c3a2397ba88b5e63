/**
 * A node following what a newer release wrote into the journal (store/journal.ts readImage,
 * readKeys): an image of a format or shape it does not know is not used (it reads the rows the
 * keys name, and the image's own rows never reach the State), and a key of a kind it does not
 * know makes it load the State whole; neither is misapplied. The newer release's transactions are
 * written here by hand, as raw SQL, the way its writes would land in the tables.
 */
import SQLite from 'better-sqlite3'
import {describe, expect, it} from 'vitest'
import {Store} from '../../src/store/store.js'
import {Q, newFile, seed, watched} from '../helpers/journal-shapes.js'

describe('a node following a newer release on SQLite', () => {
  it('loads the State whole when the journal names a key of a kind it does not know', async () => {
    const file = newFile()
    const a = await Store.open(file)
    await seed(a)
    const b = await watched(file)
    try {
      const raw = new SQLite(file)
      raw.exec('begin immediate')
      const seq = Number((raw.prepare("select value from placemat_meta where key = 'change_counter'").get() as {value: string}).value) + 1
      raw.prepare("update resource_providers set name = 'q-renamed' where uuid = ?").run(Q)
      raw
        .prepare("insert into placemat_changes (seq, kind, key, parts) values (?, 'r', 'reservation-1', 0), (?, 'p', ?, 1)")
        .run(seq, seq, Q)
      raw.prepare("update placemat_meta set value = ? where key = 'change_counter'").run(String(seq))
      raw.exec('commit')
      raw.close()
      const s = await b.store.refresh()
      expect(b.reloads).toEqual(['the journal names a change of a kind this release does not know (a newer release wrote it)'])
      expect(s.providers.get(Q)?.name).toBe('q-renamed')
      expect(await b.store.health()).toMatchObject({status: 'ok', journal: {position: seq, head: seq}})
    } finally {
      await b.store.close()
      await a.close()
    }
  })
})
