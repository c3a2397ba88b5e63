/**
 * The store on SQLite: its guarantees (test/helpers/store-behaviour.ts, also run on PostgreSQL in
 * test/external/store-postgres.test.ts) and what only a SQLite file has.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import SQLite from 'better-sqlite3'
import {createProvider} from '../../src/core/placement/providers.js'
import {Store} from '../../src/store/store.js'
import {describeStore} from '../helpers/store-behaviour.js'

let dir: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-store-'))
})
afterEach(() => fs.rmSync(dir, {recursive: true, force: true}))

describeStore('SQLite', async () => path.join(dir, 'p.db'))

describe('Store on a SQLite file only', () => {
  it('a write the database itself refuses leaves memory as the database is', async () => {
    const file = path.join(dir, 'p.db')
    const a = await Store.open(file)
    await a.write((s, now) => createProvider(s, now, {name: 'kept'}))
    // Another connection makes every new provider row fail (as a full disk or a lost
    // connection would, after the in-memory change was made).
    const other = new SQLite(file)
    other.exec(`create trigger refuse before insert on resource_providers begin select raise(abort, 'refused'); end`)
    other.close()
    await expect(a.write((s, now) => createProvider(s, now, {name: 'refused'}))).rejects.toThrow(/refused/)
    expect([...(await a.refresh()).providers.values()].map((p) => p.name)).toEqual(['kept'])
    await a.close()
  })

  it('checkpoints the WAL into the database file in the background', async () => {
    const file = path.join(dir, 'p.db')
    const a = await Store.open(file, {backgroundCheckpoint: true})
    for (let i = 0; i < 20; i++) await a.write((s, now) => createProvider(s, now, {name: `cn${i}`}))
    // The database file alone (no WAL beside it) catches up without waiting for close.
    const copy = path.join(dir, 'copy.db')
    let seen = 0
    for (let tries = 0; tries < 50 && seen < 20; tries++) {
      await new Promise((r) => setTimeout(r, 100))
      fs.copyFileSync(file, copy)
      try {
        const b = await Store.open(copy, {readonly: true})
        seen = b.state.providers.size
        await b.close()
      } catch {
        seen = 0 // not even the schema copied back yet
      }
    }
    expect(seen).toBe(20)
    await a.close()
    expect(fs.existsSync(file + '-wal')).toBe(false)
  })
})
