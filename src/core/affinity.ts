/**
 * Topology affinity: where providers and consumers are (their hosts' racks, rows and
 * rooms), whether a set of providers keeps a rule ("same row as consumer X", "different
 * rack from consumer Y") and how close it is to a consumer. The daemon's claims and
 * near/far candidates and the command line's client-side filters all decide with these.
 */
import {holdsOnlyShared, hostOfProvider} from './host.js'
import type {State, TopologyLevel} from './state/state.js'

/** The levels, outermost first. */
export const LEVELS: readonly TopologyLevel[] = ['room', 'row', 'rack']

export const isLevel = (v: string): v is TopologyLevel => (LEVELS as readonly string[]).includes(v)

export interface AffinityRule {
  relation: 'same' | 'different'
  level: TopologyLevel
  consumer: string
}

/** Topology node (aggregate) uuids per level. */
export type Placement = Record<TopologyLevel, Set<string>>

export const emptyPlacement = (): Placement => ({room: new Set(), row: new Set(), rack: new Set()})

/** Whether two placements share a node at `level`. */
export function shares(a: Placement, b: Placement, level: TopologyLevel): boolean {
  for (const n of a[level]) if (b[level].has(n)) return true
  return false
}

/**
 * Why `mine` breaks `rule` against the anchor consumer's placement, or null when it holds.
 * A 'same' rule whose anchor is in no node of that level cannot hold (`nowhere` says why).
 */
export function ruleViolation(mine: Placement, anchor: Placement, rule: AffinityRule, nowhere?: string): string | null {
  const overlap = shares(mine, anchor, rule.level)
  if (rule.relation === 'same') {
    if (anchor[rule.level].size === 0) return nowhere ?? `consumer ${rule.consumer} has no allocations in any ${rule.level}`
    return overlap ? null : `not in the same ${rule.level} as consumer ${rule.consumer}`
  }
  return overlap ? `in the same ${rule.level} as consumer ${rule.consumer}` : null
}

/** How close `mine` is to `anchor`: 0 same rack, 1 same row, 2 same room, 3 elsewhere. */
export function closeness(mine: Placement, anchor: Placement): number {
  return shares(mine, anchor, 'rack') ? 0 : shares(mine, anchor, 'row') ? 1 : shares(mine, anchor, 'room') ? 2 : 3
}

/** `items` sorted (stably) by closeness to `anchor`: nearest first, or farthest first. */
export function byCloseness<T>(items: T[], placementOf: (item: T) => Placement, anchor: Placement, direction: 'near' | 'far'): T[] {
  const keyed = items.map((item, i) => ({item, i, c: closeness(placementOf(item), anchor)}))
  keyed.sort((a, b) => (direction === 'near' ? a.c - b.c : b.c - a.c) || a.i - b.i)
  return keyed.map((k) => k.item)
}

// ---- placements in a State ----------------------------------------------------------------

/** Adds the racks, rows and rooms of the host a provider gives resources of (none for a sharing provider: host.ts). */
export function providerPlacement(s: State, providerUuid: string, into: Placement = emptyPlacement()): Placement {
  const root = hostOfProvider(s, s.providers.get(providerUuid))
  if (!root) return into
  for (const agg of root.aggregates) {
    const node = s.topology.get(agg)
    if (node) into[node.level].add(node.uuid)
  }
  return into
}

/** The racks, rows and rooms of a set of providers' hosts (shared resources place nothing). */
export function placementOf(s: State, providerUuids: Iterable<string>): Placement {
  const out = emptyPlacement()
  for (const u of providerUuids) providerPlacement(s, u, out)
  return out
}

/** Where a consumer's allocations are, by level (empty sets when it has none). */
export function consumerPlacement(s: State, consumerUuid: string): Placement {
  const c = s.consumers.get(consumerUuid)
  return c ? placementOf(s, c.allocations.keys()) : emptyPlacement()
}

/**
 * Checks a set of providers (a candidate) against rules whose anchors are stored
 * consumers. Returns null when every rule holds, else why not.
 */
export function affinityViolation(s: State, providerUuids: Iterable<string>, rules: AffinityRule[]): string | null {
  if (rules.length === 0) return null
  const mine = placementOf(s, providerUuids)
  for (const rule of rules) {
    const nowhere = holdsOnlyShared(s, rule.consumer)
      ? `consumer ${rule.consumer} holds only shared resources: it is on no host, in no ${rule.level}`
      : undefined
    const why = ruleViolation(mine, consumerPlacement(s, rule.consumer), rule, nowhere)
    if (why) return why
  }
  return null
}
