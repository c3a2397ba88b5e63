/**
 * The topology as a tree of rooms, rows and racks with the capacity and usage of their
 * hosts rolled up, for `placemat topology show`, `top` and the metrics.
 */
import {LEVELS} from './affinity.js'
import {isDisabled} from './hosts.js'
import {capacityOf, type Provider, type State, type TopologyLevel, type TopologyNode} from './state.js'

const CHILD_LEVEL: Record<TopologyLevel, TopologyLevel | null> = {room: 'row', row: 'rack', rack: null}

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

/** Capacity and usage of a host's whole tree. */
export function hostRollup(s: State, host: Provider): Rollup {
  const r: Rollup = {capacity: {}, used: {}}
  for (const p of s.subtree(host.uuid)) {
    for (const [rc, inv] of p.inventories) r.capacity[rc] = (r.capacity[rc] ?? 0) + capacityOf(inv)
    for (const [rc, n] of p.usages) r.used[rc] = (r.used[rc] ?? 0) + n
  }
  return r
}

/** The topology tree with capacity and usage rolled up per rack, row and room. */
export function topologyView(s: State): TopologyView[] {
  const build = (n: TopologyNode): TopologyView => {
    const v: TopologyView = {uuid: n.uuid, name: n.name, level: n.level, capacity: {}, used: {}}
    const childLevel = CHILD_LEVEL[n.level]
    if (childLevel) {
      v.children = [...s.topology.values()]
        .filter((c) => c.parent === n.uuid && c.level === childLevel)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map(build)
      for (const c of v.children) addInto(v, c)
    } else {
      v.hosts = [...(s.aggregateMembers.get(n.uuid) ?? [])]
        .map((u) => s.providers.get(u)!)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((h) => ({uuid: h.uuid, name: h.name, disabled: isDisabled(h), ...hostRollup(s, h)}))
      for (const h of v.hosts) addInto(v, h)
    }
    return v
  }
  const tops = [...s.topology.values()].filter((n) => n.parent === null)
  const order = (n: TopologyNode) => LEVELS.indexOf(n.level)
  return tops.sort((a, b) => order(a) - order(b) || a.name.localeCompare(b.name)).map(build)
}

