import {execFile} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {promisify} from 'node:util'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createProvider} from '../src/core/providers.js'
import {PlacementError} from '../src/core/errors.js'
import {STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS} from '../src/core/standard.js'
import {Store} from '../src/store/store.js'

const run = promisify(execFile)
let dir: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-store-'))
})
afterEach(() => fs.rmSync(dir, {recursive: true, force: true}))

describe('Store', () => {
  it('starts a new database with exactly the standard classes and traits', async () => {
    const store = await Store.open(path.join(dir, 'p.db'))
    expect([...store.state.classes.keys()]).toEqual([...STANDARD_RESOURCE_CLASSES])
    expect(store.state.traits.size).toBe(STANDARD_TRAITS.length)
    expect(store.state.providers.size).toBe(0)
    await store.close()
  })

  it('persists committed writes and reloads them', async () => {
    const file = path.join(dir, 'p.db')
    const a = await Store.open(file)
    await a.write((s, now) => createProvider(s, now, {name: 'cn1', uuid: '11111111-1111-1111-1111-111111111111'}))
    await a.close()
    const b = await Store.open(file)
    expect(b.state.providerByName.get('cn1')?.uuid).toBe('11111111-1111-1111-1111-111111111111')
    await b.close()
  })

  it('writes nothing, in the file or in memory, when the write function throws', async () => {
    const file = path.join(dir, 'p.db')
    const a = await Store.open(file)
    await expect(
      a.write((s, now) => {
        createProvider(s, now, {name: 'half', uuid: '22222222-2222-2222-2222-222222222222'})
        throw new PlacementError(400, 'changed my mind')
      }),
    ).rejects.toThrow('changed my mind')
    expect(a.state.providers.size).toBe(0)
    await a.close()
    const b = await Store.open(file)
    expect(b.state.providers.size).toBe(0)
    await b.close()
  })

  it('sees what another connection committed before its next read', async () => {
    const file = path.join(dir, 'p.db')
    const a = await Store.open(file)
    const b = await Store.open(file)
    await a.write((s, now) => createProvider(s, now, {name: 'from-a'}))
    const state = await b.refresh()
    expect(state.providerByName.has('from-a')).toBe(true)
    await a.close()
    await b.close()
  })

  it('loses no update when two processes write the same provider at once', async () => {
    const file = path.join(dir, 'p.db')
    const uuid = '33333333-3333-3333-3333-333333333333'
    const store = await Store.open(file)
    await store.write((s, now) => createProvider(s, now, {name: 'shared', uuid}))
    await store.close()
    const writer = path.resolve('test/helpers/bump-writer.mjs')
    const [x, y] = await Promise.all([
      run(process.execPath, [writer, file, uuid, '60']),
      run(process.execPath, [writer, file, uuid, '60']),
    ])
    const seen = [...JSON.parse(x.stdout), ...JSON.parse(y.stdout)].sort((m, n) => m - n)
    expect(seen).toEqual(Array.from({length: 120}, (_, i) => i + 1))
    const after = await Store.open(file)
    expect(after.state.providers.get(uuid)?.generation).toBe(120)
    await after.close()
  })
})
