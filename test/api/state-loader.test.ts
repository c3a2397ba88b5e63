/**
 * The State read back from the database is the State that was written: same providers in the
 * same order, same inventories, traits, aggregates, trees and usages, even though identical
 * collections are now shared between providers (and copied before one of them changes).
 */
import {sql} from 'kysely'
import {describe, expect, it} from 'vitest'
import {tempFiles} from '../helpers/temp-files.js'
import {Store} from '../../src/store/store.js'
import {applyBatch, type BatchOperation} from '../../src/core/batch.js'
import {writeAllocations, putAllocationErrors} from '../../src/core/placement/allocations.js'
import type {State} from '../../src/core/state/state.js'

const newFile = tempFiles('placemat-loader-')
const U = (n: number) => `dddddddd-0000-0000-0000-${String(n).padStart(12, '0')}`

/** Everything the State says, as plain data in its own order. */
function describeState(s: State): unknown {
  return {
    providers: [...s.providers.values()].map((p) => ({
      uuid: p.uuid,
      name: p.name,
      generation: p.generation,
      parent: p.parent,
      root: p.root,
      inventories: [...p.inventories],
      traits: [...p.traits],
      aggregates: [...p.aggregates],
      children: [...p.children].sort(),
      usages: [...p.usages],
      allocations: [...p.allocations].map(([c, a]) => [c, [...a]]),
    })),
    consumers: [...s.consumers.values()].map((c) => ({...c, allocations: [...c.allocations].map(([p, a]) => [p, [...a]])})),
    members: [...s.aggregateMembers].map(([a, m]) => [a, [...m].sort()]).sort(),
  }
}

async function seeded(file: string): Promise<Store> {
  const store = await Store.open(file, {migrate: true})
  const ops: BatchOperation[] = [{op: 'ensure_trait', name: 'CUSTOM_A'}]
  for (let k = 0; k < 30; k++) {
    ops.push({op: 'create_provider', uuid: U(k), name: k % 2 ? `host-${k}` : U(k), parent_provider_uuid: k >= 20 ? U(k - 20) : null})
    ops.push({op: 'set_inventories', uuid: U(k), inventories: {VCPU: {total: 8}, MEMORY_MB: {total: 1024, min_unit: k % 3 ? 1 : 64}}})
    ops.push({op: 'set_traits', uuid: U(k), traits: k % 3 ? ['CUSTOM_A'] : ['CUSTOM_A', 'HW_CPU_X86_AVX2']})
    ops.push({op: 'set_aggregates', uuid: U(k), aggregates: [U(900 + (k % 2))]})
  }
  await store.write((s, now) => applyBatch(s, now, ops))
  await store.write((s, now) =>
    writeAllocations(s, now, [{uuid: U(500), allocations: new Map([[U(3), new Map([['VCPU', 2]])]]), project: 'p', user: 'u'}], {
      checkGeneration: false,
      ...putAllocationErrors(U(500)),
    }),
  )
  return store
}

describe('loading the State', () => {
  it('reads back exactly what was written, sharing identical collections between providers', async () => {
    const file = newFile()
    const store = await seeded(file)
    const written = describeState(store.state)
    await store.close()
    const again = await Store.open(file)
    expect(describeState(again.state)).toEqual(written)
    const [a, b] = [again.state.providers.get(U(1))!, again.state.providers.get(U(2))!]
    expect(a.inventories).toBe(b.inventories) // one shared copy
    expect(a.traits).toBe(b.traits)
    // Changing one provider's inventory leaves the other's alone.
    await again.write((s, now) => applyBatch(s, now, [{op: 'set_inventories', uuid: U(1), inventories: {VCPU: {total: 2}}}]))
    expect(again.state.providers.get(U(1))!.inventories.get('VCPU')!.total).toBe(2)
    expect(again.state.providers.get(U(2))!.inventories.get('VCPU')!.total).toBe(8)
    expect(again.state.providers.get(U(2))!.inventories.size).toBe(2)
    await again.close()
  })

  it('keeps providers in the order they were made even when storage order says otherwise', async () => {
    const file = newFile()
    const store = await seeded(file)
    const order = [...store.state.providers.keys()]
    // Reverse the seq numbers: the providers must come back in seq order.
    await sql`update resource_providers set seq = 1000 - seq`.execute(store.db)
    await store.close()
    const again = await Store.open(file)
    expect([...again.state.providers.keys()]).toEqual([...order].reverse())
    await again.close()
  })
})
