/**
 * The topology as a tree of rooms, rows and racks with the capacity and usage of their
 * hosts (host.ts) rolled up, for `placemat topology show`, `top` and the metrics.
 */
import {LEVELS} from './affinity.js'
import {hostMembers, isDisabled, isSharing} from './host.js'
import type {Provider, State, TopologyLevel, TopologyNode} from './state/state.js'
import {capacityOf} from './inventory-capacity.js'

/** The level a node's children are at (racks hold hosts, not nodes). */
export const CHILD_LEVEL: Record<TopologyLevel, TopologyLevel | null> = {room: 'row', row: 'rack', rack: null}

/**
 * The topology as it is shown: the nodes without a parent, by level then name, and each node's
 * children of the level below it, by name. (A node under a parent that is missing or of the
 * wrong level is in neither.)
 */
export function topologyTree(s: State): {tops: TopologyNode[]; childrenOf: (n: TopologyNode) => TopologyNode[]} {
  const under = new Map<string, TopologyNode[]>()
  const tops: TopologyNode[] = []
  for (const n of s.topology.values()) {
    if (n.parent === null) tops.push(n)
    else {
      let list = under.get(n.parent)
      if (!list) under.set(n.parent, (list = []))
      list.push(n)
    }
  }
  const byName = (a: TopologyNode, b: TopologyNode) => a.name.localeCompare(b.name)
  const order = (n: TopologyNode) => LEVELS.indexOf(n.level)
  tops.sort((a, b) => order(a) - order(b) || byName(a, b))
  const childrenOf = (n: TopologyNode) => {
    const level = CHILD_LEVEL[n.level]
    return level === null ? [] : (under.get(n.uuid) ?? []).filter((c) => c.level === level).sort(byName)
  }
  return {tops, childrenOf}
}

export interface Rollup {
  capacity: Record<string, number>
  used: Record<string, number>
}

export interface TopologyView extends Rollup {
  uuid: string
  name: string
  level: TopologyLevel
  children?: TopologyView[]
  /** Each host, and whether it is out of service (COMPUTE_STATUS_DISABLED). */
  hosts?: Array<{uuid: string; name: string; disabled: boolean} & Rollup>
}

function addInto(into: Rollup, from: Rollup): void {
  for (const [rc, n] of Object.entries(from.capacity)) into.capacity[rc] = (into.capacity[rc] ?? 0) + n
  for (const [rc, n] of Object.entries(from.used)) into.used[rc] = (into.used[rc] ?? 0) + n
}

/** Capacity and usage of a host's whole tree (its own: a sharing provider in it gives no host's resources). */
export function hostRollup(s: State, host: Provider): Rollup {
  const r: Rollup = {capacity: {}, used: {}}
  for (const p of s.subtree(host.uuid)) {
    if (isSharing(p)) continue
    for (const [rc, inv] of p.inventories) r.capacity[rc] = (r.capacity[rc] ?? 0) + capacityOf(inv)
    for (const [rc, n] of p.usages) r.used[rc] = (r.used[rc] ?? 0) + n
  }
  return r
}

/** The topology tree with capacity and usage rolled up per rack, row and room. */
export function topologyView(s: State): TopologyView[] {
  const {tops, childrenOf} = topologyTree(s)
  const build = (n: TopologyNode): TopologyView => {
    const v: TopologyView = {uuid: n.uuid, name: n.name, level: n.level, capacity: {}, used: {}}
    if (CHILD_LEVEL[n.level]) {
      v.children = childrenOf(n).map(build)
      for (const c of v.children) addInto(v, c)
    } else {
      // The rack's hosts: a sharing provider or a child provider in its aggregate is none.
      v.hosts = hostMembers(s, n.uuid)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((h) => ({uuid: h.uuid, name: h.name, disabled: isDisabled(h), ...hostRollup(s, h)}))
      for (const h of v.hosts) addInto(v, h)
    }
    return v
  }
  return tops.map(build)
}
