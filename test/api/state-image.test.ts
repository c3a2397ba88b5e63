/**
 * The State's image a clean close leaves beside a SQLite file (store/state-image-file.ts): a
 * store opened again from it, and from the journal's changes since, holds exactly what a load of
 * the database holds; an image that is not of the database's history, or cannot be read, is
 * never used: the State is loaded from the rows, as without one.
 */
import fs from 'node:fs'
import {sql} from 'kysely'
import {describe, expect, it} from 'vitest'
import {Store} from '../../src/store/store.js'
import {daemonFiles, evidenceOfMissingDatabase} from '../../src/daemon/paths.js'
import {getIndex, Index} from '../../src/core/candidates/provider-index.js'
import {applyBatch} from '../../src/core/batch.js'
import {STATE_IMAGE_FORMAT} from '../../src/core/state/image.js'
import {describeIndex, describeState} from '../helpers/state-description.js'
import {newFile, writeRandomly} from '../helpers/journal-follow.js'
import {depth} from '../helpers/depth.js'

/** The store at `file` from its image, and what a load of the database holds, compared. */
async function expectLoadedAsDatabase(file: string, image: string): Promise<Store> {
  const store = await Store.open(file, {stateImage: image, saveStateImage: true})
  const fresh = await Store.open(file)
  try {
    expect(describeState(store.state)).toEqual(describeState(fresh.state))
    expect(describeIndex(getIndex(store.state))).toEqual(describeIndex(new Index(fresh.state)))
  } finally {
    await fresh.close()
  }
  return store
}

async function written(
  seed: number,
  count: number,
): Promise<{file: string; image: string; next: {n: number; rc: number; trait: number; group: number}}> {
  const file = newFile()
  const image = `${file}.state`
  const next = {n: 0, rc: 0, trait: 0, group: 0}
  const store = await Store.open(file, {migrate: true, stateImage: image, saveStateImage: true})
  await writeRandomly(store, seed, count, next)
  await store.close()
  return {file, image, next}
}

describe("the State's image at a clean close", () => {
  it('is read back at the next open, with what others wrote since, as a load of the database', async () => {
    for (const seed of depth([1, 2, 3, 4], [1, 2])) {
      const {file, image, next} = await written(seed, 80)
      expect(fs.existsSync(image)).toBe(true)
      // The command line writes while no daemon runs: the journal has it.
      const cli = await Store.open(file)
      await writeRandomly(cli, seed + 100, 20, next)
      await cli.close()
      const again = await expectLoadedAsDatabase(file, image)
      expect(again.loaded?.from, `seed ${seed}`).toBe('image')
      // And it serves writes as it would have: the next image is of this State.
      await writeRandomly(again, seed + 200, 10, next)
      await again.close()
      const third = await expectLoadedAsDatabase(file, image)
      expect(third.loaded?.from).toBe('image')
      await third.close()
    }
  })

  it('is read, never written, by a store that does not own it (the command line on the file)', async () => {
    const {file, image, next} = await written(5, 40)
    const before = fs.readFileSync(image, 'utf8')
    const cli = await Store.open(file, {stateImage: image})
    expect(cli.loaded?.from).toBe('image')
    await writeRandomly(cli, 6, 20, next)
    await cli.close()
    expect(fs.readFileSync(image, 'utf8')).toBe(before)
    // The daemon's next start: the image, and the command line's writes from the journal.
    const again = await expectLoadedAsDatabase(file, image)
    expect(again.loaded?.from).toBe('image')
    await again.close()
  })

  it('is not read back onto a database restored from a copy made before that close', async () => {
    const file = newFile()
    const image = `${file}.state`
    const next = {n: 0, rc: 0, trait: 0, group: 0}
    const store = await Store.open(file, {migrate: true, stateImage: image, saveStateImage: true})
    await writeRandomly(store, 7, 40, next)
    // A copy of the database, as a backup taken while the daemon ran, then more writes.
    const backup = `${file}.backup`
    await sql`vacuum into ${backup}`.execute(store.db)
    await writeRandomly(store, 8, 40, next)
    await store.close()
    // The backup restored, then written forward past the image's position by the command line.
    for (const f of [`${file}-wal`, `${file}-shm`]) fs.rmSync(f, {force: true})
    fs.copyFileSync(backup, file)
    const cli = await Store.open(file)
    await writeRandomly(cli, 9, 60, next)
    await cli.close()
    const again = await expectLoadedAsDatabase(file, image)
    expect(again.loaded?.from).toBe('database')
    await again.close()
  })

  it('a damaged image, or one of another release, costs a load from the database and nothing else', async () => {
    const damages: Array<[string, (text: string) => string]> = [
      ['none', (t) => t],
      ['cut short', (t) => t.slice(0, t.length / 2)],
      ['of another release', (t) => t.replace(/"release":"[^"]*"/, '"release":"0.0.1"')],
      ['of another format', (t) => t.replace(`"format":${STATE_IMAGE_FORMAT}`, '"format":99')],
      // Whole JSON, but a provider names a trait set the image does not hold.
      ['naming what it lacks', (t) => t.replace(/"traits":\[(\d+)/, '"traits":[9999')],
    ]
    for (const [k, [damage, change]] of damages.entries()) {
      const {file, image} = await written(11 + k, 30)
      const text = fs.readFileSync(image, 'utf8')
      expect(change(text) === text, damage).toBe(damage === 'none')
      fs.writeFileSync(image, change(text))
      const again = await expectLoadedAsDatabase(file, image)
      expect(again.loaded?.from, damage).toBe(damage === 'none' ? 'image' : 'database')
      await again.close()
    }
  })

  it('is not used when the journal no longer reaches back to it: a change made outside it', async () => {
    const {file, image} = await written(12, 30)
    // An import or repair writes outside the journal: the floor moves past every position.
    const cli = await Store.open(file)
    await cli.write((s, now) => applyBatch(s, now, [{op: 'ensure_trait', name: 'CUSTOM_OUTSIDE'}]))
    await sql`update placemat_meta set value = (select cast(value as integer) + 1 from placemat_meta where key = 'change_counter')
      where key in ('change_counter', 'journal_floor')`.execute(cli.db)
    await cli.close()
    const again = await expectLoadedAsDatabase(file, image)
    expect(again.loaded?.from).toBe('database')
    await again.close()
  })
})

describe('a State image beside a missing database', () => {
  it('shows a database was there: a daemon does not start an empty one in its place', async () => {
    const {file} = await written(21, 5)
    const {state} = daemonFiles(file)
    fs.renameSync(`${file}.state`, state)
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, {force: true})
    expect(evidenceOfMissingDatabase(file)).toBe(state)
  })
})
