/**
 * Patches the State with what other processes committed: the rows a journal window names, as
 * they are now (journal.ts). The mirror of state-loader.ts for a few rows instead of every
 * table. It goes through the State's own mutation methods, so the shape log (and with it the
 * candidates index) follows exactly as it follows this process's own writes; a key the window
 * names whose row is gone was deleted.
 */
import type {AggregateName} from '../core/aggregate-names.js'
import type {GroupLevel, GroupPolicy, Group} from '../core/groups.js'
import {
  newProvider,
  type Amounts,
  type Consumer,
  type Inventory,
  type MovedConsumer,
  type Provider,
  type State,
  type TopologyLevel,
} from '../core/state/state.js'
import {Changes, PART} from '../core/state/changes.js'
import type {Row} from './backends.js'
import {KEY, type Window} from './journal.js'

const num = (v: unknown) => Number(v)
const str = (v: unknown) => v as string
const strOrNull = (v: unknown) => (v === null || v === undefined ? null : String(v))

/** Every key of a kind the window names, with the parts recorded for it (or'ed over its transactions). */
function keysOf(w: Window): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>()
  for (const k of w.keys) {
    let m = out.get(k.kind)
    if (!m) out.set(k.kind, (m = new Map()))
    m.set(k.key, (m.get(k.key) ?? 0) | k.parts)
  }
  return out
}

/** Rows grouped by one column's value. */
function groupBy(rows: Row[], column: string): Map<string, Row[]> {
  const out = new Map<string, Row[]>()
  for (const r of rows) {
    const k = str(r[column])
    let list = out.get(k)
    if (!list) out.set(k, (list = []))
    list.push(r)
  }
  return out
}

/**
 * Applies the window to `s`; returns the largest provider seq it saw (0 if none), so that this
 * process numbers the providers it makes after those. `nextSeq`: every provider `s` holds has a
 * smaller seq (one added back with a smaller one puts the providers in seq order again).
 */
export function applyWindow(s: State, w: Window, nextSeq: number): number {
  const keys = keysOf(w)
  const outer = s.changes
  // The mutation methods record into a transaction's Changes; this one is thrown away (these
  // changes are already in the database).
  s.changes = new Changes()
  try {
    patchNamed(
      keys.get(KEY.resourceClass),
      w.classes,
      s.classes,
      (name) => s.removeClass(name),
      (r) => {
        const rec = s.classes.get(str(r.name)) ?? s.addClass(str(r.name), num(r.created_at), num(r.id))
        Object.assign(rec, {id: num(r.id), createdAt: num(r.created_at), updatedAt: num(r.updated_at)})
      },
    )
    patchNamed(
      keys.get(KEY.trait),
      w.traitNames,
      s.traits,
      (name) => s.removeTrait(name),
      (r) => {
        const rec = s.traits.get(str(r.name)) ?? s.addTrait(str(r.name), num(r.created_at), num(r.id))
        Object.assign(rec, {id: num(r.id), createdAt: num(r.created_at), updatedAt: num(r.updated_at)})
      },
    )
    const maxSeq = patchProviders(s, keys.get(KEY.provider), w, nextSeq)
    patchConsumers(s, keys.get(KEY.consumer), w)
    patchTopology(s, keys.get(KEY.topologyNode), w)
    patchGroups(s, keys.get(KEY.group), w)
    patchAggregateNames(s, keys.get(KEY.aggregateName), w)
    s.topologyGeneration = w.head.topologyGeneration
    return maxSeq
  } finally {
    s.changes = outer
  }
}

/** Named records (classes, traits): those without a row are gone; the others are set from theirs. */
function patchNamed(
  names: Map<string, number> | undefined,
  rows: Row[],
  have: Map<string, unknown>,
  remove: (name: string) => void,
  set: (r: Row) => void,
): void {
  if (!names) return
  const present = new Set(rows.map((r) => str(r.name)))
  for (const name of names.keys()) if (!present.has(name) && have.has(name)) remove(name)
  for (const r of rows) set(r)
}

function patchProviders(s: State, named: Map<string, number> | undefined, w: Window, nextSeq: number): number {
  if (!named) return 0
  const rows = new Map(w.providers.map((r) => [str(r.uuid), r]))
  // Deleted first (a provider with children or allocations cannot be deleted, so nothing hangs on them).
  for (const uuid of named.keys()) {
    const p = s.providers.get(uuid)
    if (p && !rows.has(uuid)) s.removeProvider(p)
  }
  // New ones in creation order, as the writer added them; one deleted and made again moves to the end.
  let maxSeq = 0
  const made: Provider[] = []
  const changed: Array<[Provider, Row]> = []
  for (const r of w.providers) {
    const uuid = str(r.uuid)
    maxSeq = Math.max(maxSeq, num(r.seq))
    let p = s.providers.get(uuid)
    // Made again (here, or by a write that failed after deleting and making it: not yet numbered).
    if (p && (named.get(uuid)! & PART.created || p.seq !== num(r.seq))) {
      s.removeProvider(p)
      p = undefined
    }
    if (p) {
      changed.push([p, r])
      continue
    }
    p = newProvider(uuid, str(r.name), null, num(r.created_at))
    p.seq = num(r.seq)
    p.parent = strOrNull(r.parent_uuid)
    p.root = str(r.root_uuid)
    p.generation = num(r.generation)
    p.updatedAt = num(r.updated_at)
    p.disabledReason = strOrNull(r.disabled_reason) ?? undefined
    s.addProvider(p)
    made.push(p)
  }
  // A new provider's parent may be newer than it (made later in the window).
  for (const p of made) if (p.parent) s.adopt(s.providers.get(p.parent), p.uuid)
  // One a failed write had deleted here comes back in its place in creation order.
  if (made.some((p) => p.seq < nextSeq)) inSeqOrder(s)
  for (const [p, r] of changed) {
    const name = str(r.name)
    if (p.name !== name) s.renameProvider(p, name)
    const parent = strOrNull(r.parent_uuid)
    if (p.parent !== parent) s.reparentProvider(p, parent === null ? null : (s.providers.get(parent) ?? null))
    p.root = str(r.root_uuid)
    p.generation = num(r.generation)
    p.updatedAt = num(r.updated_at)
    p.disabledReason = strOrNull(r.disabled_reason) ?? undefined
  }
  const inventories = groupBy(w.inventories, 'provider_uuid')
  const traits = groupBy(w.traits, 'provider_uuid')
  const aggregates = groupBy(w.aggregates, 'provider_uuid')
  for (const [uuid, parts] of named) {
    const p = s.providers.get(uuid)
    if (!p) continue
    if (parts & PART.inventories) replaceInventories(s, p, inventories.get(uuid) ?? [])
    if (parts & PART.traits) {
      const names = (traits.get(uuid) ?? []).map((r) => s.traits.get(str(r.trait))?.name ?? str(r.trait))
      if (!sameMembers(p.traits, names)) s.setTraits(p, names)
    }
    if (parts & PART.aggregates) {
      const uuids = (aggregates.get(uuid) ?? []).map((r) => str(r.aggregate_uuid))
      if (!sameMembers(p.aggregates, uuids)) s.setAggregates(p, uuids)
    }
  }
  return maxSeq
}

/** Puts the providers in seq order again (rare: see patchProviders); the index is built anew. */
function inSeqOrder(s: State): void {
  const all = [...s.providers.values()].sort((a, b) => a.seq - b.seq)
  s.providers.clear()
  for (const p of all) s.providers.set(p.uuid, p)
  s.reshapedAll()
}

const sameMembers = (have: Set<string>, want: string[]) => have.size === want.length && want.every((x) => have.has(x))

function replaceInventories(s: State, p: Provider, rows: Row[]): void {
  const want = new Map<string, Inventory>()
  for (const r of rows) {
    const rc = s.classes.get(str(r.resource_class))?.name ?? str(r.resource_class)
    want.set(
      rc,
      s.shared.recordOf(num(r.total), num(r.reserved), num(r.min_unit), num(r.max_unit), num(r.step_size), num(r.allocation_ratio)),
    )
  }
  const have = [...p.inventories]
  const wanted = [...want]
  if (have.length === wanted.length && have.every(([rc, inv], k) => wanted[k][0] === rc && wanted[k][1] === inv)) return
  // In the rows' order, which is the order a load gives (and answers list classes in).
  for (const [rc] of have) s.deleteInventory(p, rc)
  for (const [rc, inv] of wanted) s.setInventory(p, rc, inv)
  s.shareInventories(p)
}

function patchConsumers(s: State, named: Map<string, number> | undefined, w: Window): void {
  if (!named) return
  const moved = new Map(w.moved.map((r) => [str(r.uuid), r]))
  for (const uuid of named.keys()) {
    const m = moved.get(uuid)
    if (m) s.setMoved(movedOf(m))
    else s.removeMoved(uuid)
  }
  const rows = new Map(w.consumers.map((r) => [str(r.uuid), r]))
  const allocations = groupBy(w.allocations, 'consumer_uuid')
  for (const uuid of named.keys()) {
    const r = rows.get(uuid)
    let c = s.consumers.get(uuid)
    if (!r) {
      if (c) s.removeConsumer(c)
      continue
    }
    if (!c) {
      c = {uuid, project: '', user: '', type: null, generation: 0, createdAt: 0, updatedAt: 0, allocations: new Map()} as Consumer
      s.addConsumer(c)
    }
    c.project = str(r.project_id)
    c.user = str(r.user_id)
    c.type = strOrNull(r.consumer_type)
    c.generation = num(r.generation)
    c.createdAt = num(r.created_at)
    c.updatedAt = num(r.updated_at)
    const held = new Map<string, Amounts>()
    for (const a of allocations.get(uuid) ?? []) {
      const p = s.providers.get(str(a.provider_uuid))
      if (!p) continue
      let amounts = held.get(p.uuid)
      if (!amounts) held.set(p.uuid, (amounts = new Map()))
      amounts.set(s.classes.get(str(a.resource_class))?.name ?? str(a.resource_class), num(a.used))
    }
    s.setAllocations(c, held)
  }
}

function patchTopology(s: State, named: Map<string, number> | undefined, w: Window): void {
  if (!named) return
  const rows = new Map(w.topologyNodes.map((r) => [str(r.uuid), r]))
  for (const uuid of named.keys()) {
    const r = rows.get(uuid)
    if (!r) {
      if (s.topology.has(uuid)) s.removeTopologyNode(uuid)
      continue
    }
    s.setTopologyNode({
      uuid,
      name: str(r.name),
      level: str(r.level) as TopologyLevel,
      parent: strOrNull(r.parent_uuid),
      createdAt: num(r.created_at),
      updatedAt: num(r.updated_at),
    })
  }
}

function patchGroups(s: State, named: Map<string, number> | undefined, w: Window): void {
  if (!named) return
  const rows = new Map(w.groups.map((r) => [str(r.name), r]))
  const members = groupBy(w.groupMembers, 'group_name')
  for (const name of named.keys()) {
    const r = rows.get(name)
    if (!r) {
      if (s.groups.has(name)) s.removeGroup(name)
      continue
    }
    s.setGroup(
      groupOf(
        r,
        (members.get(name) ?? []).map((m) => str(m.consumer_uuid)),
      ),
    )
  }
}

function patchAggregateNames(s: State, named: Map<string, number> | undefined, w: Window): void {
  if (!named) return
  const rows = new Map(w.aggregateNames.map((r) => [str(r.uuid), r]))
  // Those gone first: a name that moved to another aggregate is never held by two.
  for (const uuid of named.keys()) if (!rows.has(uuid)) s.removeAggregateName(uuid)
  for (const r of rows.values()) s.setAggregateName(aggregateNameOf(r))
}

/** An aggregate's name from its row (one home for loading and patching). */
export function aggregateNameOf(r: Row): AggregateName {
  return {uuid: str(r.uuid), name: str(r.name), updatedAt: num(r.updated_at)}
}

/** A moved consumer from its row (one home for loading and patching). */
export function movedOf(r: Row): MovedConsumer {
  return {
    uuid: str(r.uuid),
    movedTo: str(r.moved_to),
    project: str(r.project_id),
    user: str(r.user_id),
    type: strOrNull(r.consumer_type),
    movedAt: num(r.moved_at),
  }
}

/** A group from its row and its members in the order they joined (one home for loading and patching). */
export function groupOf(r: Row, members: Iterable<string>): Group {
  return {
    name: str(r.name),
    policy: str(r.policy) as GroupPolicy,
    level: str(r.level) as GroupLevel,
    ...(r.max_per !== null && r.max_per !== undefined ? {maxPer: num(r.max_per)} : {}),
    ...(r.max_skew !== null && r.max_skew !== undefined ? {maxSkew: num(r.max_skew)} : {}),
    soft: Boolean(num(r.soft)),
    members: new Set(members),
    generation: num(r.generation),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  }
}
