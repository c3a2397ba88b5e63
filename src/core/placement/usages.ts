/**
 * Usages: per provider (objects/usage.py _get_all_by_resource_provider_uuid) and per
 * project/user, optionally per consumer type (_get_all_by_project_user, _get_by_consumer_type).
 */
import {NULL_CONSUMER_TYPE_ALIAS} from './allocations.js'
import {compareText, orderedResources} from '../listing-order.js'
import type {Consumer, Provider, State} from '../state/state.js'

/** Used amount of every class the provider has inventory for (0 when nothing is allocated). */
export function providerUsages(p: Provider): Record<string, number> {
  const out: Record<string, number> = {}
  for (const rc of p.inventories.keys()) out[rc] = p.usages.get(rc) ?? 0
  return out
}

function consumersOf(s: State, projectId: string, userId?: string): Consumer[] {
  const out: Consumer[] = []
  for (const c of s.consumers.values()) {
    if (c.project !== projectId) continue
    if (userId && c.user !== userId) continue
    if (c.allocations.size === 0) continue
    out.push(c)
  }
  return out
}

function addUsage(into: Record<string, number>, c: Consumer): void {
  for (const amounts of c.allocations.values()) {
    for (const [rc, used] of amounts) into[rc] = (into[rc] ?? 0) + used
  }
}

/** GET /usages before 1.38: total used per class by the project's (and user's) consumers. */
export function totalUsages(s: State, projectId: string, userId?: string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const c of consumersOf(s, projectId, userId)) addUsage(out, c)
  return out
}

/**
 * The group a consumer of `type` (null: none) counts in under GET /usages' consumer_type (from
 * 1.38); undefined when that query leaves it out. "all" puts everything under "all", "unknown"
 * keeps only the consumers without a type; any other value keeps only that type (untyped
 * consumers never match it); without one, each type is its own group, "unknown" the untyped.
 */
export function usageGroup(type: string | null, consumerType?: string): string | undefined {
  if (consumerType === 'all') return 'all'
  if (consumerType === 'unknown') return type === null ? 'unknown' : undefined
  if (consumerType !== undefined) return type === consumerType ? consumerType : undefined
  return type ?? NULL_CONSUMER_TYPE_ALIAS
}

/** GET /usages from 1.38: usages grouped by consumer type (usageGroup), each group with its consumer_count. */
export function usagesByConsumerType(
  s: State,
  projectId: string,
  userId?: string,
  consumerType?: string,
): Record<string, Record<string, number>> {
  const groups = new Map<string, {usages: Record<string, number>; count: number}>()
  for (const c of consumersOf(s, projectId, userId)) {
    const key = usageGroup(c.type, consumerType)
    if (key === undefined) continue
    let g = groups.get(key)
    if (!g) groups.set(key, (g = {usages: {}, count: 0}))
    addUsage(g.usages, c)
    g.count += 1
  }
  const out: Record<string, Record<string, number>> = {}
  for (const [key, g] of groups) {
    if (Object.keys(g.usages).length === 0) continue
    out[key] = {...g.usages, consumer_count: g.count}
  }
  return out
}

/** A consumer as `usage total` counts it: its owner, its type and what it holds (a consumer record). */
export interface UsageHolder {
  project_id?: string
  user_id?: string
  /** null, absent or "unknown" (as GET /allocations shows it): none. */
  consumer_type?: string | null
  allocations: Record<string, {resources: Record<string, number>}>
}

/** One line of `usage total`: a class's usage, per consumer type from 1.38 with the consumers holding that class. */
export interface UsageTotalRow {
  consumer_type?: string
  resource_class: string
  usage: number
  /** How many consumers of the type hold some of the class (not GET /usages' count of the whole type). */
  consumer_count?: number
}

/**
 * `usage total`'s lines from GET /usages' `usages` (grouped by consumer type from 1.38, else
 * amounts per class), in listing order: by type, then class (compareResourceClasses). Grouped
 * lines count the consumers of their type that hold their class, among `holders` (the consumers
 * of the query's project, kept here by its user and consumer type as GET /usages keeps them).
 */
export function usageTotalRows(
  usages: Record<string, number | Record<string, number>>,
  query: {userId?: string; consumerType?: string},
  holders: UsageHolder[] = [],
): UsageTotalRow[] {
  const grouped = Object.values(usages).some((v) => typeof v === 'object' && v !== null)
  if (!grouped) {
    return orderedResources(usages as Record<string, number>).map(([rc, n]) => ({resource_class: rc, usage: n}))
  }
  const holding = new Map<string, Map<string, number>>()
  for (const h of holders) {
    if (query.userId !== undefined && h.user_id !== query.userId) continue
    const type = h.consumer_type && h.consumer_type !== NULL_CONSUMER_TYPE_ALIAS ? h.consumer_type : null
    const key = usageGroup(type, query.consumerType)
    if (key === undefined) continue
    const classes = new Set(Object.values(h.allocations).flatMap((a) => Object.keys(a.resources ?? {})))
    let counts = holding.get(key)
    if (!counts) holding.set(key, (counts = new Map()))
    for (const rc of classes) counts.set(rc, (counts.get(rc) ?? 0) + 1)
  }
  const rows: UsageTotalRow[] = []
  for (const [type, group] of Object.entries(usages as Record<string, Record<string, number>>).sort(([a], [b]) => compareText(a, b))) {
    const {consumer_count: _whole, ...amounts} = group
    for (const [rc, n] of orderedResources(amounts)) {
      rows.push({consumer_type: type, resource_class: rc, usage: n, consumer_count: holding.get(type)?.get(rc) ?? 0})
    }
  }
  return rows
}
