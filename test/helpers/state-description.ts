/**
 * What a State and its candidates index say, as plain data independent of object identity and
 * index positions: two processes that follow the same database must describe it the same.
 *
 * `keyOrder`: compare a provider's inventories and a consumer's allocations whatever their order.
 * A MariaDB store loaded afresh holds them in the primary key's order (InnoDB has no other row
 * order to read them in), one that followed the writes in the order they were written.
 */
import {rollupsOf} from '../../src/core/rollups.js'
import {expect} from 'vitest'
import type {Index} from '../../src/core/candidates/provider-index.js'
import type {State} from '../../src/core/state/state.js'

/** What an index says about the State, by uuid: independent of positions. */
export function describeIndex(ix: Index, {keyOrder = false} = {}): unknown {
  const uuid = (i: number) => (i < 0 ? null : ix.provs[i].uuid)
  const providers: unknown[] = []
  const order: string[] = []
  for (let i = 0; i < ix.n; i++) {
    if (!ix.live(i)) continue
    const p = ix.provs[i]
    order.push(p.uuid)
    const slots = []
    for (let s = ix.slotStart[i]; s < ix.slotStart[i] + ix.slotCount[i]; s++) {
      expect(ix.slotProv[s]).toBe(i)
      slots.push([ix.slotRc[s], ix.slotCap[s], ix.slotMin[s], ix.slotMax[s], ix.slotStep[s], ix.used(s)])
    }
    if (keyOrder) slots.sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1))
    const summary = ix.summary(i)
    const members = ix.root[i] === i ? [...ix.treeMembers(i)].map(uuid) : null
    providers.push({
      uuid: p.uuid,
      parent: uuid(ix.parent[i]),
      root: uuid(ix.root[i]),
      depth: ix.depth[i],
      sharing: ix.isSharing[i],
      slots,
      members,
      summary: keyOrder ? {...summary, resources: [...summary.resources].sort((a, b) => (a.rc < b.rc ? -1 : 1))} : summary,
      anchors: ix.isSharing[i] ? [...ix.sharingAnchors(i)].map(uuid) : null,
    })
  }
  const classes: Record<string, unknown> = {}
  for (const [rc, list] of [...ix.rcs].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!list.provs.length) continue
    const slotOf = ix.slotOf(list)
    classes[rc] = [...list.provs].map((p, k) => {
      expect(slotOf[p]).toBe(list.slots[k])
      expect(ix.slotRc[list.slots[k]]).toBe(rc)
      return uuid(p)
    })
  }
  const idx = ix.idx()
  expect(idx.size).toBe(order.length)
  for (const u of order) expect(ix.provs[idx.get(u)!].uuid).toBe(u)
  return {providers, classes, hasTrees: ix.hasTrees, anySharing: ix.anySharing}
}

const sorted = <T>(xs: Iterable<T>) => [...xs].sort()
const entries = <V>(m: Map<string, V>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** Everything the State holds, providers in their order (the order lists and searches use). */
export function describeState(s: State, {keyOrder = false} = {}): unknown {
  const inOrder = <V>(m: Map<string, V>) => (keyOrder ? entries(m) : [...m])
  const providers = [...s.providers.values()].map((p) => ({
    uuid: p.uuid,
    name: p.name,
    seq: p.seq,
    generation: p.generation,
    parent: p.parent,
    root: p.root,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    inventories: inOrder(p.inventories), // in order: answers list classes in it
    traits: sorted(p.traits),
    aggregates: sorted(p.aggregates),
    children: sorted(p.children),
    usages: entries(p.usages),
    allocations: entries(p.allocations).map(([c, a]) => [c, entries(a)]),
  }))
  const consumers = entries(s.consumers).map(([, c]) => ({
    uuid: c.uuid,
    project: c.project,
    user: c.user,
    type: c.type,
    generation: c.generation,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    allocations: inOrder(c.allocations).map(([p, a]) => [p, inOrder(a)]), // in order: answers list them in it
  }))
  return {
    providers,
    byName: entries(s.providerByName).map(([n, p]) => [n, p.uuid]),
    consumers,
    classes: entries(s.classes).map(([, c]) => ({...c})),
    traits: entries(s.traits).map(([, t]) => ({...t})),
    aggregateMembers: entries(s.aggregateMembers).map(([a, m]) => [a, sorted(m)]),
    topology: entries(s.topology).map(([, n]) => ({...n})),
    groups: entries(s.groups).map(([, g]) => ({...g, members: [...g.members]})),
    moved: entries(s.moved).map(([, m]) => ({...m})),
    aggregateNames: entries(s.aggregateNames).map(([, n]) => ({...n})),
    topologyGeneration: s.topologyGeneration,
    // Kept as the State changes (core/rollups.ts): a followed State's must equal a fresh one's.
    rollups: describeRollups(s),
  }
}

function describeRollups(s: State): unknown {
  const c = rollupsOf(s).cloudSums()
  return {
    capacity: entries(c.capacity),
    used: entries(c.used),
    providers: c.providers,
    holding: c.holding,
    topology: rollupsOf(s)
      .topologySums()
      .map((v) => ({uuid: v.uuid, level: v.level, name: v.name, capacity: entries(v.capacity), used: entries(v.used)})),
  }
}
