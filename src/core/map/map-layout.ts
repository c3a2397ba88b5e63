/**
 * The datacenter as the map page draws it (GET /placemat/v1/map/layout): rooms holding rows
 * holding racks holding hosts, as the topology nests them; rows and racks in nothing above them
 * beside the rooms; the hosts in no rack in a group of their own; and the sharing pools, each with
 * the hosts that reach it and the domains it serves whole. Names and capacities only: what is used
 * changes with every claim (map-values.ts), the layout seldom, so the page asks for it seldom.
 * A host's rack is the one capacity counts it in (topology.ts hostDomains): the map's boxes hold
 * the hosts whose numbers capacity sums into them.
 */
import {everyHost, isDisabled, isSharing} from '../host.js'
import {capacityOf} from '../inventory-capacity.js'
import type {Provider, State, TopologyLevel, TopologyNode} from '../state/state.js'
import {hostDomains} from '../topology.js'
import {topologyTree} from '../topology-view.js'

export interface MapNode {
  level: TopologyLevel
  name: string
  /** A room's rows, a row's racks (by name). */
  children?: MapNode[]
  /** A rack's hosts, by their number in MapLayout.hosts. */
  hosts?: number[]
}

/** A domain named by level and name, as capacity's rows name it. */
export interface DomainName {
  level: 'host' | TopologyLevel | 'cloud'
  name: string
}

export interface MapPool {
  name: string
  /** The hosts that reach it (share an aggregate with it), by number. */
  hosts: number[]
  /** The largest domains all of whose hosts reach it (a row rather than each of its racks), then hosts reached outside those. */
  serves: DomainName[]
  /** What it holds, per class (what is used of it changes with every claim: map-values.ts). */
  capacity: Record<string, number>
}

export interface MapLayout {
  /** Every host, by name: the map's leaves, numbered by their place here. */
  hosts: string[]
  /** The numbers of the hosts out of service (COMPUTE_STATUS_DISABLED). */
  disabled: number[]
  /** Rooms, then rows in no room, then racks in no row, each by name. */
  tree: MapNode[]
  /** Hosts in no rack, by number. */
  unracked: number[]
  pools: MapPool[]
  /** The classes the hosts' trees hold (what the page may colour by), sorted. */
  classes: string[]
}

/** The layout as the daemon answers it: with the flavors of its catalog (what the page may colour by), in its order. */
export interface MapLayoutAnswer extends MapLayout {
  flavors: string[]
}

const byName = (a: {name: string}, b: {name: string}) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** The map's layout of `s` (see the module's comment). */
export function mapLayout(s: State): MapLayout {
  const hosts = everyHost(s).sort(byName)
  const rackOf = new Map<string, number[]>()
  const unracked: number[] = []
  const classes = new Set<string>()
  hosts.forEach((h, i) => {
    const rack = hostDomains(s, h).rack
    if (rack === null) unracked.push(i)
    else {
      const list = rackOf.get(rack)
      if (list) list.push(i)
      else rackOf.set(rack, [i])
    }
    for (const p of s.subtree(h.uuid)) if (!isSharing(p)) for (const rc of p.inventories.keys()) classes.add(rc)
  })
  const {tops, childrenOf} = topologyTree(s)
  const drawn = new Set<string>()
  const build = (n: TopologyNode): MapNode => {
    if (n.level !== 'rack') return {level: n.level, name: n.name, children: childrenOf(n).map(build)}
    drawn.add(n.name)
    return {level: n.level, name: n.name, hosts: rackOf.get(n.name) ?? []}
  }
  const tree = tops.map(build)
  // A rack under a missing parent is drawn nowhere (topologyTree): its hosts join those in no rack.
  for (const [rack, list] of rackOf) if (!drawn.has(rack)) unracked.push(...list)
  unracked.sort((a, b) => a - b)
  return {
    hosts: hosts.map((h) => h.name),
    disabled: hosts.flatMap((h, i) => (isDisabled(h) ? [i] : [])),
    tree,
    unracked,
    pools: mapPools(s, hosts, tree),
    classes: [...classes].sort(),
  }
}

/** Each sharing provider with the hosts that reach it (by their trees' aggregates) and the domains it serves whole. */
function mapPools(s: State, hosts: Provider[], tree: MapNode[]): MapPool[] {
  const pools = [...s.providers.values()].filter(isSharing).sort(byName)
  if (!pools.length) return []
  // Each host's trees' aggregates, once.
  const aggregatesOf = hosts.map((h) => {
    const out = new Set<string>()
    for (const p of s.subtree(h.uuid)) for (const a of p.aggregates) out.add(a)
    return out
  })
  return pools.map((pool) => {
    const reached: number[] = []
    for (let i = 0; i < hosts.length; i++) {
      if (hosts[i].root === pool.root) continue
      for (const a of pool.aggregates)
        if (aggregatesOf[i].has(a)) {
          reached.push(i)
          break
        }
    }
    const capacity: Record<string, number> = {}
    for (const [rc, inv] of pool.inventories) capacity[rc] = capacityOf(inv)
    return {name: pool.name, hosts: reached, serves: served(new Set(reached), tree, hosts), capacity}
  })
}

/** The largest domains whose every host is in `reach` (the cloud when all are), then the hosts of `reach` outside them. */
function served(reach: ReadonlySet<number>, tree: MapNode[], hosts: readonly Provider[]): DomainName[] {
  if (reach.size === 0) return []
  if (reach.size === hosts.length) return [{level: 'cloud', name: 'cloud'}]
  const out: DomainName[] = []
  const covered = new Set<number>()
  // Whether every host under `n` is reached (a domain without hosts serves nobody: not whole).
  const whole = (n: MapNode): boolean => {
    const under = hostsUnder(n)
    return under.length > 0 && under.every((i) => reach.has(i))
  }
  const visit = (n: MapNode) => {
    if (whole(n)) {
      out.push({level: n.level, name: n.name})
      for (const i of hostsUnder(n)) covered.add(i)
      return
    }
    for (const c of n.children ?? []) visit(c)
  }
  for (const n of tree) visit(n)
  for (const i of [...reach].sort((a, b) => a - b)) if (!covered.has(i)) out.push({level: 'host', name: hosts[i].name})
  return out
}

/** Every host under a node, by number. */
export function hostsUnder(n: MapNode): number[] {
  if (n.hosts) return n.hosts
  return (n.children ?? []).flatMap(hostsUnder)
}
