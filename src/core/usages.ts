/**
 * Usages: per provider (objects/usage.py _get_all_by_resource_provider_uuid) and per
 * project/user, optionally per consumer type (_get_all_by_project_user, _get_by_consumer_type).
 */
import {NULL_CONSUMER_TYPE_ALIAS} from './allocations.js'
import type {Consumer, Provider, State} from './state.js'

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
 * GET /usages from 1.38: usages grouped by consumer type, each group with its
 * consumer_count. consumer_type "all" puts everything under "all", "unknown" only the
 * consumers without a type; any other value keeps only that type (untyped consumers
 * never match it).
 */
export function usagesByConsumerType(
  s: State,
  projectId: string,
  userId?: string,
  consumerType?: string,
): Record<string, Record<string, number>> {
  const groups = new Map<string, {usages: Record<string, number>; count: number}>()
  const add = (key: string, c: Consumer) => {
    let g = groups.get(key)
    if (!g) groups.set(key, (g = {usages: {}, count: 0}))
    addUsage(g.usages, c)
    g.count += 1
  }
  for (const c of consumersOf(s, projectId, userId)) {
    if (consumerType === 'all') add('all', c)
    else if (consumerType === 'unknown') {
      if (c.type === null) add('unknown', c)
    } else if (consumerType !== undefined) {
      if (c.type === consumerType) add(consumerType, c)
    } else add(c.type ?? NULL_CONSUMER_TYPE_ALIAS, c)
  }
  const out: Record<string, Record<string, number>> = {}
  for (const [key, g] of groups) {
    if (Object.keys(g.usages).length === 0) continue
    out[key] = {...g.usages, consumer_count: g.count}
  }
  return out
}
