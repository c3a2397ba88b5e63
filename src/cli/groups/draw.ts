/**
 * `placemat group show`'s drawing: the rooms, rows, racks and hosts that hold members, with
 * the members on their hosts, and the domains where the rule is broken marked with "!".
 * Hosts in no domain of the group's level are under "(none), outside the topology".
 */
import {OUTSIDE_TOPOLOGY, type GroupRecord} from '../../core/groups.js'
import {racksOf, rowsOf} from '../../core/layout-edits.js'
import type {Layout} from '../../core/topology.js'

const NONE = '(none)'

/** host name -> its room, row and rack names in the layout. */
function hostPaths(layout: Layout): Map<string, {room: string; row: string; rack: string}> {
  const roomOfRow = new Map<string, string>()
  for (const {row, room} of rowsOf(layout)) roomOfRow.set(row.name, room?.name ?? NONE)
  const out = new Map<string, {room: string; row: string; rack: string}>()
  for (const {rack, row} of racksOf(layout)) {
    for (const h of rack.hosts ?? [])
      out.set(h, {room: row ? (roomOfRow.get(row.name) ?? NONE) : NONE, row: row?.name ?? NONE, rack: rack.name})
  }
  return out
}

type Tree = Map<string, Tree | string[]>

export function groupDrawing(g: GroupRecord, layout: Layout, label: (consumer: string) => string = (c) => c): string[] {
  const paths = hostPaths(layout)
  const tree: Tree = new Map()
  for (const p of g.placements ?? []) {
    for (const host of p.hosts) {
      const at = paths.get(host) ?? {room: NONE, row: NONE, rack: NONE}
      let node = tree
      for (const key of [`room ${at.room}`, `row ${at.row}`, `rack ${at.rack}`]) {
        if (!node.has(key)) node.set(key, new Map())
        node = node.get(key) as Tree
      }
      const members = (node.get(`host ${host}`) as string[] | undefined) ?? []
      members.push(label(p.consumer))
      node.set(`host ${host}`, members)
    }
  }
  // Domains named in a breach, at the group's level.
  const outsideKey = `${g.level} ${NONE}`
  const broken = new Set(
    g.violations.flatMap((v) => v.domains.map((d) => (d.name === OUTSIDE_TOPOLOGY ? outsideKey : `${g.level} ${d.name}`))),
  )
  const lines: string[] = []
  const count = (t: Tree | string[]): number => (Array.isArray(t) ? t.length : [...t.values()].reduce((n, c) => n + count(c), 0))
  const walk = (t: Tree, depth: number) => {
    for (const key of [...t.keys()].sort()) {
      const child = t.get(key)!
      const mark = broken.has(key) ? '! ' : ''
      const at = key.startsWith(`${g.level} `) ? ` (${count(child)} member${count(child) === 1 ? '' : 's'})` : ''
      const shown = key === outsideKey ? `${key}, outside the topology` : key
      if (Array.isArray(child)) lines.push(`${'  '.repeat(depth)}${mark}${shown}${at}: ${child.join(', ')}`)
      else {
        lines.push(`${'  '.repeat(depth)}${mark}${shown}${at}`)
        walk(child, depth + 1)
      }
    }
  }
  walk(tree, 0)
  const unplaced = (g.placements ?? []).filter((p) => p.hosts.length === 0 && !p.hostless).map((p) => label(p.consumer))
  const hostless = (g.placements ?? []).filter((p) => p.hostless).map((p) => label(p.consumer))
  if (hostless.length) lines.push(`hostless (only shared resources, the rule skips them): ${hostless.join(', ')}`)
  if (unplaced.length) lines.push(`not placed: ${unplaced.join(', ')}`)
  return lines
}
