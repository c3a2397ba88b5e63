/**
 * The provider index follows writes by patching what they changed. Whatever the sequence of
 * writes (providers made, re-parented, deleted and made again; inventories, traits, aggregates,
 * sharing; allocations; another process's commits to the same file; writes that fail), the
 * patched index must describe the State exactly as an index built from scratch does, and
 * answer every query the same.
 */
import {depth} from '../helpers/depth.js'
import {describe, expect, it} from 'vitest'
import {tempFiles} from '../helpers/temp-files.js'
import {rng} from '../helpers/rng.js'
import {Store} from '../../src/store/store.js'
import {applyBatch, type BatchOperation} from '../../src/core/batch.js'
import {writeAllocations, putAllocationErrors} from '../../src/core/placement/allocations.js'
import {getIndex, Index, dropIndex} from '../../src/core/candidates/provider-index.js'
import {describeIndex} from '../helpers/state-description.js'
import {findCandidates, filterProviders} from '../../src/core/candidates/engine.js'
import {parseCandidateRequest, parseProviderFilters} from '../../src/core/candidates/request.js'
import type {State} from '../../src/core/state/state.js'

const newFile = tempFiles('placemat-index-')

const QUERIES = [
  'resources=VCPU:1',
  'resources=VCPU:1,MEMORY_MB:64&required=CUSTOM_A',
  'resources=DISK_GB:10',
  'resources=VCPU:1,DISK_GB:5&group_policy=none',
  'resources1=VCPU:1&resources2=CUSTOM_X:1&group_policy=isolate',
  'resources1=VCPU:1&resources2=CUSTOM_X:1&group_policy=none&same_subtree=1,2',
  'resources=VCPU:1&member_of=in:' + agg(0) + ',' + agg(1),
  'resources=MEMORY_MB:128&required=!CUSTOM_B&root_required=CUSTOM_A',
  'required=CUSTOM_A&resources=VCPU:1&limit=3',
]
const LISTS = ['', 'required=CUSTOM_A', 'resources=VCPU:2', 'member_of=' + agg(1), 'in_tree=' + puuid(0)]

function agg(k: number): string {
  return `aaaaaaaa-0000-0000-0000-${String(k).padStart(12, '0')}`
}
function puuid(k: number): string {
  return `bbbbbbbb-0000-0000-0000-${String(k).padStart(12, '0')}`
}

function params(qs: string): Map<string, string[]> {
  const m = new Map<string, string[]>()
  for (const [k, v] of new URLSearchParams(qs)) m.set(k, [...(m.get(k) ?? []), v])
  return m
}

/** Every query's answer, as JSON (errors included). */
function answers(state: State): string[] {
  const out: string[] = []
  for (const q of QUERIES) {
    try {
      const r = findCandidates(state, parseCandidateRequest(params(q), [1, 39]))
      out.push(JSON.stringify([r.providerSummaries, r.allocationRequests]))
    } catch (e) {
      out.push(String((e as Error).message))
    }
  }
  for (const q of LISTS) {
    try {
      out.push(
        filterProviders(state, parseProviderFilters(params(q), [1, 39]))
          .map((p) => p.uuid)
          .join(),
      )
    } catch (e) {
      out.push(String((e as Error).message))
    }
  }
  return out
}

/** One random write of any kind, as batch operations or an allocation write. */
function randomWrite(s: State, rand: () => number, next: {n: number}): (s: State, now: number) => void {
  const pick = <T>(a: T[]): T => a[Math.floor(rand() * a.length)]
  const live = [...s.providers.keys()]
  const r = rand()
  const ops: BatchOperation[] = []
  if (r < 0.25 || live.length < 3) {
    const k = next.n++
    const parent = live.length && rand() < 0.5 ? pick(live) : null
    ops.push({op: 'create_provider', uuid: puuid(k), name: `p${k}`, parent_provider_uuid: parent})
    if (rand() < 0.8) ops.push({op: 'set_inventories', uuid: puuid(k), inventories: randomInventories(rand)})
  } else if (r < 0.45) {
    ops.push({op: 'set_inventories', uuid: pick(live), inventories: randomInventories(rand)})
  } else if (r < 0.55) {
    const traits = ['CUSTOM_A', 'CUSTOM_B', 'MISC_SHARES_VIA_AGGREGATE'].filter(() => rand() < 0.4)
    ops.push({op: 'ensure_trait', name: 'CUSTOM_A'}, {op: 'ensure_trait', name: 'CUSTOM_B'})
    ops.push({op: 'set_traits', uuid: pick(live), traits})
  } else if (r < 0.65) {
    ops.push({op: 'set_aggregates', uuid: pick(live), aggregates: [0, 1, 2].filter(() => rand() < 0.4).map(agg)})
  } else if (r < 0.72) {
    // Re-parent (or un-parent) a provider, never under its own subtree.
    const p = pick(live)
    const inside = new Set(s.subtree(p).map((q) => q.uuid))
    const others = live.filter((u) => !inside.has(u))
    const parent = others.length && rand() < 0.7 ? pick(others) : null
    ops.push({op: 'update_provider', uuid: p, parent_provider_uuid: parent})
  } else if (r < 0.82) {
    const leaves = live.filter((u) => s.providers.get(u)!.children.size === 0 && s.providers.get(u)!.allocations.size === 0)
    if (leaves.length) ops.push({op: 'delete_provider', uuid: pick(leaves)})
  } else {
    // Allocations: usages change, the shape does not.
    const p = s.providers.get(pick(live))!
    const rc = [...p.inventories.keys()][0]
    const consumer = `cccccccc-0000-0000-0000-${String(Math.floor(rand() * 20)).padStart(12, '0')}`
    return (st, now) => {
      const allocations = new Map(rc ? [[p.uuid, new Map([[rc, 1]])]] : [])
      writeAllocations(st, now, [{uuid: consumer, allocations, project: 'p', user: 'u'}], {
        checkGeneration: false,
        ...putAllocationErrors(consumer),
      })
    }
  }
  return (st, now) => {
    applyBatch(st, now, ops)
  }
}

function randomInventories(rand: () => number): Record<string, unknown> {
  const inv: Record<string, unknown> = {}
  for (const rc of ['VCPU', 'MEMORY_MB', 'DISK_GB', 'CUSTOM_X']) {
    if (rand() < 0.5)
      inv[rc] = {total: 1 + Math.floor(rand() * 64), reserved: rand() < 0.2 ? 1 : 0, max_unit: 64, allocation_ratio: rand() < 0.3 ? 2 : 1}
  }
  return inv
}

async function expectCurrent(store: Store): Promise<void> {
  const state = await store.refresh()
  const patched = describeIndex(getIndex(state))
  expect(patched).toEqual(describeIndex(new Index(state)))
}

describe('the provider index, patched write by write', () => {
  it('equals an index built from scratch after random writes of every kind, from two processes, with failures', async () => {
    const file = newFile()
    const a = await Store.open(file, {migrate: true})
    const b = await Store.open(file)
    const next = {n: 0}
    await a.write((s, now) => applyBatch(s, now, [{op: 'ensure_resource_class', name: 'CUSTOM_X'}]))
    getIndex(await a.refresh())
    getIndex(await b.refresh())
    let failures = 0
    for (let seed = 1; seed <= depth(6, 2); seed++) {
      const rand = rng(seed)
      for (let step = 0; step < 60; step++) {
        const store = rand() < 0.8 ? a : b // b is another connection: a's State reloads after b's commits
        const state = await store.refresh()
        const write = randomWrite(state, rand, next)
        const fail = rand() < 0.1
        try {
          await store.write((s, now) => {
            write(s, now)
            if (fail) throw new Error('refused after changing the State')
          })
        } catch (e) {
          if (!fail && !(e as {status?: number}).status) throw e
          failures++
        }
        await expectCurrent(a)
        await expectCurrent(b)
      }
      // The answers themselves: the patched index against one built now.
      const state = await a.refresh()
      const patched = answers(state)
      dropIndex(state)
      expect(answers(state)).toEqual(patched)
    }
    expect(failures).toBeGreaterThan(depth(5, 1))
    expect((await a.refresh()).providers.size).toBeGreaterThan(10)
    await a.close()
    await b.close()
  })

  it('patches instead of rebuilding: positions of untouched providers stay, deleted ones leave a gap', async () => {
    const store = await Store.open(newFile(), {migrate: true})
    const ops: BatchOperation[] = []
    for (let k = 0; k < 50; k++)
      ops.push(
        {op: 'create_provider', uuid: puuid(k), name: `p${k}`},
        {op: 'set_inventories', uuid: puuid(k), inventories: {VCPU: {total: 4}}},
      )
    await store.write((s, now) => applyBatch(s, now, ops))
    const before = getIndex(store.state)
    await store.write((s, now) =>
      applyBatch(s, now, [
        {op: 'delete_provider', uuid: puuid(3)},
        {op: 'set_inventories', uuid: puuid(7), inventories: {DISK_GB: {total: 9}}},
      ]),
    )
    await store.write((s, now) => applyBatch(s, now, [{op: 'create_provider', uuid: puuid(3), name: 'again'}]))
    const after = getIndex(store.state)
    expect(after).toBe(before)
    expect(after.live(3)).toBe(false)
    expect(after.idx().get(puuid(3))).toBe(50)
    expect(describeIndex(after)).toEqual(describeIndex(new Index(store.state)))
    await store.close()
  })
})
