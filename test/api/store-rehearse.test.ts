/**
 * A rehearsal runs a batch on the store's own State as a write would, refusing what it would
 * refuse, and leaves the file and every later read as if it had never run.
 */
import {describe, expect, it} from 'vitest'
import {tempFiles} from '../helpers/temp-files.js'
import {Store} from '../../src/store/store.js'
import {runBatch} from '../../src/core/batch.js'
import {PlacementError} from '../../src/core/errors.js'

const newFile = tempFiles('placemat-rehearse-')
const U = (n: number) => `dddddddd-0000-0000-0000-${String(n).padStart(12, '0')}`

describe('store rehearsal', () => {
  it('sees the batch run, then reads and writes the file as it was', async () => {
    const store = await Store.open(newFile(), {migrate: true})
    await store.write((s, now) => runBatch(s, now, [{op: 'create_provider', uuid: U(1), name: 'kept'}]))
    const seen = await store.rehearse((s, now) => {
      runBatch(s, now, [
        {op: 'create_provider', uuid: U(2), name: 'tried'},
        {op: 'delete_provider', uuid: U(1)},
      ])
      return [...s.providers.values()].map((p) => p.name)
    })
    expect(seen).toEqual(['tried'])
    expect(await store.read((s) => [...s.providers.values()].map((p) => p.name))).toEqual(['kept'])
    // A write after it starts from the file, not from the rehearsed State.
    await store.write((s, now) => runBatch(s, now, [{op: 'create_provider', uuid: U(3), name: 'after'}]))
    expect(await store.read((s) => [...s.providers.values()].map((p) => p.name).sort())).toEqual(['after', 'kept'])
    await store.close()
    const again = await Store.open(store.file)
    expect(await again.read((s) => [...s.providers.values()].map((p) => p.name).sort())).toEqual(['after', 'kept'])
    await again.close()
  })

  it('refuses what the write would refuse, and forgets what ran before the refusal', async () => {
    const store = await Store.open(newFile(), {migrate: true})
    const tried = store.rehearse((s, now) =>
      runBatch(s, now, [
        {op: 'create_provider', uuid: U(1), name: 'a'},
        {op: 'set_inventories', uuid: U(1), inventories: {VCPU: {total: 4, reserved: 8}}},
      ]),
    )
    await expect(tried).rejects.toThrow(PlacementError)
    expect(await store.read((s) => s.providers.size)).toBe(0)
    await store.close()
  })
})
