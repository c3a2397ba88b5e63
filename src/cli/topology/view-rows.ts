/** The rolled-up topology as table rows. */
import {compareResourceClasses} from '../../core/listing-order.js'
import type {TopologyView} from '../../core/topology-view.js'

/** The resource classes a view has, the usual ones first. */
export function viewClasses(view: Array<Pick<TopologyView, 'capacity' | 'used'>>): string[] {
  const seen = new Set<string>()
  for (const v of view) for (const rc of Object.keys(v.capacity)) seen.add(rc)
  for (const v of view) for (const rc of Object.keys(v.used)) seen.add(rc)
  return [...seen].sort(compareResourceClasses)
}

export interface ViewRow {
  name: string
  level: string
  uuid: string
  hosts: number
  depth: number
  capacity: Record<string, number>
  used: Record<string, number>
}

const hostCount = (v: TopologyView): number => (v.hosts ? v.hosts.length : (v.children ?? []).reduce((n, c) => n + hostCount(c), 0))

/** The tree flattened for a table, depth first (hosts included unless `hosts` is false). */
export function viewRows(view: TopologyView[], opts: {hosts?: boolean} = {}): ViewRow[] {
  const rows: ViewRow[] = []
  const walk = (v: TopologyView, depth: number) => {
    rows.push({name: v.name, level: v.level, uuid: v.uuid, hosts: hostCount(v), depth, capacity: v.capacity, used: v.used})
    for (const c of v.children ?? []) walk(c, depth + 1)
    if (opts.hosts !== false) {
      for (const h of v.hosts ?? [])
        rows.push({name: h.name, level: 'host', uuid: h.uuid, hosts: 1, depth: depth + 1, capacity: h.capacity, used: h.used})
    }
  }
  for (const v of view) walk(v, 0)
  return rows
}

/** "used/capacity" of one class ("" when neither). */
export function usedOf(row: {capacity: Record<string, number>; used: Record<string, number>}, rc: string): string {
  if (row.capacity[rc] === undefined && row.used[rc] === undefined) return ''
  return `${row.used[rc] ?? 0}/${row.capacity[rc] ?? 0}`
}

/** One rack, row or room with where it stands, for `rack list` / `rack show` (and rows, rooms). */
export interface NodeEntry {
  name: string
  level: TopologyView['level']
  uuid: string
  row: string
  room: string
  hosts: string[]
  /** Those of its hosts out of service (COMPUTE_STATUS_DISABLED). */
  disabled_hosts: string[]
  capacity: Record<string, number>
  used: Record<string, number>
}

const allHosts = (v: TopologyView): string[] => (v.hosts ? v.hosts.map((h) => h.name) : (v.children ?? []).flatMap(allHosts))
const disabledHosts = (v: TopologyView): string[] =>
  v.hosts ? v.hosts.filter((h) => h.disabled).map((h) => h.name) : (v.children ?? []).flatMap(disabledHosts)

/** Every node of `level` in the view, by name, with its row and room (names; '' when it stands alone). */
export function nodesAt(view: TopologyView[], level: TopologyView['level']): NodeEntry[] {
  const out: NodeEntry[] = []
  const walk = (v: TopologyView, up: {row: string; room: string}) => {
    const here = {row: v.level === 'row' ? v.name : up.row, room: v.level === 'room' ? v.name : up.room}
    if (v.level === level)
      out.push({
        name: v.name,
        level: v.level,
        uuid: v.uuid,
        ...up,
        hosts: allHosts(v),
        disabled_hosts: disabledHosts(v),
        capacity: v.capacity,
        used: v.used,
      })
    for (const c of v.children ?? []) walk(c, here)
  }
  for (const v of view) walk(v, {row: '', room: ''})
  return out.sort((a, b) => a.name.localeCompare(b.name))
}
