/**
 * Hosts by the shape of their tree, so that a flavor's candidates are searched once per shape,
 * not once per host. A host's candidates, and their order, depend on its tree (providers, their
 * parents, inventories, traits), on the sharing providers it reaches, and (for a request that
 * names aggregates) on its aggregates; never on what is used, which only decides which of them
 * fit now. So the candidates of one host of a shape, searched on a copy of its tree with nothing
 * used, are every host's of that shape, each provider named by its place in the tree: counting a
 * host's fit is then walking that list with the host's own usage (headroom.ts).
 */
import {capacityOf} from '../inventory-capacity.js'
import {candidateSlots, findCandidates} from '../candidates/engine.js'
import type {CandidateRequest} from '../candidates/request.js'
import {everyHost, isDisabled, isSharing} from '../host.js'
import {stateFromSnapshot} from '../snapshot.js'
import {providerRecord} from '../wire.js'
import type {Inventory, Provider, State} from '../state/state.js'

/** What every tree of a shape has alike, read from its first host. */
export interface TreeShape {
  /** The first host of the shape (by host number). */
  host: number
  /** Providers of the tree itself; the pools it reaches follow them. */
  treeSize: number
  /** Every (member, class) of the members' inventories, in order. */
  pairs: ReadonlyArray<{member: number; rc: string}>
  /** What each pair holds: its inventory's capacity. */
  capacity: Float64Array
  /** Each pair's class number (HostForest.classes), -1 for a sharing provider's. */
  pairClass: Int32Array
  /** 1 where the pair's member is a sharing provider. */
  pairSharing: Uint8Array
  /** The classes of the tree's own providers, in the order they first appear. */
  classes: Int32Array
  /** Each pair's pool pair (HostForest.poolPairs) for a sharing provider's, -1 for the tree's own. */
  poolPair: Int32Array
}

/**
 * Every host's tree, flat: host i's members are members[memberAt[i] .. memberAt[i + 1]) (its
 * tree depth first, then the pools it reaches), its pairs pairAt[i] .. pairAt[i + 1] of a free
 * vector (freeNow), in its shape's order.
 */
export interface HostForest {
  hosts: readonly Provider[]
  /** 1 for a disabled host (its trait is part of its shape). */
  disabled: Uint8Array
  shapes: TreeShape[]
  shapeOf: Int32Array
  members: Provider[]
  memberAt: Int32Array
  pairAt: Int32Array
  /** The classes the trees have, numbered. */
  classes: string[]
  /** Every (sharing provider, class) some host reaches, numbered: what hosts of a domain draw on together. */
  poolPairs: Array<{provider: Provider; rc: string}>
  /** Candidates found so far, by request, by shape (a daemon's catalog is asked again at every scrape). */
  readonly candidates: WeakMap<CandidateRequest, Array<ShapeCandidates | undefined>>
  /** Shapes told apart by their members' aggregates too, made when a request first names aggregates. */
  byAggregates?: {shapeOf: Int32Array; host: number[]}
}

/**
 * A shape's candidates, in the engine's order, flat: candidate c takes amount[t] of pair[t]
 * (TreeShape.pairs; one member and class summed over its groups) for t in start[c] .. start[c + 1].
 */
export interface ShapeCandidates {
  start: Int32Array
  pair: Int32Array
  amount: Float64Array
  /** Whether a candidate takes from a sharing provider. */
  sharing: boolean
}

/**
 * The cloud's hosts and their trees, worked out once for all flavors, and kept while the cloud's
 * shape stands (usage does not change it; State.shapeVersion moves with anything that does).
 */
export function hostForest(s: State): HostForest {
  const kept = forests.get(s)
  if (kept && kept.shapeVersion === s.shapeVersion && kept.providers === s.providers.size && sameHosts(s, kept.forest.hosts))
    return kept.forest
  const forest = plantForest(s, everyHost(s))
  forests.set(s, {shapeVersion: s.shapeVersion, providers: s.providers.size, forest})
  return forest
}
const forests = new WeakMap<State, {shapeVersion: number; providers: number; forest: HostForest}>()

/** Whether the first and last hosts are still the State's own: a reload makes every provider anew (its shapeVersion moves too). */
const sameHosts = (s: State, hosts: readonly Provider[]): boolean =>
  hosts.length === 0 ||
  (s.providers.get(hosts[0].uuid) === hosts[0] && s.providers.get(hosts[hosts.length - 1].uuid) === hosts[hosts.length - 1])

/** What a shape's members are, to tell a tree of it without describing the tree. */
interface Model {
  shape: number
  size: number
  parents: Int32Array
  members: Provider[]
  rcs: string[][]
  invs: Inventory[][]
  traits: string[][]
}

/** Shapes matched against before a tree is described: hosts made alike mostly come together. */
const RECENT = 8

function plantForest(s: State, hosts: readonly Provider[]): HostForest {
  // The sharing providers of each aggregate, once (a room's aggregate has thousands of hosts), in the State's order.
  const sharingIn = new Map<string, Provider[]>()
  const order = new Map<Provider, number>()
  for (const p of s.providers.values()) {
    if (!isSharing(p)) continue
    order.set(p, order.size)
    for (const a of p.aggregates) {
      const list = sharingIn.get(a)
      if (list) list.push(p)
      else sharingIn.set(a, [p])
    }
  }
  const members: Provider[] = []
  const parents: number[] = []
  // Depth first, as State.subtree; each member's parent by its place in the tree.
  const walk = (p: Provider, parent: number): void => {
    const at = parents.length
    members.push(p)
    parents.push(parent)
    for (const c of p.children) {
      const child = s.providers.get(c)
      if (child) walk(child, at)
    }
  }
  const forest: HostForest = {
    hosts,
    disabled: Uint8Array.from(hosts, (h) => (isDisabled(h) ? 1 : 0)),
    shapes: [],
    shapeOf: new Int32Array(hosts.length),
    members,
    memberAt: new Int32Array(hosts.length + 1),
    pairAt: new Int32Array(hosts.length + 1),
    classes: [],
    poolPairs: [],
    candidates: new WeakMap(),
  }
  const poolIndex = new Map<string, number>()
  const classIndex = new Map<string, number>()
  const models: Model[] = []
  const described = new Map<string, number>()
  const recent: Model[] = []
  let pairCount = 0
  hosts.forEach((host, i) => {
    const base = members.length
    parents.length = 0
    walk(host, -1)
    const treeSize = members.length - base
    if (sharingIn.size) {
      const pools = new Set<Provider>()
      for (let k = base; k < base + treeSize; k++)
        for (const a of members[k].aggregates) for (const q of sharingIn.get(a) ?? []) if (q.root !== host.uuid) pools.add(q)
      members.push(...[...pools].sort((a, b) => order.get(a)! - order.get(b)!))
    }
    const size = members.length - base
    let model = recent.find((m) => sameTree(m, members, base, size, parents))
    if (!model) {
      const description = describe(members, base, size, parents)
      const known = described.get(description)
      if (known === undefined) {
        model = modelOf(models.length, members, base, size, parents)
        models.push(model)
        described.set(description, model.shape)
        forest.shapes.push(shapeOf(i, members, base, size, treeSize, classIndex, forest.classes, poolIndex, forest.poolPairs))
      } else model = models[known]
    }
    // Most recently matched first.
    const at = recent.indexOf(model)
    if (at !== 0) {
      if (at > 0) recent.splice(at, 1)
      else if (recent.length === RECENT) recent.pop()
      recent.unshift(model)
    }
    forest.shapeOf[i] = model.shape
    forest.memberAt[i + 1] = members.length
    pairCount += forest.shapes[model.shape].pairs.length
    forest.pairAt[i + 1] = pairCount
  })
  return forest
}

/** Whether the tree at members[base .. base + size) (its parents' places in `parents`) is the model's shape. */
function sameTree(m: Model, members: Provider[], base: number, size: number, parents: number[]): boolean {
  if (m.size !== size) return false
  for (let k = 0; k < size; k++) {
    const p = members[base + k]
    const q = m.members[k]
    if (p === q) continue
    if (k >= parents.length) return false // a pool, named by its uuid
    if (parents[k] !== m.parents[k]) return false
    if (p.inventories !== q.inventories) {
      if (p.inventories.size !== m.rcs[k].length) return false
      let j = 0
      for (const [rc, v] of p.inventories) {
        const w = m.invs[k][j]
        if (rc !== m.rcs[k][j++]) return false
        if (v !== w && !sameInventory(v, w)) return false
      }
    }
    if (p.traits !== q.traits) {
      if (p.traits.size !== m.traits[k].length) return false
      let j = 0
      for (const t of p.traits) if (t !== m.traits[k][j++]) return false
    }
  }
  return true
}

const sameInventory = (a: Inventory, b: Inventory): boolean =>
  a.total === b.total &&
  a.reserved === b.reserved &&
  a.min_unit === b.min_unit &&
  a.max_unit === b.max_unit &&
  a.step_size === b.step_size &&
  a.allocation_ratio === b.allocation_ratio

function modelOf(shape: number, members: Provider[], base: number, size: number, parents: number[]): Model {
  const own = members.slice(base, base + size)
  return {
    shape,
    size,
    parents: Int32Array.from(parents),
    members: own,
    rcs: own.map((p) => [...p.inventories.keys()]),
    invs: own.map((p) => [...p.inventories.values()]),
    traits: own.map((p) => [...p.traits]),
  }
}

/**
 * A tree told in words: each member's place (a pool by its uuid), inventories and traits (in the
 * order the State keeps them: hosts made alike list them alike; others only count apart).
 */
function describe(members: Provider[], base: number, size: number, parents: number[]): string {
  let d = ''
  for (let k = 0; k < size; k++) {
    const p = members[base + k]
    d += k < parents.length ? String(parents[k]) : p.uuid
    for (const [rc, v] of p.inventories)
      d += `|${rc}:${v.total}:${v.reserved}:${v.min_unit}:${v.max_unit}:${v.step_size}:${v.allocation_ratio}`
    for (const t of p.traits) d += `|${t}`
    d += '\n'
  }
  return d
}

function shapeOf(
  host: number,
  members: Provider[],
  base: number,
  size: number,
  treeSize: number,
  classIndex: Map<string, number>,
  classes: string[],
  poolIndex: Map<string, number>,
  poolPairs: HostForest['poolPairs'],
): TreeShape {
  const pairs: Array<{member: number; rc: string}> = []
  const capacity: number[] = []
  const pairClass: number[] = []
  const pairSharing: number[] = []
  const poolPair: number[] = []
  const own: number[] = []
  for (let member = 0; member < size; member++) {
    const p = members[base + member]
    const sharing = isSharing(p)
    for (const [rc, inv] of p.inventories) {
      pairs.push({member, rc})
      capacity.push(capacityOf(inv))
      pairSharing.push(sharing ? 1 : 0)
      if (sharing) {
        pairClass.push(-1)
        const key = `${p.uuid} ${rc}`
        let g = poolIndex.get(key)
        if (g === undefined) {
          poolIndex.set(key, (g = poolPairs.length))
          poolPairs.push({provider: p, rc})
        }
        poolPair.push(g)
        continue
      }
      poolPair.push(-1)
      let c = classIndex.get(rc)
      if (c === undefined) {
        classIndex.set(rc, (c = classes.length))
        classes.push(rc)
      }
      pairClass.push(c)
      if (member < treeSize && !own.includes(c)) own.push(c)
    }
  }
  return {
    host,
    treeSize,
    pairs,
    capacity: Float64Array.from(capacity),
    pairClass: Int32Array.from(pairClass),
    pairSharing: Uint8Array.from(pairSharing),
    classes: Int32Array.from(own),
    poolPair: Int32Array.from(poolPair),
  }
}

/** Whether a request's answer depends on the providers' aggregates (beyond the pools they reach). */
export const namesAggregates = (r: CandidateRequest): boolean => r.groups.some((g) => g.memberOf.length > 0 || g.forbiddenAggs.size > 0)

/** The forest's shapes told apart by their members' aggregates too (for a request that names them). */
export function shapesByAggregates(forest: HostForest): NonNullable<HostForest['byAggregates']> {
  if (forest.byAggregates) return forest.byAggregates
  const shapeOf = new Int32Array(forest.hosts.length)
  const host: number[] = []
  const known = new Map<string, number>()
  for (let i = 0; i < forest.hosts.length; i++) {
    let key = `${forest.shapeOf[i]}`
    for (let k = forest.memberAt[i]; k < forest.memberAt[i + 1]; k++) key += `\n${[...forest.members[k].aggregates].sort().join(',')}`
    let n = known.get(key)
    if (n === undefined) {
      known.set(key, (n = host.length))
      host.push(i)
    }
    shapeOf[i] = n
  }
  return (forest.byAggregates = {shapeOf, host})
}

/**
 * The candidates of host `i`'s shape for `request`, in the engine's order: searched on a copy of
 * its tree with nothing used. None when nothing could ever fit there (or the request names a class
 * or trait nobody has).
 */
export function shapeCandidates(s: State, forest: HostForest, i: number, request: CandidateRequest): ShapeCandidates {
  const none: ShapeCandidates = {start: new Int32Array(1), pair: new Int32Array(0), amount: new Float64Array(0), sharing: false}
  const host = forest.hosts[i]
  const shape = forest.shapes[forest.shapeOf[i]]
  const members = forest.members.slice(forest.memberAt[i], forest.memberAt[i + 1])
  const copy = stateFromSnapshot(
    {
      classes: [...s.classes.keys()],
      traits: [...s.traits.keys()],
      // Nothing used; a pool is a root of its own here.
      providers: members.map((p) => ({
        ...providerRecord(p),
        usages: {},
        ...(p.root !== host.uuid ? {parent_provider_uuid: null, root_provider_uuid: p.uuid} : {}),
      })),
    },
    0,
  )
  let slots
  try {
    slots = candidateSlots(findCandidates(copy, request))
  } catch {
    return none
  }
  if (!slots) return none
  const index = new Map(members.map((p, k) => [p.uuid, k]))
  const pairOf = (member: number, rc: string): number => shape.pairs.findIndex((x) => x.member === member && x.rc === rc)
  const start = [0]
  const pair: number[] = []
  const amount: number[] = []
  let sharing = false
  for (let at = 0; at < slots.rows.length; at += slots.S) {
    const from = pair.length
    let onHost = false
    for (let d = 0; d < slots.S; d++) {
      const member = index.get(slots.providers[slots.rows[at + d]].uuid)!
      for (const [rc, n] of slots.slotResources[d]) {
        if (member < shape.treeSize) onHost = true
        else sharing = true
        const k = pairOf(member, rc)
        const same = pair.indexOf(k, from)
        if (same >= 0) amount[same] += n
        else {
          pair.push(k)
          amount.push(n)
        }
      }
    }
    // One made of sharing providers alone places nothing on a host.
    if (onHost) start.push(pair.length)
    else pair.length = amount.length = from
  }
  return {start: Int32Array.from(start), pair: Int32Array.from(pair), amount: Float64Array.from(amount), sharing}
}

/**
 * Each host's candidates for `request`, by host number: its shape's (told apart by its members'
 * aggregates too when the request names aggregates), searched once per shape and kept with the
 * forest (a daemon's catalog is asked again at every scrape).
 */
export function candidatesByHost(s: State, forest: HostForest, request: CandidateRequest): (i: number) => ShapeCandidates {
  const byAggregates = namesAggregates(request) ? shapesByAggregates(forest) : null
  const shapeOf = byAggregates ? byAggregates.shapeOf : forest.shapeOf
  let found = forest.candidates.get(request)
  if (!found) forest.candidates.set(request, (found = []))
  const kept = found
  return (i) => (kept[shapeOf[i]] ??= shapeCandidates(s, forest, byAggregates ? byAggregates.host[shapeOf[i]] : i, request))
}
