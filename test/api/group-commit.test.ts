/**
 * Writes that arrive together are committed together (one transaction, one fsync), each in its
 * turn: the result is the one they would give one after another, a refused write changes
 * nothing and does not take the others down, and a write that fails after changing the State
 * is undone alone.
 */
import {describe, expect, it} from 'vitest'
import {tempFiles} from '../helpers/temp-files.js'
import {Store} from '../../src/store/store.js'
import {applyBatch} from '../../src/core/batch.js'
import {PlacementError} from '../../src/core/errors.js'

const newFile = tempFiles('placemat-group-')
const U = (n: number) => `eeeeeeee-0000-0000-0000-${String(n).padStart(12, '0')}`

describe('group commit', () => {
  for (const dirty of [false, true]) {
    it(`commits concurrent writes together, in order, each refused or kept on its own${dirty ? ' (one fails after changing the State)' : ''}`, async () => {
      const file = newFile()
      const store = await Store.open(file, {migrate: true})
      let groups = 0
      const queue = (store as any).writes
      const writeGroup = queue.writeGroup.bind(queue)
      queue.writeGroup = (g: unknown[]) => {
        groups++
        return writeGroup(g)
      }
      const writes: Promise<unknown>[] = []
      for (let k = 0; k < 40; k++) {
        writes.push(
          store.write((s, now) => {
            if (k % 10 === 3) throw new PlacementError(409, `refused ${k}`) // before any change
            // Each write sees the ones before it: the provider count grows one by one.
            applyBatch(s, now, [{op: 'create_provider', uuid: U(k), name: `p${k}-after-${s.providers.size}`}])
            if (dirty && k === 17) throw new Error('failed after changing the State')
            return s.providers.size
          }),
        )
      }
      const settled = await Promise.allSettled(writes)
      // Together, unless one write left the State half changed: then each is run on its own.
      if (dirty) expect(groups).toBe(41)
      else expect(groups).toBeLessThan(5)
      const kept = settled.flatMap((r, k) => (r.status === 'fulfilled' ? [k] : []))
      const refused = settled.flatMap((r, k) => (r.status === 'rejected' ? [k] : []))
      expect(refused).toEqual(dirty ? [3, 13, 17, 23, 33] : [3, 13, 23, 33])
      // The values are those of writes run one after another.
      expect(kept.map((k) => (settled[k] as PromiseFulfilledResult<number>).value)).toEqual(kept.map((_, i) => i + 1))
      await store.close()
      const again = await Store.open(file)
      expect([...again.state.providers.keys()]).toEqual(kept.map(U))
      expect([...again.state.providers.values()].map((p) => p.name)).toEqual(kept.map((k, i) => `p${k}-after-${i}`))
      await again.close()
    })
  }
})

describe('closing the store', () => {
  it('finishes every write already accepted, even more than one group holds', async () => {
    const file = newFile()
    const store = await Store.open(file, {migrate: true})
    const writes = Array.from({length: 150}, (_, k) =>
      store.write((s, now) => applyBatch(s, now, [{op: 'create_provider', uuid: U(1000 + k), name: `late-${k}`}])),
    )
    await store.close()
    await Promise.all(writes)
    const again = await Store.open(file)
    expect(again.state.providers.size).toBe(150)
    await again.close()
  })
})
