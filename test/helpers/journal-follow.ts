/**
 * The scenario of test/api/journal-follow.test.ts (SQLite) and test/external/journal-follow-shared.test.ts (PostgreSQL, MariaDB).
 * Several processes on one database follow each other's commits through the change journal:
 * whatever the sequence of writes (every kind, refused ones, ones that fail after changing the
 * State), after each one every process's State and candidates index equal a fresh load of the
 * database. Each Store below has its own connection, as a daemon or a `--db` command does; the
 * "CLI" one is opened again every few writes, as commands come and go.
 */
import {expect} from 'vitest'
import {tempFiles} from './temp-files.js'
import {rng} from './rng.js'
import {describeIndex, describeState} from './state-description.js'
import {Store} from '../../src/store/store.js'
import {applyBatch, type BatchOperation} from '../../src/core/batch.js'
import {deleteAllocations, putAllocationErrors, writeAllocations} from '../../src/core/placement/allocations.js'
import {createResourceClass, deleteResourceClass, renameResourceClass} from '../../src/core/placement/resource-classes.js'
import {deleteTrait} from '../../src/core/placement/traits.js'
import {applyLayout} from '../../src/core/topology.js'
import {addMembers, createGroup, deleteGroup} from '../../src/core/group-writes.js'
import {moveAllocations} from '../../src/core/consumer-moves.js'
import {getIndex, Index} from '../../src/core/candidates/provider-index.js'
import type {State} from '../../src/core/state/state.js'

export const newFile = tempFiles('placemat-follow-')

const puuid = (k: number) => `bbbbbbbb-0000-0000-0000-${String(k).padStart(12, '0')}`
const cuuid = (k: number) => `cccccccc-0000-0000-0000-${String(k).padStart(12, '0')}`
const agg = (k: number) => `aaaaaaaa-0000-0000-0000-${String(k).padStart(12, '0')}`

type Write = (s: State, now: number) => unknown

/** One random write of any kind the State has, chosen against what `s` holds now (`selfContained`: as the allocation routes send it). */
function randomWrite(
  s: State,
  rand: () => number,
  next: {n: number; rc: number; trait: number; group: number},
): {write: Write; label: string; selfContained?: boolean} {
  const pick = <T>(a: T[]): T => a[Math.floor(rand() * a.length)]
  const live = [...s.providers.keys()]
  const r = rand()
  const batch = (label: string, ops: BatchOperation[]) => ({label, write: (st: State, now: number) => applyBatch(st, now, ops)})
  const inventories = () => {
    const inv: Record<string, unknown> = {}
    const classes = ['VCPU', 'MEMORY_MB', 'DISK_GB', ...[...s.classes.keys()].filter((c) => c.startsWith('CUSTOM_'))]
    for (const rc of classes) if (rand() < 0.4) inv[rc] = {total: 1 + Math.floor(rand() * 64), reserved: rand() < 0.2 ? 1 : 0, max_unit: 64}
    return inv
  }
  if (r < 0.15 || live.length < 3) {
    const k = next.n++
    const parent = live.length && rand() < 0.4 ? pick(live) : null
    return batch('create provider', [
      {op: 'create_provider', uuid: puuid(k), name: `p${k}`, parent_provider_uuid: parent},
      {op: 'set_inventories', uuid: puuid(k), inventories: inventories()},
    ])
  }
  if (r < 0.25) return batch('inventories', [{op: 'set_inventories', uuid: pick(live), inventories: inventories()}])
  if (r < 0.32) {
    const custom = [...s.traits.keys()].filter((t) => t.startsWith('CUSTOM_'))
    const traits = ['HW_CPU_X86_AVX2', 'MISC_SHARES_VIA_AGGREGATE', ...custom].filter(() => rand() < 0.3)
    return batch('traits', [{op: 'set_traits', uuid: pick(live), traits}])
  }
  if (r < 0.39)
    return batch('aggregates', [{op: 'set_aggregates', uuid: pick(live), aggregates: [0, 1, 2].filter(() => rand() < 0.4).map(agg)}])
  if (r < 0.44) {
    const p = pick(live)
    const inside = new Set(s.subtree(p).map((q) => q.uuid))
    const others = live.filter((u) => !inside.has(u))
    const parent = others.length && rand() < 0.6 ? pick(others) : null
    return batch('re-parent and rename', [{op: 'update_provider', uuid: p, parent_provider_uuid: parent, name: `renamed-${next.n++}`}])
  }
  const leaves = live.filter((u) => s.providers.get(u)!.children.size === 0 && s.providers.get(u)!.allocations.size === 0)
  if (r < 0.49 && leaves.length) return batch('delete provider', [{op: 'delete_provider', uuid: pick(leaves)}])
  if (r < 0.52 && leaves.length) {
    // The same uuid deleted and made again in one transaction: it moves to the end of the order.
    const u = pick(leaves)
    return batch('delete and make again', [
      {op: 'delete_provider', uuid: u},
      {op: 'create_provider', uuid: u, name: `again-${next.n++}`},
    ])
  }
  if (r < 0.68) {
    const p = s.providers.get(pick(live))!
    const rc = [...p.inventories.keys()][0]
    const consumer = cuuid(Math.floor(rand() * 12))
    return {
      label: 'allocations',
      selfContained: true,
      write: (st, now) => {
        const allocations = new Map(rc ? [[p.uuid, new Map([[rc, 1]])]] : [])
        writeAllocations(st, now, [{uuid: consumer, allocations, project: 'p', user: 'u'}], {
          checkGeneration: false,
          ...putAllocationErrors(consumer),
        })
      },
    }
  }
  if (r < 0.72) {
    const held = [...s.consumers.values()].filter((c) => c.allocations.size > 0)
    if (held.length) {
      const c = pick(held).uuid
      if (r < 0.7) return {label: 'delete allocations', selfContained: true, write: (st) => deleteAllocations(st, c)}
      // The giver's record goes and what it was is kept (a moved consumer), until it holds something again.
      const to = cuuid(Math.floor(rand() * 12))
      return {label: 'move allocations', write: (st, now) => moveAllocations(st, now, {consumer: c, to}, {allowViolations: true})}
    }
  }
  if (r < 0.76) {
    const name = `CUSTOM_RC${next.rc++}`
    return {label: 'new class', write: (st, now) => createResourceClass(st, now, name)}
  }
  if (r < 0.78) {
    const custom = [...s.classes.keys()].filter((c) => c.startsWith('CUSTOM_'))
    if (custom.length) {
      const from = pick(custom)
      const to = `CUSTOM_RC${next.rc++}`
      // Renames go where the class is used too (inventories, allocations): both follow.
      return {label: 'rename class', write: (st, now) => renameResourceClass(st, now, from, to)}
    }
  }
  if (r < 0.8) {
    const custom = [...s.classes.keys()].filter((c) => c.startsWith('CUSTOM_'))
    if (custom.length) {
      const name = pick(custom)
      return {label: 'delete class (refused while in use)', write: (st) => deleteResourceClass(st, name)}
    }
  }
  if (r < 0.83) return batch('new trait', [{op: 'ensure_trait', name: `CUSTOM_T${next.trait++}`}])
  if (r < 0.85) {
    const custom = [...s.traits.keys()].filter((t) => t.startsWith('CUSTOM_'))
    if (custom.length) {
      const name = pick(custom)
      return {label: 'delete trait (refused while in use)', write: (st) => deleteTrait(st, name)}
    }
  }
  if (r < 0.9) {
    const hosts = live.filter(() => rand() < 0.3)
    const layout = {
      rooms: [
        {
          name: 'room1',
          rows: [
            {
              name: 'row1',
              racks: [
                {name: 'rack1', hosts: hosts.slice(0, 3)},
                {name: `rack${2 + Math.floor(rand() * 2)}`, hosts: hosts.slice(3)},
              ],
            },
          ],
        },
      ],
    }
    return {label: 'topology', write: (st, now) => applyLayout(st, now, layout, undefined, {allowViolations: true})}
  }
  if (r < 0.95) {
    const groups = [...s.groups.keys()]
    const consumers = [...s.consumers.keys()]
    if (groups.length && rand() < 0.3) {
      const name = pick(groups)
      return {label: 'delete group', write: (st) => deleteGroup(st, name)}
    }
    if (groups.length && consumers.length && rand() < 0.5) {
      const name = pick(groups)
      const member = pick(consumers)
      return {label: 'group member', write: (st, now) => addMembers(st, now, name, [member], {allowViolations: true})}
    }
    const name = `g${next.group++}`
    return {
      label: 'new group',
      write: (st, now) => createGroup(st, now, {name, policy: 'anti-affinity', level: 'host'}, {allowViolations: true}),
    }
  }
  if (r < 0.975) {
    // Names move between aggregates (a name names one) and are forgotten.
    const names = [0, 1, 2].filter(() => rand() < 0.5).map((k) => ({uuid: agg(k), name: `n${Math.floor(rand() * 3)}`}))
    const unique = [...new Map(names.map((n) => [n.name, n])).values()]
    return batch('aggregate names', [{op: 'set_aggregate_names', names: unique, forget: rand() < 0.3 ? [agg(Math.floor(rand() * 3))] : []}])
  }
  // Refused before it changes anything.
  return {label: 'refused', write: (st, now) => applyBatch(st, now, [{op: 'delete_provider', uuid: puuid(999_999)}])}
}

/**
 * `count` random writes of every kind through `store`, as the processes of followRun make them
 * (refusals let be); `next` numbers what they create, shared by stores that write to one database.
 */
export async function writeRandomly(store: Store, seed: number, count: number, next = {n: 0, rc: 0, trait: 0, group: 0}): Promise<void> {
  const rand = rng(seed)
  for (let step = 0; step < count; step++) {
    const {write, selfContained} = randomWrite(await store.refresh(), rand, next)
    try {
      await store.write(write, {selfContained})
    } catch (e) {
      if (!(e as {status?: number}).status) throw e
    }
  }
}

async function expectSame(
  stores: Array<{name: string; store: Store}>,
  target: string,
  step: string,
  how: {keyOrder?: boolean},
): Promise<void> {
  const fresh = await Store.open(target)
  try {
    const want = describeState(fresh.state, how)
    const wantIndex = describeIndex(new Index(fresh.state), how)
    for (const {name, store} of stores) {
      const state = await store.refresh()
      expect(describeState(state, how), `${name}'s State after ${step}`).toEqual(want)
      expect(describeIndex(getIndex(state), how), `${name}'s index after ${step}`).toEqual(wantIndex)
    }
  } finally {
    await fresh.close()
  }
}

/** `keyOrder`: see state-description.ts (MariaDB's). */
export async function followRun(
  target: string,
  processes: string[],
  seeds: number[],
  steps: number,
  how: {keyOrder?: boolean} = {},
): Promise<{failures: number; refusals: number; catchUps: Record<string, number>}> {
  // How each process caught up with the others: from recorded images, or by reading rows.
  const catchUps: Record<string, number> = {images: 0, rows: 0}
  const open = async (name: string) => {
    const store = await Store.open(target, {migrate: true})
    store.observer = {caughtUp: (_keys, _seconds, from) => void catchUps[from]++}
    return {name, store}
  }
  const stores = []
  for (const name of processes) stores.push(await open(name))
  const next = {n: 0, rc: 0, trait: 0, group: 0}
  let failures = 0
  let refusals = 0
  for (const seed of seeds) {
    const rand = rng(seed)
    for (let step = 0; step < steps; step++) {
      const k = Math.floor(rand() * stores.length)
      // The command line comes and goes: open it again now and then.
      if (stores[k].name === 'cli' && rand() < 0.3) {
        await stores[k].store.close()
        stores[k] = await open('cli')
      }
      const {store, name} = stores[k]
      const {write, label, selfContained} = randomWrite(await store.refresh(), rand, next)
      const fail = rand() < 0.1
      const attempt = async (st: Store, w: Write, failing: boolean, self?: boolean) => {
        try {
          await st.write(
            (s, now) => {
              w(s, now)
              if (failing) throw new Error('refused after changing the State')
            },
            {selfContained: self},
          )
        } catch (e) {
          if (failing) failures++
          else if ((e as {status?: number}).status) refusals++
          else throw e
        }
      }
      // Now and then another process writes at the same time (each decided on what it held).
      const j = (k + 1 + Math.floor(rand() * (stores.length - 1))) % stores.length
      const other =
        stores.length > 1 && rand() < 0.3
          ? {...randomWrite(await stores[j].store.refresh(), rand, next), store: stores[j].store, name: stores[j].name}
          : null
      await Promise.all([
        attempt(store, write, fail, selfContained),
        other ? attempt(other.store, other.write, false, other.selfContained) : null,
      ])
      await expectSame(
        stores,
        target,
        `seed ${seed} step ${step}: ${label}${fail ? ' (failed)' : ''} by ${name}${other ? `, with ${other.label} by ${other.name}` : ''}`,
        how,
      )
    }
  }
  for (const {store} of stores) await store.close()
  return {failures, refusals, catchUps}
}
