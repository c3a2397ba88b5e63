/**
 * Hosts by the shape of their tree, so that a flavor's candidates are searched once per shape,
 * not once per host. A host's candidates, and their order, depend on its tree (providers, their
 * parents, inventories, traits), on the sharing providers it reaches, and (for a request that
 * names aggregates) on its aggregates; never on what is used, which only decides which of them
 * fit now. So the candidates of one host of a shape, searched on a copy of its tree with nothing
 * used, are every host's of that shape, each provider named by its place in the tree: counting a
 * host's fit is then walking that list with the host's own usage (headroom.ts).
 */
import {capacityOf} from './capacity.js'
import {candidateSlots, findCandidates} from './candidates/engine.js'
import type {CandidateRequest} from './candidates/request.js'
import {isSharing} from './host.js'
import {stateFromSnapshot} from './snapshot.js'
import {providerRecord} from './wire.js'
import type {Provider, State} from './state.js'

/** A host's tree and the pools it reaches, in the order the engine sees them. */
export interface HostTree {
  host: Provider
  /** The tree's providers (depth first from the host), then the sharing providers it reaches. */
  members: Provider[]
  /** Every (member, class) of its inventories, in order: the same for every tree of a shape. */
  pairs: Array<{member: number; rc: string}>
  /** The tree's shape, without aggregates and with them. */
  shape: string
  readonly shapeWithAggregates: string
}

/**
 * A shape's candidates, each as what it takes of the tree's (member, class) pairs (HostTree.pairs;
 * amounts of one member and class summed over its groups).
 */
export interface ShapeCandidates {
  candidates: Array<Array<{pair: number; amount: number}>>
  /** Whether a candidate takes from a sharing provider. */
  sharing: boolean
}

/**
 * Every host's tree, worked out once for all flavors, and kept while the cloud's shape stands
 * (usage does not change it; State.shapeVersion moves with anything that does).
 */
export function hostTrees(s: State, hosts: readonly Provider[]): HostTree[] {
  const kept = treesOf.get(s)
  if (kept && kept.shapeVersion === s.shapeVersion && kept.hosts.length === hosts.length && kept.hosts.every((h, i) => h === hosts[i])) {
    // The very providers the State holds (a reload makes new ones).
    if (kept.trees.every((t) => t.members.every((p) => s.providers.get(p.uuid) === p))) return kept.trees
  }
  const order = new Map<string, number>()
  // The sharing providers of each aggregate, once (a room's aggregate has thousands of hosts).
  const sharingIn = new Map<string, Provider[]>()
  let i = 0
  for (const p of s.providers.values()) {
    order.set(p.uuid, i++)
    if (!isSharing(p)) continue
    for (const a of p.aggregates) {
      const list = sharingIn.get(a)
      if (list) list.push(p)
      else sharingIn.set(a, [p])
    }
  }
  const trees = hosts.map((host): HostTree => {
    const tree = s.subtree(host.uuid)
    const pools = new Set<Provider>()
    for (const p of tree) for (const a of p.aggregates) for (const q of sharingIn.get(a) ?? []) if (q.root !== host.uuid) pools.add(q)
    const members = [...tree, ...[...pools].sort((a, b) => order.get(a.uuid)! - order.get(b.uuid)!)]
    const at = new Map(tree.map((p, k) => [p.uuid, k]))
    // Each member: its place (a pool by its uuid), inventories, traits (in the order the State keeps them:
    // hosts made alike list them alike; others only count apart).
    const describe = (p: Provider, k: number) => {
      let d = k < tree.length ? String(p.parent === null ? -1 : at.get(p.parent)) : p.uuid
      for (const [rc, v] of p.inventories)
        d += `|${rc}:${v.total}:${v.reserved}:${v.min_unit}:${v.max_unit}:${v.step_size}:${v.allocation_ratio}`
      for (const t of p.traits) d += `|${t}`
      return d
    }
    const shape = members.map(describe).join('\n')
    const pairs: HostTree['pairs'] = []
    members.forEach((p, member) => {
      for (const rc of p.inventories.keys()) pairs.push({member, rc})
    })
    let withAggregates: string | undefined
    return {
      host,
      members,
      pairs,
      shape,
      get shapeWithAggregates() {
        return (withAggregates ??= `${shape}\n${members.map((p) => [...p.aggregates].sort().join(',')).join('\n')}`)
      },
    }
  })
  treesOf.set(s, {shapeVersion: s.shapeVersion, hosts, trees})
  return trees
}
const treesOf = new WeakMap<State, {shapeVersion: number; hosts: readonly Provider[]; trees: HostTree[]}>()

/**
 * The candidates found so far for `request`, by shape, kept while the cloud's shape stands (a
 * daemon's catalog is asked again at every scrape); `shapeCandidates` fills it.
 */
export function keptShapes(s: State, request: CandidateRequest): Map<string, ShapeCandidates> {
  let kept = candidatesOf.get(s)
  if (!kept || kept.shapeVersion !== s.shapeVersion) candidatesOf.set(s, (kept = {shapeVersion: s.shapeVersion, byRequest: new WeakMap()}))
  let byShape = kept.byRequest.get(request)
  if (!byShape) kept.byRequest.set(request, (byShape = new Map()))
  return byShape
}
const candidatesOf = new WeakMap<State, {shapeVersion: number; byRequest: WeakMap<CandidateRequest, Map<string, ShapeCandidates>>}>()

/** Whether a request's answer depends on the providers' aggregates (beyond the pools they reach). */
export const namesAggregates = (r: CandidateRequest): boolean => r.groups.some((g) => g.memberOf.length > 0 || g.forbiddenAggs.size > 0)

/**
 * The candidates of `tree`'s shape for `request`, in the engine's order: searched on a copy of the
 * tree with nothing used. Empty when nothing could ever fit there (or the request names a class or
 * trait nobody has).
 */
export function shapeCandidates(s: State, tree: HostTree, request: CandidateRequest): ShapeCandidates {
  const out: ShapeCandidates = {candidates: [], sharing: false}
  const pools = new Set(tree.members.filter((p) => p.root !== tree.host.uuid))
  const copy = stateFromSnapshot(
    {
      classes: [...s.classes.keys()],
      traits: [...s.traits.keys()],
      // Nothing used; a pool is a root of its own here.
      providers: tree.members.map((p) => ({
        ...providerRecord(p),
        usages: {},
        ...(pools.has(p) ? {parent_provider_uuid: null, root_provider_uuid: p.uuid} : {}),
      })),
    },
    0,
  )
  let slots
  try {
    slots = candidateSlots(findCandidates(copy, request))
  } catch {
    return out
  }
  if (!slots) return out
  const index = new Map(tree.members.map((p, k) => [p.uuid, k]))
  const pairOf = (member: number, rc: string): number => tree.pairs.findIndex((x) => x.member === member && x.rc === rc)
  for (let at = 0; at < slots.rows.length; at += slots.S) {
    const terms: Array<{pair: number; amount: number}> = []
    let onHost = false
    for (let d = 0; d < slots.S; d++) {
      const member = index.get(slots.providers[slots.rows[at + d]].uuid)!
      for (const [rc, amount] of slots.slotResources[d]) {
        if (!pools.has(tree.members[member])) onHost = true
        else out.sharing = true
        const pair = pairOf(member, rc)
        const same = terms.find((t) => t.pair === pair)
        if (same) same.amount += amount
        else terms.push({pair, amount})
      }
    }
    // One made of sharing providers alone places nothing on a host.
    if (onHost) out.candidates.push(terms)
  }
  return out
}

/** What is free now of each of a tree's (member, class) pairs: capacity less usage. */
export function freeNow(tree: HostTree): Float64Array {
  const free = new Float64Array(tree.pairs.length)
  tree.pairs.forEach(({member, rc}, k) => {
    const p = tree.members[member]
    free[k] = capacityOf(p.inventories.get(rc)!) - (p.usages.get(rc) ?? 0)
  })
  return free
}

/** Free amounts of a host's pairs while its fit is counted (one host at a time). */
let scratch = new Float64Array(64)

/**
 * How many times a host's candidates can be claimed in a row with `free` now (freeNow): the
 * first that still fits, as many times as it fits (usage only grows: one that no longer fits
 * never fits again, and the others keep their order). `taken` gets, per pool, what one instance
 * takes of it.
 */
export function fitInARow(tree: HostTree, shape: ShapeCandidates, free: Float64Array, taken?: Map<string, Map<string, number>>): number {
  if (scratch.length < free.length) scratch = new Float64Array(free.length * 2)
  const left = scratch
  left.set(free)
  let fit = 0
  for (const c of shape.candidates) {
    let times = Infinity
    for (const t of c) times = Math.min(times, Math.floor(left[t.pair] / t.amount))
    if (!(times >= 1)) continue
    fit += times
    for (const t of c) {
      left[t.pair] -= t.amount * times
      if (!taken) continue
      const {member, rc} = tree.pairs[t.pair]
      const p = tree.members[member]
      if (!isSharing(p)) continue
      let m = taken.get(p.uuid)
      if (!m) taken.set(p.uuid, (m = new Map()))
      if (!m.has(rc)) m.set(rc, t.amount)
    }
  }
  return fit
}
