/**
 * The domains headroom.ts reports on, and the count of one that draws on sharing pools: what
 * hosts of a rack, row, room or the cloud add up to, by host number.
 */
import type {HeadroomLevel} from './headroom.js'
import type {Provider, State, TopologyLevel, TopologyNode} from '../state/state.js'
import {bindingOf, fitOneAfterAnother, type FitWalk} from './fit-walk.js'
import type {HostForest, ShapeCandidates} from './tree-shapes.js'

/** fit(host, X) of every host, by host number, and whether it could ever hold X (on its tree emptied). */
export interface HostFits {
  fit: Float64Array
  /** 1 where the host could ever hold the flavor. */
  eligible: Uint8Array
  /** What binds on each host once its count is done (fit-walk.ts bindingOf), -1 where it could never hold it. */
  binding: Int32Array
  /** The candidates of each host whose count took from a pool (a domain's hosts share it); null when none did. */
  drawing: Array<ShapeCandidates | undefined> | null
}

/** What a domain's count reads of its hosts, by host number. */
export interface HostNumbers {
  forest: HostForest
  /** Each host's pairs free now (freeNow), and each pool pair's (poolFreeNow). */
  free: Float64Array
  poolFree: Float64Array
  fits: HostFits
  disabled: Uint8Array
  /** Each host's free amount of each class: [host * C + class] (HostForest.classes). */
  classFree: Float64Array
  C: number
  /** What one instance asks of each class, and each class's number (-1: no tree has it). */
  asked: ReadonlyMap<string, number>
  askClass: Int32Array
}

/**
 * The domains of one level: rows start .. start + count, each host's domain in `of` (-1: none;
 * null: the cloud, all). A rack's, row's, room's or the cloud's are also each cell's (`ofCell`).
 */
export interface DomainLayoutPart {
  level: HeadroomLevel
  start: number
  count: number
  of: Int32Array | null
  ofCell: Int32Array | null
  /** Hosts: the host of each domain. */
  host: Int32Array | null
}

/**
 * The domains a headroom table has rows for, level by level, and the cells their hosts are summed
 * in: where each host counts, not the racks, rows and rooms an operator lays out (core/topology.ts
 * Layout).
 */
export interface DomainLayout {
  /** Each domain's level and name, in the order a table shows them. */
  levels: HeadroomLevel[]
  names: string[]
  parts: DomainLayoutPart[]
  /**
   * Hosts in the same rack, row and room (of the levels asked) share a cell: what a level's
   * domains add up is summed once per host into cells, then per level from the few cells.
   */
  cellOf: Int32Array
  cells: number
}

/** The domains at each level and which hosts are in them, in the order a table shows them (names sorted). */
export function domainLayout(s: State, forest: HostForest, levels: readonly HeadroomLevel[]): DomainLayout {
  const {hosts} = forest
  const out: DomainLayout = {levels: [], names: [], parts: [], cellOf: new Int32Array(hosts.length), cells: 1}
  const places = placesOf(s, forest)
  for (const level of levels) {
    const start = out.levels.length
    let names: readonly string[]
    let of: Int32Array | null = null
    let host: Int32Array | null = null
    if (level === 'cloud') names = ['cloud']
    else if (level === 'host') {
      // By name: the State's order is the order providers were read in, which differs between backends.
      const order = byName(forest)
      names = Array.from(order.order, (i) => hosts[i].name)
      of = order.rank
      host = order.order
    } else ({names, of} = places[level])
    for (const name of names) {
      out.levels.push(level)
      out.names.push(name)
    }
    out.parts.push({level, start, count: names.length, of, ofCell: null, host})
  }
  // Cells: the hosts' racks, rows and rooms told apart one level after the other.
  const {cellOf} = out
  for (const part of out.parts) {
    if (part.level === 'host' || !part.of) continue
    const cell = new Map<number, number>()
    for (let i = 0; i < hosts.length; i++) {
      const key = cellOf[i] * (part.count + 1) + part.of[i] + 1
      let c = cell.get(key)
      if (c === undefined) cell.set(key, (c = cell.size))
      cellOf[i] = c
    }
    out.cells = cell.size
  }
  for (const part of out.parts) {
    if (part.level === 'host') continue
    part.ofCell = new Int32Array(out.cells)
    if (part.of) for (let i = 0; i < hosts.length; i++) part.ofCell[cellOf[i]] = part.of[i]
  }
  return out
}

type Places = Record<TopologyLevel, {names: string[]; of: Int32Array}>

/**
 * Each host's rack, row and room (as hostDomains names them: the last of its aggregates at a
 * level), names sorted; kept with the forest (hosts' aggregates move shapeVersion) while the
 * topology names their aggregates alike.
 */
function placesOf(s: State, forest: HostForest): Places {
  const kept = placesKept.get(forest)
  if (kept && [...kept.nodes].every(([agg, node]) => sameNode(s.topology.get(agg), node))) return kept.places
  const nodes = new Map<string, {level: TopologyLevel; name: string} | undefined>()
  const seen = {rack: new Map<string, number>(), row: new Map<string, number>(), room: new Map<string, number>()}
  const n = forest.hosts.length
  const of = {rack: new Int32Array(n), row: new Int32Array(n), room: new Int32Array(n)}
  // Hosts made alike share their aggregates' set: each set is read once.
  const bySet = new Map<Set<string>, [number, number, number]>()
  forest.hosts.forEach((h, i) => {
    let at = bySet.get(h.aggregates)
    if (!at) {
      const name: Record<TopologyLevel, string | null> = {rack: null, row: null, room: null}
      for (const agg of h.aggregates) {
        if (!nodes.has(agg)) {
          const node = s.topology.get(agg)
          nodes.set(agg, node && {level: node.level, name: node.name})
        }
        const node = nodes.get(agg)
        if (node) name[node.level] = node.name
      }
      const number = (level: TopologyLevel): number => {
        const x = name[level]
        if (x === null) return -1
        let d = seen[level].get(x)
        if (d === undefined) seen[level].set(x, (d = seen[level].size))
        return d
      }
      bySet.set(h.aggregates, (at = [number('rack'), number('row'), number('room')]))
    }
    of.rack[i] = at[0]
    of.row[i] = at[1]
    of.room[i] = at[2]
  })
  const places = {} as Places
  for (const level of ['rack', 'row', 'room'] as const) {
    const names = [...seen[level].keys()].sort()
    const rank = new Int32Array(names.length)
    names.forEach((name, r) => {
      rank[seen[level].get(name)!] = r
    })
    const o = of[level]
    for (let i = 0; i < n; i++) if (o[i] >= 0) o[i] = rank[o[i]]
    places[level] = {names, of: o}
  }
  placesKept.set(forest, {nodes, places})
  return places
}
const placesKept = new WeakMap<HostForest, {nodes: Map<string, {level: TopologyLevel; name: string} | undefined>; places: Places}>()

const sameNode = (now: TopologyNode | undefined, then: {level: TopologyLevel; name: string} | undefined): boolean =>
  now === undefined ? then === undefined : then !== undefined && now.level === then.level && now.name === then.name

/** Host numbers by name (then uuid), and each host's place in that order; kept with the forest while no host is renamed. */
export function byName(forest: HostForest): {order: Int32Array; rank: Int32Array} {
  const {hosts} = forest
  const kept = namesOrder.get(forest)
  if (kept?.order.every((i, r) => r === 0 || compareHosts(hosts[kept.order[r - 1]], hosts[i]) < 0)) return kept
  const order = Int32Array.from(hosts.keys()).sort((a, b) => compareHosts(hosts[a], hosts[b]))
  const rank = new Int32Array(hosts.length)
  for (let r = 0; r < order.length; r++) rank[order[r]] = r
  namesOrder.set(forest, {order, rank})
  return {order, rank}
}
const namesOrder = new WeakMap<HostForest, {order: Int32Array; rank: Int32Array}>()

const compareHosts = (a: Provider, b: Provider): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0

/** The hosts of each domain of `part` that `wanted`, in host order. */
export function domainMembers(part: DomainLayoutPart, hosts: number, wanted: (d: number) => boolean): Map<number, number[]> {
  const out = new Map<number, number[]>()
  for (let i = 0; i < hosts; i++) {
    const d = part.of ? part.of[i] : 0
    if (d < 0 || !wanted(d)) continue
    const list = out.get(d)
    if (list) list.push(i)
    else out.set(d, [i])
  }
  return out
}

/**
 * A domain whose hosts (`at`, in host order) draw on sharing pools: claims one after another over
 * them, each pool shared. Candidates come host after host in the engine's order, so the claims
 * fill the first host (its own inventory first where its candidates put it first, then the pools)
 * before the next: each host drawing on a pool is walked with what the hosts before it left
 * there. A host that never takes from a pool counts as it does alone.
 */
export function poolsDomain(h: HostNumbers, at: readonly number[]): {fit: number; pooled: number; disabledFit: number; binding: number} {
  const {fits, disabled, forest, free} = h
  const B = forest.classes.length + forest.poolPairs.length
  const votes = new Int32Array(B)
  const count = (enabled: boolean): number => {
    let left: Float64Array | null = null
    let fit = 0
    for (const i of at) {
      if ((disabled[i] === 1) === enabled) continue
      const c = fits.drawing?.[i]
      let binding = fits.binding[i]
      if (!c) fit += fits.fit[i]
      else {
        fit += fitOneAfterAnother(forest, i, c, free, (left ??= h.poolFree.slice()), walk)
        binding = bindingOf(forest, i, walk.binding)
      }
      if (enabled && binding >= 0) votes[binding]++
    }
    return fit
  }
  const fit = count(true)
  return {fit, pooled: pooledFit(h, at), disabledFit: count(false), binding: mostVoted(votes, 0, B)}
}
const walk: FitWalk = {tookFromPool: false, binding: -1}

/** The binding most hosts have (votes[at .. at + B)), the first of equals; -1 when none has one. */
export function mostVoted(votes: Int32Array, at: number, B: number): number {
  let best = -1
  for (let b = 0; b < B; b++) if (votes[at + b] > 0 && (best < 0 || votes[at + b] > votes[at + best])) best = b
  return best
}

/** The fit if the enabled hosts of `at` that could hold it were one host: each class's free amount (pools once) over what one instance asks. */
function pooledFit(h: HostNumbers, at: readonly number[]): number {
  const {asked, askClass, classFree, C, fits, disabled, forest} = h
  if (asked.size === 0) return 0
  const rcs = [...asked.keys()]
  const free = new Map<string, number>()
  let pools: Set<number> | null = null
  let any = false
  for (const i of at) {
    if (disabled[i] || !fits.eligible[i]) continue
    any = true
    rcs.forEach((rc, j) => {
      const n = askClass[j] < 0 ? 0 : classFree[i * C + askClass[j]]
      if (n) free.set(rc, (free.get(rc) ?? 0) + n)
    })
    if (!fits.drawing?.[i]) continue
    const {poolPair} = forest.shapes[forest.shapeOf[i]]
    for (const g of poolPair) if (g >= 0) (pools ??= new Set()).add(g)
  }
  if (!any) return 0
  for (const g of pools ?? []) {
    const {rc} = forest.poolPairs[g]
    if (asked.has(rc)) free.set(rc, (free.get(rc) ?? 0) + Math.max(0, h.poolFree[g]))
  }
  let n = Infinity
  for (const [rc, a] of asked) n = Math.min(n, Math.floor((free.get(rc) ?? 0) / a))
  return n === Infinity ? 0 : n
}
