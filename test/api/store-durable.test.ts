import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import SQLite from 'better-sqlite3'
import {createProvider} from '../../src/core/placement/providers.js'
import {Store} from '../../src/store/store.js'
import {SyncChoice, type SyncMethod} from '../../src/store/sync-choice.js'

// A serving SQLite store answers a write once the WAL is on disk: SQLite writes the frames at
// COMMIT (synchronous NORMAL) and the store syncs the WAL itself, from Node's thread pool or, for
// a commit nobody is queued behind, inline when that is timed cheaper (sync-choice.ts).
let dir: string
let held: ((err: NodeJS.ErrnoException | null) => void)[]
let calls: number

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-durable-'))
  held = []
  calls = 0
})
afterEach(() => {
  vi.restoreAllMocks()
  fs.rmSync(dir, {recursive: true, force: true})
})

/** A commit alone synced by `method`, whatever the timings say. */
const pinSync = (method: SyncMethod) => vi.spyOn(SyncChoice.prototype, 'forCommitAlone').mockReturnValue(method)

/** fs.fdatasync (the pool's, which every commit takes here) held until the test lets it finish (all of them so far with `release`). */
function holdSyncs() {
  pinSync('pool')
  const real = fs.fdatasync
  vi.spyOn(fs, 'fdatasync').mockImplementation(((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
    calls++
    held.push((err) => (err ? cb(err) : real(fd, cb)))
  }) as typeof fs.fdatasync)
  return (err: NodeJS.ErrnoException | null = null) => held.splice(0).forEach((done) => done(err))
}

const settled = async (p: Promise<unknown>) => {
  let state = 'pending'
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  )
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
  return state
}

describe('a serving SQLite store', () => {
  it('answers a write only once the WAL is synced, and the commits made meanwhile share the next sync', async () => {
    const file = path.join(dir, 'p.db')
    const store = await Store.open(file, {backgroundCheckpoint: true})
    const raw = new SQLite(file, {readonly: true})
    try {
      const release = holdSyncs()
      const first = store.write((s, now) => createProvider(s, now, {name: 'a'}))
      expect(await settled(first)).toBe('pending')
      expect(calls).toBe(1)
      // Committed already (another connection sees it), and the State shows it to reads.
      expect(raw.prepare('select count(*) from resource_providers').pluck().get()).toBe(1)
      expect([...store.state.providers.values()].map((p) => p.name)).toEqual(['a'])
      // Two more while the first sync runs: one sync after it covers both.
      const second = store.write((s, now) => createProvider(s, now, {name: 'b'}))
      const third = store.write((s, now) => createProvider(s, now, {name: 'c'}))
      expect(await settled(second)).toBe('pending')
      expect(calls).toBe(1)
      release()
      await first
      expect(await settled(second)).toBe('pending')
      expect(calls).toBe(2)
      release()
      await Promise.all([second, third])
      expect(calls).toBe(2)
    } finally {
      vi.restoreAllMocks()
      raw.close()
      await store.close()
    }
  })

  it('answers 503 when the sync fails: the write is not acknowledged', async () => {
    const file = path.join(dir, 'p.db')
    const store = await Store.open(file, {backgroundCheckpoint: true})
    try {
      const release = holdSyncs()
      const write = store.write((s, now) => createProvider(s, now, {name: 'a'}))
      await settled(write)
      release(Object.assign(new Error('EIO: i/o error, fdatasync'), {code: 'EIO'}))
      await expect(write).rejects.toMatchObject({status: 503})
      vi.restoreAllMocks()
      // The next write is answered again.
      await store.write((s, now) => createProvider(s, now, {name: 'b'}))
    } finally {
      vi.restoreAllMocks()
      await store.close()
    }
  })

  it('syncs a commit alone inline when that is the cheaper here: answered after the sync, refused with 503 when it fails', async () => {
    pinSync('inline')
    const inline = vi.spyOn(fs, 'fdatasyncSync')
    const pool = vi.spyOn(fs, 'fdatasync')
    const file = path.join(dir, 'p.db')
    const store = await Store.open(file, {backgroundCheckpoint: true})
    try {
      await store.write((s, now) => createProvider(s, now, {name: 'a'}))
      expect(inline).toHaveBeenCalledTimes(1)
      expect(pool).not.toHaveBeenCalled()
      inline.mockImplementationOnce(() => {
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), {code: 'EIO'})
      })
      await expect(store.write((s, now) => createProvider(s, now, {name: 'b'}))).rejects.toMatchObject({status: 503})
      // The next write is answered again.
      await store.write((s, now) => createProvider(s, now, {name: 'c'}))
      expect(inline).toHaveBeenCalledTimes(3)
    } finally {
      vi.restoreAllMocks()
      await store.close()
    }
  })

  it('syncs in the pool while other requests are being served, however cheap inline is: the loop is left to them', async () => {
    pinSync('inline')
    const inline = vi.spyOn(fs, 'fdatasyncSync')
    const pool = vi.spyOn(fs, 'fdatasync')
    const file = path.join(dir, 'p.db')
    const store = await Store.open(file, {backgroundCheckpoint: true})
    let others = true
    store.othersServed = () => others
    try {
      await store.write((s, now) => createProvider(s, now, {name: 'a'}))
      expect(pool).toHaveBeenCalledTimes(1)
      expect(inline).not.toHaveBeenCalled()
      others = false
      await store.write((s, now) => createProvider(s, now, {name: 'b'}))
      expect(inline).toHaveBeenCalledTimes(1)
      expect(pool).toHaveBeenCalledTimes(1)
    } finally {
      vi.restoreAllMocks()
      await store.close()
    }
  })

  it('starts the WAL again from its beginning under a steady stream of writes, long before the safety net (64 MB)', async () => {
    // SQLite starts the WAL again (a new salt in its header) only once every frame in it is copied
    // into the database; a write landing while the checkpointer copies would keep that from ever
    // happening, and every commit would then extend the file.
    const file = path.join(dir, 'p.db')
    const store = await Store.open(file, {backgroundCheckpoint: true})
    const wal = fs.openSync(`${file}-wal`, 'r')
    const salt = () => {
      const header = Buffer.alloc(4)
      fs.readSync(wal, header, 0, 4, 16)
      return header.toString('hex')
    }
    try {
      let last = salt()
      let restarts = 0
      const until = Date.now() + 15_000
      for (let n = 0; restarts < 4 && Date.now() < until; n++) {
        await store.write((s, now) => createProvider(s, now, {name: `p${n}`}))
        if (salt() !== last) {
          restarts++
          last = salt()
        }
      }
      expect(restarts).toBe(4)
      expect(fs.fstatSync(wal).size).toBeLessThan(32 * 1024 * 1024)
    } finally {
      fs.closeSync(wal)
      await store.close()
    }
  })

  it('leaves the syncing to SQLite with --durability normal and for a store that does not serve', async () => {
    const inline = vi.spyOn(fs, 'fdatasyncSync')
    const release = holdSyncs()
    const normal = await Store.open(path.join(dir, 'n.db'), {backgroundCheckpoint: true, durability: 'normal'})
    const plain = await Store.open(path.join(dir, 'p.db'))
    try {
      await normal.write((s, now) => createProvider(s, now, {name: 'a'}))
      await plain.write((s, now) => createProvider(s, now, {name: 'a'}))
      expect(calls).toBe(0)
      expect(inline).not.toHaveBeenCalled()
      release()
    } finally {
      await normal.close()
      await plain.close()
    }
  })
})
