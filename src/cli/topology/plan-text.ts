/** A topology plan in words: the summary line and one line per change. */
import type {Layout, TopologyPlan} from '../../core/topology.js'
import {racksOf} from '../../core/layout-edits.js'
import {breachText} from '../../core/groups.js'
import type {LayoutApplyResult} from '../backend/backend.js'

export const emptyPlan = (generation: number | null = null): TopologyPlan => ({
  generation: generation as number,
  nodes: {create: [], update: [], delete: []},
  hosts: {add: [], move: [], remove: []},
  violations: [],
})

export const planSize = (p: TopologyPlan) =>
  p.nodes.create.length + p.nodes.update.length + p.nodes.delete.length + p.hosts.add.length + p.hosts.move.length + p.hosts.remove.length

export function planSummary(p: TopologyPlan): string {
  if (planSize(p) === 0) return 'No changes: the topology already matches the layout.'
  const n = p.nodes
  const h = p.hosts
  return (
    `Plan: racks/rows/rooms ${n.create.length} to create, ${n.update.length} to update, ${n.delete.length} to delete; ` +
    `hosts ${h.add.length} to add, ${h.move.length} to move, ${h.remove.length} to remove.`
  )
}

/** Where each node and host goes in a layout: "level name" -> parent label, host -> "rack name". */
function destinations(layout: Layout): {parentOf: Map<string, string>; rackOf: Map<string, string>} {
  const parentOf = new Map<string, string>()
  const rackOf = new Map<string, string>()
  for (const m of layout.rooms ?? []) for (const r of m.rows ?? []) parentOf.set(`row ${r.name}`, `room ${m.name}`)
  for (const {rack, row} of racksOf(layout)) {
    if (row) parentOf.set(`rack ${rack.name}`, `row ${row.name}`)
    for (const h of rack.hosts ?? []) rackOf.set(h, `rack ${rack.name}`)
  }
  return {parentOf, rackOf}
}

/** One line per change: "+" create/add, "~" update/move, "-" delete/remove; `layout` says where things go. */
export function planLines(p: TopologyPlan, layout?: Layout): string[] {
  const {parentOf, rackOf} = destinations(layout ?? {})
  const to = (where: string | undefined, fallback = '') => (where ? ` -> ${where}` : fallback)
  const lines: string[] = []
  for (const n of p.nodes.create) lines.push(`+ ${n}${parentOf.has(n) ? ` (in ${parentOf.get(n)})` : ''}`)
  for (const n of p.nodes.update) lines.push(`~ ${n}${to(parentOf.get(n), ' -> (stands alone)')}`)
  for (const n of p.nodes.delete) lines.push(`- ${n}`)
  for (const h of p.hosts.add) lines.push(`+ host ${h}${to(rackOf.get(h))}`)
  for (const h of p.hosts.move) lines.push(`~ host ${h}${to(rackOf.get(h))}`)
  for (const h of p.hosts.remove) lines.push(`- host ${h}`)
  for (const v of p.violations ?? []) lines.push(`! breaks ${breachText(v)}`)
  return lines
}

/** What an applied layout changed, and how (one transaction, or the aggregate writes of plain Placement). */
export function appliedLine(res: LayoutApplyResult, seconds: number): string {
  const how = res.transport === 'placemat' ? 'one transaction' : `${res.writes} aggregate writes`
  return `Applied: ${appliedCounts(res.plan)} (${how}, ${seconds.toFixed(2)} s).`
}

/** "3 racks/rows/rooms and 2 hosts changed": what a layout's plan changed. */
export function appliedCounts(p: TopologyPlan): string {
  return `${p.nodes.create.length + p.nodes.update.length + p.nodes.delete.length} racks/rows/rooms and ${p.hosts.add.length + p.hosts.move.length + p.hosts.remove.length} hosts changed`
}

/** What --json/--yaml print of a layout's plan carried out (or not, in a dry run). */
export const layoutAnswer = (res: LayoutApplyResult, dryRun: boolean) => ({
  transport: res.transport,
  dry_run: dryRun,
  applied: res.applied,
  plan: res.plan,
})
