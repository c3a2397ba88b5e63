/**
 * The State as plain data, column by column, with each distinct inventory record, inventory set,
 * trait set and aggregate set written once and named by its index: what a daemon leaves beside
 * its SQLite file at a clean stop, so that its next start reads one file and the few changes
 * since (store/state-image-file.ts), not every row of every table. 100,000 providers alike are a
 * few megabytes, read back in a tenth of the time their rows take.
 *
 * The image is of the State, not of the database: decoding it gives the State a load of the
 * same rows gives (test/api/state-image.test.ts holds the two equal).
 */
import {holdLoaded, nextIdsAfterLoad} from './load.js'
import type {AggregateName} from '../aggregate-names.js'
import type {Group} from '../groups.js'
import {newProvider, type Consumer, type Inventory, type MovedConsumer, type State, type TopologyNode} from './state.js'

/** Bumped whenever what an image holds, or how, changes: an image of another format is not read. */
export const STATE_IMAGE_FORMAT = 2

type Named = [name: string, id: number, createdAt: number, updatedAt: number]
type Record6 = [total: number, reserved: number, min_unit: number, max_unit: number, step_size: number, allocation_ratio: number]

export interface StateImage {
  format: typeof STATE_IMAGE_FORMAT
  /** The journal position the State was at, and the seq the next provider made gets. */
  at: number
  nextSeq: number
  topologyGeneration: number
  classes: Named[]
  traits: Named[]
  topology: TopologyNode[]
  groups: Array<Omit<Group, 'members'> & {members: string[]}>
  moved: MovedConsumer[]
  aggregateNames: AggregateName[]
  /** Distinct inventory records; an inventory set is class, record index, class, record index... */
  records: Record6[]
  inventorySets: Array<Array<string | number>>
  traitSets: string[][]
  aggregateSets: string[][]
  /**
   * In the State's order (seq order); parent and root are indexes into `uuid` (-1: none; a root
   * of -1 is the provider itself). Times and seqs are each the difference from the one before
   * (most are 0 or 1): a million providers' image is a third smaller, and read as much faster.
   */
  providers: {
    uuid: string[]
    name: string[]
    generation: number[]
    parent: number[]
    root: number[]
    createdAt: number[]
    updatedAt: number[]
    seq: number[]
    inventories: number[]
    traits: number[]
    aggregates: number[]
    disabled: Array<[index: number, reason: string]>
  }
  /** Allocations per consumer: provider index, class, amount, provider index, class, amount... */
  consumers: {
    uuid: string[]
    project: string[]
    user: string[]
    type: Array<string | null>
    generation: number[]
    createdAt: number[]
    updatedAt: number[]
    allocations: Array<Array<number | string>>
  }
}

/** Numbers each distinct object once, in the order first met. */
class Numbering<T extends object> {
  readonly list: T[] = []
  private readonly index = new Map<T, number>()
  of(x: T): number {
    let k = this.index.get(x)
    if (k === undefined) {
      this.index.set(x, (k = this.list.length))
      this.list.push(x)
    }
    return k
  }
}

/** `s` as an image at journal position `at`, with `nextSeq` the seq the next provider gets. */
export function encodeStateImage(s: State, at: number, nextSeq: number): StateImage {
  const records = new Numbering<Inventory>()
  const inventorySets = new Numbering<Map<string, Inventory>>()
  const traitSets = new Numbering<Set<string>>()
  const aggregateSets = new Numbering<Set<string>>()
  const indexOf = new Map<string, number>()
  let k = 0
  for (const uuid of s.providers.keys()) indexOf.set(uuid, k++)
  const providers: StateImage['providers'] = {
    uuid: [],
    name: [],
    generation: [],
    parent: [],
    root: [],
    createdAt: [],
    updatedAt: [],
    seq: [],
    inventories: [],
    traits: [],
    aggregates: [],
    disabled: [],
  }
  for (const p of s.providers.values()) {
    const i = providers.uuid.length
    providers.uuid.push(p.uuid)
    providers.name.push(p.name)
    providers.generation.push(p.generation)
    providers.parent.push(p.parent === null ? -1 : (indexOf.get(p.parent) ?? -1))
    providers.root.push(p.root === p.uuid ? -1 : (indexOf.get(p.root) ?? -1))
    providers.createdAt.push(p.createdAt)
    providers.updatedAt.push(p.updatedAt)
    providers.seq.push(p.seq)
    providers.inventories.push(inventorySets.of(p.inventories))
    providers.traits.push(traitSets.of(p.traits))
    providers.aggregates.push(aggregateSets.of(p.aggregates))
    if (p.disabledReason !== undefined) providers.disabled.push([i, p.disabledReason])
  }
  const consumers: StateImage['consumers'] = {
    uuid: [],
    project: [],
    user: [],
    type: [],
    generation: [],
    createdAt: [],
    updatedAt: [],
    allocations: [],
  }
  for (const c of s.consumers.values()) {
    consumers.uuid.push(c.uuid)
    consumers.project.push(c.project)
    consumers.user.push(c.user)
    consumers.type.push(c.type)
    consumers.generation.push(c.generation)
    consumers.createdAt.push(c.createdAt)
    consumers.updatedAt.push(c.updatedAt)
    const held: Array<number | string> = []
    for (const [puuid, amounts] of c.allocations) {
      const i = indexOf.get(puuid)
      if (i === undefined) continue
      for (const [rc, used] of amounts) held.push(i, rc, used)
    }
    consumers.allocations.push(held)
  }
  const named = (m: State['classes']): Named[] => [...m.values()].map((r) => [r.name, r.id, r.createdAt, r.updatedAt])
  return {
    format: STATE_IMAGE_FORMAT,
    at,
    nextSeq,
    topologyGeneration: s.topologyGeneration,
    classes: named(s.classes),
    traits: named(s.traits),
    topology: [...s.topology.values()],
    groups: [...s.groups.values()].map((g) => ({...g, members: [...g.members]})),
    moved: [...s.moved.values()],
    aggregateNames: [...s.aggregateNames.values()],
    inventorySets: inventorySets.list.map((m) => [...m].flatMap(([rc, inv]) => [rc, records.of(inv)])),
    records: records.list.map((v) => [v.total, v.reserved, v.min_unit, v.max_unit, v.step_size, v.allocation_ratio]),
    traitSets: traitSets.list.map((t) => [...t]),
    aggregateSets: aggregateSets.list.map((a) => [...a]),
    providers: {...providers, createdAt: deltas(providers.createdAt), updatedAt: deltas(providers.updatedAt), seq: deltas(providers.seq)},
    consumers: {...consumers, createdAt: deltas(consumers.createdAt), updatedAt: deltas(consumers.updatedAt)},
  }
}

/** Each number less the one before it (the first as it is). */
function deltas(xs: number[]): number[] {
  const out = new Array<number>(xs.length)
  for (let k = 0; k < xs.length; k++) out[k] = k ? xs[k] - xs[k - 1] : xs[k]
  return out
}

/** deltas undone, in place. */
function sums(ds: number[]): number[] {
  for (let k = 1; k < ds.length; k++) ds[k] += ds[k - 1]
  return ds
}

/**
 * Makes `s` (empty) what `img` holds, as a load of the same rows would (store/state-loader.ts): one
 * shared copy of each distinct collection, trees linked, usages summed from the allocations.
 * Throws on an image that is not whole (the caller loads from the database instead).
 */
export function decodeStateImage(img: StateImage, s: State): void {
  if (img.format !== STATE_IMAGE_FORMAT) throw new Error(`state image format ${img.format}, not ${STATE_IMAGE_FORMAT}`)
  for (const [name, id, createdAt, updatedAt] of img.classes) s.classes.set(name, {id, name, createdAt, updatedAt})
  for (const [name, id, createdAt, updatedAt] of img.traits) s.traits.set(name, {id, name, createdAt, updatedAt})
  nextIdsAfterLoad(s)
  for (const node of img.topology) s.topology.set(node.uuid, node)
  for (const g of img.groups) s.groups.set(g.name, {...g, members: new Set(g.members)})
  for (const m of img.moved) s.moved.set(m.uuid, m)
  for (const a of img.aggregateNames) s.aggregateNames.set(a.uuid, a)
  s.topologyGeneration = img.topologyGeneration

  // One string per class and trait name, as the loader keeps them.
  const className = (rc: string) => s.classes.get(rc)?.name ?? rc
  const shared = s.shared
  const records = img.records.map((r) => shared.recordOf(r[0], r[1], r[2], r[3], r[4], r[5]))
  const inventorySets = img.inventorySets.map((keys) =>
    shared.inventorySet(keys.map((x, k) => (k % 2 ? records[x as number] : className(x as string)))),
  )
  const traitSets = img.traitSets.map((names) => shared.traits(names.map((n) => s.traits.get(n)?.name ?? n)))
  const aggregateSets = img.aggregateSets.map((uuids) => shared.aggregates(uuids))

  const P = img.providers
  const n = P.uuid.length
  const createdAt = sums(P.createdAt)
  const updatedAt = sums(P.updatedAt)
  const seq = sums(P.seq)
  for (const column of [P.name, P.generation, P.parent, P.root, P.createdAt, P.updatedAt, P.seq, P.inventories, P.traits, P.aggregates]) {
    if (column.length !== n) throw new Error('state image: provider columns of unequal length')
  }
  const all = new Array(n)
  for (let i = 0; i < n; i++) {
    const uuid = P.uuid[i]
    const name = P.name[i]
    const p = newProvider(uuid, name === uuid ? uuid : name, null, createdAt[i])
    p.generation = P.generation[i]
    p.updatedAt = updatedAt[i]
    p.seq = seq[i]
    p.inventories = inventorySets[P.inventories[i]]
    p.traits = traitSets[P.traits[i]]
    p.aggregates = aggregateSets[P.aggregates[i]]
    if (!p.inventories || !p.traits || !p.aggregates) throw new Error('state image: a provider names a collection it does not hold')
    all[i] = p
    s.providers.set(uuid, p)
    s.providerByName.set(p.name, p)
  }
  for (const [i, reason] of P.disabled) all[i].disabledReason = reason
  for (let i = 0; i < n; i++) {
    const p = all[i]
    const parent = P.parent[i]
    p.parent = parent < 0 ? null : all[parent].uuid
    p.root = P.root[i] < 0 ? p.uuid : all[P.root[i]].uuid
    if (parent >= 0) s.adopt(all[parent], p.uuid)
    s.listMember(p)
  }

  const C = img.consumers
  const consumedAt = sums(C.createdAt)
  const consumerUpdatedAt = sums(C.updatedAt)
  for (let i = 0; i < C.uuid.length; i++) {
    const uuid = C.uuid[i]
    const c: Consumer = {
      uuid,
      project: C.project[i],
      user: C.user[i],
      type: C.type[i],
      generation: C.generation[i],
      createdAt: consumedAt[i],
      updatedAt: consumerUpdatedAt[i],
      allocations: new Map(),
    }
    s.consumers.set(uuid, c)
    const held = C.allocations[i]
    for (let k = 0; k < held.length; k += 3) holdLoaded(c, all[held[k] as number], className(held[k + 1] as string), held[k + 2] as number)
  }
  // Built without the State's mutation methods, as a load is: its sums are added up anew when asked.
  s.listener.forgetAll()
}
