/**
 * A snapshot file (`placemat export`'s, YAML or JSON; "-" for stdin) read as a sequence of
 * items, each checked on its own as it comes: JSON is read incrementally, so a snapshot of a
 * million providers never sits in memory whole. What needs the whole file (uuids and names
 * unique, parents and allocations pointing at providers of the snapshot) is checked by the
 * import that consumes the items.
 */
import {GROUP_LEVELS, GROUP_POLICIES} from '../../core/groups.js'
import {GROUP_NAME_RULE, isGroupName, ruleOf} from '../../core/group-writes.js'
import {INVENTORY_FIELDS} from '../../core/placement/inventories.js'
import {aggregateNameProblem} from '../../core/aggregate-names.js'
import {MAX_REASON} from '../../core/host-status.js'
import type {Inventory, TopologyLevel} from '../../core/state/state.js'
import {canonicalUuid, isUuidLike} from '../../core/uuids.js'
import type {MovedRecord} from '../../core/consumer-moves.js'
import {usageError} from '../failure.js'
import {openDocument} from './document.js'
import type {JsonMember} from './json-members.js'
import {groupInKeyOrder, movedInKeyOrder} from './snapshot-write.js'
import {
  SNAPSHOT_VERSION,
  SNAPSHOT_VERSIONS,
  TOPOLOGY_LEVELS,
  type SnapshotAggregateName,
  type SnapshotItem,
  type SnapshotConsumer,
  type SnapshotGroup,
  type SnapshotNode,
  type SnapshotProvider,
  type SnapshotTopology,
} from '../../core/snapshot-format.js'

const LISTS = ['resource_classes', 'traits', 'providers', 'consumers', 'groups', 'moved_consumers', 'aggregate_names'] as const
type ListKey = (typeof LISTS)[number]
const isList = (k: string): k is ListKey => (LISTS as readonly string[]).includes(k)

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string')

/** The items of a snapshot file, in file order; throws a usage error (exit 2) at the first one that is wrong. */
export async function* snapshotItems(file: string): AsyncGenerator<SnapshotItem> {
  const usage = (msg: string) => usageError(`${file}: ${msg}`)
  const notSnapshot = `not a placemat snapshot (expected placemat_snapshot: ${SNAPSHOT_VERSIONS.join(' or ')}, as \`placemat export\` writes)`
  const checkVersion = (v: unknown) => {
    if (Number.isInteger(v) && (v as number) > SNAPSHOT_VERSION) {
      throw usage(
        `a snapshot of version ${v}, written by a newer placemat: this one reads versions ${SNAPSHOT_VERSIONS.join(' and ')} (upgrade placemat to import it)`,
      )
    }
    if (!SNAPSHOT_VERSIONS.includes(v as number)) throw usage(notSnapshot)
  }
  const doc = await openDocument(file, {streamed: LISTS, notAMapping: notSnapshot})
  let members: AsyncIterable<JsonMember> | Iterable<JsonMember>
  if (doc.kind === 'yaml') {
    const data = doc.data
    if (!isObject(data)) throw usage(notSnapshot)
    checkVersion(data.placemat_snapshot)
    members = membersOf(data)
  } else members = doc.members

  // A file that is not a snapshot fails on its first item, before its version is read: say what it is not.
  let versioned = false
  const check = <T>(make: () => T): T => {
    try {
      return make()
    } catch (err) {
      if (!versioned) throw usage(notSnapshot)
      throw err
    }
  }
  for await (const m of members) {
    if (m.key === 'placemat_snapshot') {
      if (!('value' in m)) throw usage(notSnapshot)
      checkVersion(m.value)
      versioned = true
      continue
    }
    if (m.key === 'topology' && 'value' in m) {
      if (m.value !== null) yield {kind: 'topology', topology: check(() => topologyOf(m.value, usage))}
      continue
    }
    if (!isList(m.key)) continue
    if ('value' in m) {
      // A streamed list came element by element: a whole value here is not a list.
      if (m.value !== null) throw usage(versioned ? `${m.key} must be a list` : notSnapshot)
      continue
    }
    const v = m.element
    switch (m.key) {
      case 'resource_classes':
        yield {kind: 'resource_class', name: String(v)}
        break
      case 'traits':
        yield {kind: 'trait', name: String(v)}
        break
      case 'providers':
        yield {kind: 'provider', provider: check(() => providerOf(v, usage))}
        break
      case 'consumers':
        yield {kind: 'consumer', consumer: check(() => consumerOf(v, usage))}
        break
      case 'groups':
        yield {kind: 'group', group: check(() => groupOf(v, usage))}
        break
      case 'moved_consumers':
        yield {kind: 'moved', moved: check(() => movedOf(v, usage))}
        break
      case 'aggregate_names':
        yield {kind: 'aggregate_name', name: check(() => aggregateNameOf(v, usage))}
        break
    }
  }
  if (!versioned) throw usage(notSnapshot)
}

/** A parsed document's members as the incremental reader gives them: lists element by element. */
function* membersOf(data: Record<string, unknown>): Generator<JsonMember> {
  for (const [key, value] of Object.entries(data)) {
    if (isList(key) && Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) yield {key, index, element: value[index]}
    } else yield {key, value}
  }
}

function providerOf(p: unknown, usage: (msg: string) => Error): SnapshotProvider {
  if (!isObject(p) || typeof p.uuid !== 'string' || typeof p.name !== 'string' || !Number.isInteger(p.generation)) {
    throw usage('every provider needs uuid, name and an integer generation')
  }
  const parent = p.parent_provider_uuid ?? null
  if (parent !== null && typeof parent !== 'string') throw usage(`provider ${p.uuid}: parent_provider_uuid must be a uuid or null`)
  const inventories = p.inventories ?? {}
  if (!isObject(inventories)) throw usage(`provider ${p.uuid}: inventories must be a mapping of resource class to inventory`)
  const invs: Record<string, Inventory> = {}
  for (const [rc, inv] of Object.entries(inventories)) {
    const record = {} as Inventory
    for (const f of INVENTORY_FIELDS) {
      const x = (inv as any)?.[f]
      if (typeof x !== 'number') throw usage(`provider ${p.uuid} inventory ${rc} needs a number ${f}`)
      record[f] = x
    }
    invs[rc] = record
  }
  const traits = p.traits ?? []
  const aggregates = p.aggregates ?? []
  if (!isStringList(traits)) throw usage(`provider ${p.uuid}: traits must be a list of names`)
  if (!isStringList(aggregates)) throw usage(`provider ${p.uuid}: aggregates must be a list of uuids`)
  const reason = p.disabled_reason ?? undefined
  if (reason !== undefined && (typeof reason !== 'string' || reason === '' || reason.length > MAX_REASON)) {
    throw usage(`provider ${p.uuid}: disabled_reason must be a text of 1 to ${MAX_REASON} characters`)
  }
  return {
    uuid: p.uuid,
    name: p.name,
    generation: p.generation,
    parent_provider_uuid: parent,
    inventories: invs,
    traits,
    aggregates,
    ...(reason !== undefined ? {disabled_reason: reason} : {}),
  }
}

function consumerOf(c: unknown, usage: (msg: string) => Error): SnapshotConsumer {
  if (
    !isObject(c) ||
    typeof c.uuid !== 'string' ||
    !Number.isInteger(c.generation) ||
    typeof c.project_id !== 'string' ||
    typeof c.user_id !== 'string'
  ) {
    throw usage('every consumer needs uuid, project_id, user_id and an integer generation')
  }
  const type = c.consumer_type ?? null
  if (type !== null && typeof type !== 'string') throw usage(`consumer ${c.uuid}: consumer_type must be a string or null`)
  const allocations = c.allocations ?? {}
  if (!isObject(allocations)) throw usage(`consumer ${c.uuid}: allocations must be a mapping of provider uuid to amounts`)
  for (const [rp, amounts] of Object.entries(allocations)) {
    if (amounts !== null && amounts !== undefined && !isObject(amounts))
      throw usage(`consumer ${c.uuid}: allocations on ${rp} must be a mapping of class to amount`)
    for (const [rc, n] of Object.entries(amounts ?? {})) {
      if (!Number.isInteger(n) || (n as number) <= 0) throw usage(`consumer ${c.uuid}: ${rc} on ${rp} must be a positive integer`)
    }
    allocations[rp] = amounts ?? {}
  }
  return {uuid: c.uuid, project_id: c.project_id, user_id: c.user_id, consumer_type: type, generation: c.generation, allocations}
}

/**
 * The racks, rows and rooms, checked as a whole (a section is small): levels and names, a name
 * once per level, and each parent a node of the level above in the snapshot.
 */
function topologyOf(t: unknown, usage: (msg: string) => Error): SnapshotTopology {
  if (!isObject(t) || !Number.isInteger(t.generation) || t.generation < 0 || !Array.isArray(t.nodes ?? [])) {
    throw usage('topology needs an integer generation and a list of nodes')
  }
  const nodes: SnapshotNode[] = []
  const names = new Map<TopologyLevel, Set<string>>(TOPOLOGY_LEVELS.map((l) => [l, new Set()]))
  for (const n of (t.nodes ?? []) as unknown[]) {
    if (!isObject(n) || !TOPOLOGY_LEVELS.includes(n.level) || typeof n.name !== 'string' || n.name.trim() === '') {
      throw usage(`every topology node needs a level (${TOPOLOGY_LEVELS.join(', ')}) and a name`)
    }
    const parent = n.parent ?? null
    if (parent !== null && typeof parent !== 'string') throw usage(`${n.level} ${n.name}: parent must be a name or null`)
    if (parent !== null && n.level === 'room') throw usage(`room ${n.name}: a room has no parent`)
    if (names.get(n.level)!.has(n.name)) throw usage(`${n.level} ${n.name} appears twice`)
    names.get(n.level)!.add(n.name)
    nodes.push({level: n.level, name: n.name, parent})
  }
  const above: Record<TopologyLevel, TopologyLevel | null> = {rack: 'row', row: 'room', room: null}
  for (const n of nodes) {
    if (n.parent !== null && !names.get(above[n.level]!)!.has(n.parent)) {
      throw usage(`${n.level} ${n.name} is in ${above[n.level]} ${n.parent}, which is not in the snapshot`)
    }
  }
  return {generation: t.generation, nodes}
}

/** A placement group: its rule as placemat's own checks take it, and its members. */
function groupOf(g: unknown, usage: (msg: string) => Error): SnapshotGroup {
  if (!isObject(g) || !isGroupName(g.name)) throw usage(`every group needs a name (${GROUP_NAME_RULE})`)
  const what = `group ${g.name}`
  if (!GROUP_POLICIES.includes(g.policy)) throw usage(`${what}: policy must be one of ${GROUP_POLICIES.join(', ')}`)
  if (!GROUP_LEVELS.includes(g.level)) throw usage(`${what}: level must be one of ${GROUP_LEVELS.join(', ')}`)
  try {
    ruleOf({policy: g.policy, level: g.level, maxPer: g.max_per ?? undefined, maxSkew: g.max_skew ?? undefined, soft: g.soft === true})
  } catch (err) {
    throw usage(`${what}: ${(err as Error).message}`)
  }
  if (g.soft !== undefined && typeof g.soft !== 'boolean') throw usage(`${what}: soft must be true or false`)
  if (!Number.isInteger(g.generation) || g.generation < 0) throw usage(`${what}: generation must be a whole number`)
  const time = (key: 'created_at' | 'updated_at') => {
    const v = g[key]
    if (v === undefined || v === null) return undefined
    if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) throw usage(`${what}: ${key} must be a time (ISO 8601)`)
    return new Date(v).toISOString()
  }
  const members = g.members ?? []
  if (!isStringList(members) || !members.every(isUuidLike)) throw usage(`${what}: members must be a list of consumer uuids`)
  const canonical = members.map(canonicalUuid)
  if (new Set(canonical).size !== canonical.length) throw usage(`${what}: a member is listed twice`)
  const created = time('created_at')
  const updated = time('updated_at')
  const now = new Date().toISOString()
  return groupInKeyOrder({
    name: g.name,
    policy: g.policy,
    level: g.level,
    max_per: g.max_per ?? undefined,
    max_skew: g.max_skew ?? undefined,
    soft: g.soft === true,
    generation: g.generation,
    created_at: created ?? updated ?? now,
    updated_at: updated ?? created ?? now,
    members: canonical,
  })
}

/** A consumer that gave its allocations away: who it was, and to whom. */
function movedOf(m: unknown, usage: (msg: string) => Error): MovedRecord {
  if (!isObject(m) || !isUuidLike(m.uuid) || !isUuidLike(m.moved_to) || typeof m.project_id !== 'string' || typeof m.user_id !== 'string') {
    throw usage('every moved consumer needs uuid, moved_to (uuids), project_id and user_id')
  }
  const type = m.consumer_type ?? null
  if (type !== null && typeof type !== 'string') throw usage(`moved consumer ${m.uuid}: consumer_type must be a string or null`)
  if (typeof m.moved_at !== 'string' || Number.isNaN(Date.parse(m.moved_at)))
    throw usage(`moved consumer ${m.uuid}: moved_at must be a time (ISO 8601)`)
  return movedInKeyOrder({
    uuid: canonicalUuid(m.uuid),
    moved_to: canonicalUuid(m.moved_to),
    project_id: m.project_id,
    user_id: m.user_id,
    consumer_type: type,
    moved_at: new Date(m.moved_at).toISOString(),
  })
}

/** A name an apply file gave an aggregate, checked as apply checks it. */
function aggregateNameOf(n: unknown, usage: (msg: string) => Error): SnapshotAggregateName {
  if (!isObject(n) || typeof n.name !== 'string' || !isUuidLike(n.uuid)) throw usage('every aggregate name needs a name and a uuid')
  const problem = aggregateNameProblem(n.name)
  if (problem) throw usage(`aggregate ${n.uuid}: ${problem}`)
  return {name: n.name, uuid: canonicalUuid(n.uuid)}
}
