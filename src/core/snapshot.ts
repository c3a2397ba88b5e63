/**
 * A State built from records read over the API, so that the same pure functions that
 * decide in the daemon (layout plans, topology views, affinity, reshape checks) decide on
 * a copy of a remote cloud, or of the part of it a command needs.
 */
import {INVENTORY_FIELDS, withDefaults} from './placement/inventories.js'
import {State, newProvider, type Amounts, type Consumer, type Inventory, type TopologyNode} from './state/state.js'
import {Changes} from './state/changes.js'
import type {ConsumerRecord, ProviderRecord} from './wire.js'

export interface Snapshot {
  /** Resource class names (standard classes first, as Placement lists them). */
  classes?: string[]
  /** Trait names. */
  traits?: string[]
  /** Parents before or after children: any order. Trees may be partial. */
  providers: Array<Partial<ProviderRecord> & {uuid: string; name: string; generation: number}>
  /**
   * Consumers with their allocations. When given, provider usages are what these hold;
   * when left out, they are the providers' own `usages`.
   */
  consumers?: ConsumerRecord[]
  topology?: Array<Omit<TopologyNode, 'createdAt' | 'updatedAt'>>
  /** Names apply files gave aggregates (placemat's own). */
  aggregateNames?: Array<{uuid: string; name: string}>
}

/** An inventory record with Placement's defaults for fields it leaves out. */
export function fullInventory(raw: Partial<Record<keyof Inventory, unknown>>): Inventory {
  const given = Object.fromEntries(INVENTORY_FIELDS.filter((f) => typeof raw[f] === 'number').map((f) => [f, raw[f]]))
  return withDefaults({total: 0, ...given})
}

const amounts = (r: Record<string, number>): Amounts => new Map(Object.entries(r).filter(([, n]) => n > 0))

export function stateFromSnapshot(snap: Snapshot, now = Date.now()): State {
  const s = new State()
  s.changes = new Changes()
  let custom = 10000
  ;(snap.classes ?? []).forEach((name, i) => s.addClass(name, now, name.startsWith('CUSTOM_') ? custom++ : i))
  for (const name of snap.traits ?? []) s.addTrait(name, now)
  // Parents first, so children link to them; a parent outside the snapshot stays a uuid.
  // Each round adds every provider whose parent is known and keeps the rest for the next
  // (in a list of its own: taking them out of one list in place is quadratic).
  let pending = snap.providers
  const listed = new Set(pending.map((p) => p.uuid))
  while (pending.length) {
    const waiting: typeof pending = []
    for (const r of pending) {
      const parentUuid = r.parent_provider_uuid ?? null
      const parent = parentUuid ? s.providers.get(parentUuid) : undefined
      if (parentUuid && !parent && listed.has(parentUuid)) {
        waiting.push(r)
        continue
      }
      const p = newProvider(r.uuid, r.name, parent ?? null, now)
      p.generation = r.generation
      p.parent = parentUuid
      p.root = r.root_provider_uuid ?? parent?.root ?? r.uuid
      p.inventories = new Map(Object.entries(r.inventories ?? {}).map(([rc, inv]) => [rc, fullInventory(inv)]))
      p.traits = new Set(r.traits ?? [])
      p.aggregates = new Set(r.aggregates ?? [])
      if (!snap.consumers) p.usages = amounts(r.usages ?? {})
      s.addProvider(p)
    }
    if (waiting.length === pending.length) break // a parent cycle: cannot come from Placement
    pending = waiting
  }
  for (const rc of snap.consumers ?? []) {
    const c: Consumer = {
      uuid: rc.uuid,
      project: rc.project_id ?? '',
      user: rc.user_id ?? '',
      type: rc.consumer_type && rc.consumer_type !== 'unknown' ? rc.consumer_type : null,
      generation: rc.consumer_generation ?? 0,
      createdAt: rc.created_at ? Date.parse(rc.created_at) : now,
      updatedAt: rc.updated_at ? Date.parse(rc.updated_at) : now,
      allocations: new Map(),
    }
    s.addConsumer(c)
    s.setAllocations(c, new Map(Object.entries(rc.allocations).map(([rp, a]) => [rp, amounts(a.resources)])))
  }
  for (const n of snap.topology ?? []) s.setTopologyNode({...n, createdAt: now, updatedAt: now})
  for (const n of snap.aggregateNames ?? []) s.setAggregateName({uuid: n.uuid, name: n.name, updatedAt: now})
  s.changes = null
  return s
}
