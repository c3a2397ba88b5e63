/**
 * `placemat reshape PLAN`: moves inventory (and the allocations against it) between
 * providers with one POST /reshaper, online or offline.
 *
 * A plan is YAML or JSON, in one of two forms:
 *
 *  - the POST /reshaper body itself ({inventories, allocations}); generations left out
 *    (resource_provider_generation, consumer_generation) are filled in from the current state;
 *
 *  - the move form, which the service turns into that body from the current state:
 *
 *      moves:
 *        - from: cn1                  # provider (name or uuid) the inventory leaves
 *          to: cn1_pgpu0              # provider it goes to (name or uuid); when no provider has
 *                                     #   this name it is created, as a child of `parent`
 *          uuid: UUID                 # optional: uuid for the created provider (default random)
 *          parent: NAME|UUID          # optional: parent of the created provider (default: from)
 *          resources: {VGPU: 4}       # inventory totals that move (or "VGPU:4,..."; all: the whole total)
 *          inventory:                 # optional: fields of the new inventory on `to`
 *            VGPU: {max_unit: 4}      #   (default: min_unit, step_size, allocation_ratio of the
 *                                     #   source, max_unit capped at the total moved, reserved 0)
 *          consumers: [UUID, ...]     # whose allocations of these classes on `from` follow
 *
 *    Per (from, class): the totals moved are taken off the source inventory (reserved is
 *    capped at what is left; the class disappears when all of it moves) and added to the
 *    targets (to an existing inventory of that class, or a new one). A consumer that holds
 *    the class on `from` and is listed in a move follows it with its whole amount of that
 *    class; its other allocations stay as they are. `consumers` may be left out only when
 *    it cannot be ambiguous: one move takes all of a class, then every holder follows it.
 *    When all of a class leaves `from`, every holder must be placed; when part of it
 *    leaves, unlisted holders stay on `from`.
 *
 * The service reads the current state through the client (providers of the trees
 * involved, their inventories and allocations, the full allocations of every consumer in
 * the body), checks the reshape by running placemat's own reshaper on a copy of that
 * state (so a dry run shows the tree before and after, and the conflicts — capacity,
 * constraints, generations, inventory in use — the real run would hit), then writes:
 *
 *  - offline (--db FILE): the new child providers and the reshape in ONE store
 *    transaction on the file: it all happens or none of it (a killed process leaves the
 *    file as it was; a daemon serving the same file sees the commit on its next request);
 *  - online on a placemat daemon: the same, through POST /placemat/v1/batch (create_provider
 *    operations, then a reshape operation), one transaction in the daemon;
 *  - online on plain Placement: it has no call that creates a provider inside a reshape, so
 *    new children are created first (POST /resource_providers), then POST /reshaper; if the
 *    reshape fails, the children created by this run are deleted again. Until then they
 *    exist empty (no inventory, no traits), which no scheduling query can select; if the
 *    clean-up itself cannot happen, running the plan again reuses them by name.
 *
 * A 409 concurrent_update (someone wrote in between) re-reads and re-plans, a few times,
 * when the generations were ours to fill in.
 */
import {randomUUID} from 'node:crypto'
import {Errors} from '@oclif/core'
import YAML from 'yaml'
import {ApiError, type PlacementClient} from '../../client/client.js'
import {LocalTransport} from '../../client/transports.js'
import {PlacementError} from '../../core/errors.js'
import {INVENTORY_DEFAULTS, INVENTORY_FIELDS, inventoryCapacity} from '../../core/inventories.js'
import {createProvider} from '../../core/providers.js'
import {reshape, type ReshaperBody} from '../../core/reshaper.js'
import {Changes, State, newProvider, type Consumer, type Inventory} from '../../core/state.js'
import {canonical, isUuidLike, mapLimit, resolveProvider, type ProviderRecord} from './providers.js'
import {isConcurrentUpdate} from './retry.js'
import {readText} from './document.js'
import {PLACEMAT_API} from './cloud-view.js'

// ---------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------

export interface Move {
  from: string
  to: string
  uuid?: string
  parent?: string
  resources: Record<string, number | 'all'>
  inventory?: Record<string, Partial<Inventory>>
  consumers?: string[]
}

export type Plan = {kind: 'body'; body: ReshaperBody} | {kind: 'moves'; moves: Move[]}

const usage = (msg: string) => new Errors.CLIError(msg, {exit: 2})
const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v)

function parseResources(v: unknown, where: string): Record<string, number | 'all'> {
  const out: Record<string, number | 'all'> = {}
  if (typeof v === 'string') {
    for (const part of v.split(',').map((p) => p.trim()).filter(Boolean)) {
      const m = /^([A-Z0-9_]+)[:=]\s*([0-9]+|all)$/.exec(part)
      if (!m) throw usage(`${where}: resources "${v}": expected CLASS:AMOUNT[,CLASS:AMOUNT...]`)
      out[m[1]] = m[2] === 'all' ? 'all' : Number(m[2])
    }
  } else if (isObject(v)) {
    for (const [rc, n] of Object.entries(v)) {
      if (n === 'all' || (Number.isInteger(n) && n > 0)) out[rc] = n
      else throw usage(`${where}: resources.${rc} must be a positive whole number or "all"`)
    }
  } else {
    throw usage(`${where}: resources must be a mapping {CLASS: AMOUNT} or "CLASS:AMOUNT,..."`)
  }
  if (!Object.keys(out).length) throw usage(`${where}: resources is empty`)
  for (const [rc, n] of Object.entries(out)) if (n === 0) throw usage(`${where}: ${rc}: moving 0 moves nothing`)
  return out
}

const MOVE_KEYS = new Set(['from', 'to', 'uuid', 'parent', 'resources', 'inventory', 'consumers'])

/** Parses a plan text (YAML or JSON) into one of the two forms. */
export function parsePlan(text: string, file: string): Plan {
  let data: unknown
  try {
    data = YAML.parse(text)
  } catch (err) {
    throw usage(`${file}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`)
  }
  if (!isObject(data)) throw usage(`${file}: expected a mapping with "moves" or a POST /reshaper body (inventories, allocations)`)
  if ('inventories' in data || 'allocations' in data) {
    if (!isObject(data.inventories) || !isObject(data.allocations ?? {})) {
      throw usage(`${file}: a reshaper body needs an inventories mapping and an allocations mapping`)
    }
    return {kind: 'body', body: {inventories: data.inventories, allocations: data.allocations ?? {}} as ReshaperBody}
  }
  if (!Array.isArray(data.moves) || data.moves.length === 0) {
    throw usage(`${file}: expected "moves: [...]" (see \`placemat reshape --help\`) or a POST /reshaper body`)
  }
  const moves = data.moves.map((m: unknown, i: number): Move => {
    const where = `${file}: moves[${i}]`
    if (!isObject(m)) throw usage(`${where}: expected a mapping`)
    for (const k of Object.keys(m)) if (!MOVE_KEYS.has(k)) throw usage(`${where}: unknown key "${k}" (one of ${[...MOVE_KEYS].join(', ')})`)
    for (const k of ['from', 'to'] as const) {
      if (typeof m[k] !== 'string' || !m[k]) throw usage(`${where}: "${k}" names a provider (name or uuid)`)
    }
    if (m.from === m.to) throw usage(`${where}: from and to are the same provider`)
    if (m.uuid !== undefined && (typeof m.uuid !== 'string' || !isUuidLike(m.uuid))) throw usage(`${where}: uuid must be a uuid`)
    if (m.parent !== undefined && typeof m.parent !== 'string') throw usage(`${where}: parent names a provider`)
    if (m.consumers !== undefined) {
      if (!Array.isArray(m.consumers) || m.consumers.some((c: unknown) => typeof c !== 'string' || !isUuidLike(c))) {
        throw usage(`${where}: consumers must be a list of consumer uuids`)
      }
    }
    const inventory: Record<string, Partial<Inventory>> = {}
    if (m.inventory !== undefined) {
      if (!isObject(m.inventory)) throw usage(`${where}: inventory must be a mapping {CLASS: {field: value}}`)
      for (const [rc, fields] of Object.entries(m.inventory)) {
        if (!isObject(fields)) throw usage(`${where}: inventory.${rc} must be a mapping of inventory fields`)
        for (const [f, v] of Object.entries(fields)) {
          if (!(INVENTORY_FIELDS as readonly string[]).includes(f) || f === 'total') {
            throw usage(`${where}: inventory.${rc}.${f}: one of reserved, min_unit, max_unit, step_size, allocation_ratio`)
          }
          if (typeof v !== 'number') throw usage(`${where}: inventory.${rc}.${f} must be a number`)
        }
        inventory[rc] = fields as Partial<Inventory>
      }
    }
    const resources = parseResources(m.resources, where)
    for (const rc of Object.keys(inventory)) if (!(rc in resources)) throw usage(`${where}: inventory.${rc} but ${rc} is not in resources`)
    return {
      from: m.from,
      to: m.to,
      uuid: m.uuid ? canonical(m.uuid) : undefined,
      parent: m.parent,
      resources,
      inventory,
      consumers: m.consumers?.map((c: string) => canonical(c)),
    }
  })
  return {kind: 'moves', moves}
}

export function readPlan(file: string): Plan {
  return parsePlan(readText(file), file)
}

// ---------------------------------------------------------------------------
// The current state, as read through the client
// ---------------------------------------------------------------------------

type Amounts = Record<string, number>

interface WorldProvider {
  uuid: string
  name: string
  generation: number
  parent: string | null
  root: string
  inventories: Record<string, Inventory>
  /** consumer -> amounts here, and the consumer generation the listing showed */
  allocations: Record<string, {resources: Amounts; consumer_generation?: number}>
}

interface WorldConsumer {
  uuid: string
  project_id: string
  user_id: string
  consumer_type: string | null
  generation: number
  allocations: Record<string, Amounts>
}

export interface World {
  classes: string[]
  providers: Map<string, WorldProvider>
  /** Consumers read in full (every one the body names). */
  consumers: Map<string, WorldConsumer>
  /** Roots of the trees involved, for display. */
  roots: string[]
}

const fullInventory = (raw: Record<string, unknown>): Inventory => {
  const inv = {...INVENTORY_DEFAULTS} as Inventory
  for (const f of INVENTORY_FIELDS) if (typeof raw[f] === 'number') inv[f] = raw[f] as number
  return inv
}

async function readProvider(client: PlacementClient, p: ProviderRecord): Promise<WorldProvider> {
  const base = `/resource_providers/${p.uuid}`
  const [inv, alloc] = await Promise.all([
    client.get<{inventories: Record<string, Record<string, unknown>>}>(`${base}/inventories`),
    client.get<{allocations: WorldProvider['allocations']}>(`${base}/allocations`),
  ])
  return {
    uuid: p.uuid,
    name: p.name,
    generation: p.generation,
    parent: p.parent_provider_uuid ?? null,
    root: p.root_provider_uuid ?? p.uuid,
    inventories: Object.fromEntries(Object.entries(inv.inventories).map(([rc, i]) => [rc, fullInventory(i)])),
    allocations: alloc.allocations,
  }
}

async function findProvider(client: PlacementClient, ref: string): Promise<ProviderRecord | null> {
  try {
    return await resolveProvider(client, ref)
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null
    throw err
  }
}

/**
 * Reads the trees of `start` (every provider in them, with inventories and allocations),
 * then `consumers` in full, then any provider those consumers use outside the trees.
 */
async function readWorld(client: PlacementClient, start: ProviderRecord[], consumers: (w: World) => string[]): Promise<World> {
  const classes = (await client.get<{resource_classes: {name: string}[]}>('/resource_classes')).resource_classes.map((c) => c.name)
  const roots = [...new Set(start.map((p) => p.root_provider_uuid ?? p.uuid))]
  const listed = new Map<string, ProviderRecord>()
  for (const root of roots) {
    const {resource_providers} = await client.get<{resource_providers: ProviderRecord[]}>('/resource_providers', {query: {in_tree: root}})
    for (const p of resource_providers) listed.set(p.uuid, p)
  }
  for (const p of start) if (!listed.has(p.uuid)) listed.set(p.uuid, p)
  const world: World = {classes, providers: new Map(), consumers: new Map(), roots}
  for (const wp of await mapLimit([...listed.values()], 8, (p) => readProvider(client, p))) world.providers.set(wp.uuid, wp)
  const wanted = [...new Set(consumers(world))]
  const read = await mapLimit(wanted, 8, async (uuid) => {
    const c = await client.get<{
      allocations: Record<string, {resources: Amounts}>
      project_id?: string
      user_id?: string
      consumer_generation?: number
      consumer_type?: string
    }>(`/allocations/${uuid}`)
    return {uuid, c}
  })
  for (const {uuid, c} of read) {
    if (!Object.keys(c.allocations).length) continue // not a consumer (yet)
    world.consumers.set(uuid, {
      uuid,
      project_id: c.project_id ?? '',
      user_id: c.user_id ?? '',
      consumer_type: c.consumer_type && c.consumer_type !== 'unknown' ? c.consumer_type : null,
      generation: c.consumer_generation ?? 0,
      allocations: Object.fromEntries(Object.entries(c.allocations).map(([rp, a]) => [rp, {...a.resources}])),
    })
  }
  // Providers these consumers use elsewhere: needed to check capacity there too.
  const outside = new Set<string>()
  for (const c of world.consumers.values()) for (const rp of Object.keys(c.allocations)) if (!world.providers.has(rp)) outside.add(rp)
  const extra = await mapLimit([...outside], 8, async (uuid) => readProvider(client, await client.get<ProviderRecord>(`/resource_providers/${uuid}`)))
  for (const wp of extra) world.providers.set(wp.uuid, wp)
  return world
}

// ---------------------------------------------------------------------------
// Move form -> reshaper body
// ---------------------------------------------------------------------------

export interface ProviderCreate {
  uuid: string
  name: string
  parent_provider_uuid: string
}

export interface Prepared {
  body: ReshaperBody
  creates: ProviderCreate[]
  /** Whether consumer types are part of the body (microversion 1.38 rather than 1.37). */
  consumerTypes: boolean
  /** The generations were read by us (so a concurrent update is worth a re-plan). */
  generationsFilled: boolean
  world: World
}

const sum = (ns: number[]) => ns.reduce((a, b) => a + b, 0)

function planError(msg: string): never {
  throw usage(`plan: ${msg}`)
}

async function prepareMoves(client: PlacementClient, moves: Move[]): Promise<Prepared> {
  // Resolve every provider reference; remember the targets to create.
  const refs = new Map<string, ProviderRecord | null>()
  const resolve = async (ref: string) => {
    if (!refs.has(ref)) refs.set(ref, await findProvider(client, ref))
    return refs.get(ref)!
  }
  const creates = new Map<string, ProviderCreate>()
  const resolved: {from: ProviderRecord; to: string; move: Move}[] = []
  for (const [i, m] of moves.entries()) {
    const from = await resolve(m.from)
    if (!from) planError(`moves[${i}]: no provider ${m.from}`)
    const to = await resolve(m.to)
    if (to) {
      if (m.uuid && to.uuid !== m.uuid) planError(`moves[${i}]: ${m.to} exists with uuid ${to.uuid}, not ${m.uuid}`)
      resolved.push({from, to: to.uuid, move: m})
      continue
    }
    if (isUuidLike(m.to)) planError(`moves[${i}]: no provider ${m.to}; to create one, give its name in "to" (and the uuid in "uuid")`)
    let parentUuid = from.uuid
    if (m.parent) {
      // The parent may itself be created by an earlier move.
      const parent = (await resolve(m.parent))?.uuid ?? creates.get(m.parent)?.uuid
      if (!parent) planError(`moves[${i}]: no provider ${m.parent} to be the parent of ${m.to}`)
      parentUuid = parent
    }
    let c = creates.get(m.to)
    if (!c) creates.set(m.to, (c = {uuid: m.uuid ?? randomUUID(), name: m.to, parent_provider_uuid: parentUuid}))
    else if ((m.uuid && c.uuid !== m.uuid) || c.parent_provider_uuid !== parentUuid) {
      planError(`moves[${i}]: ${m.to} is created by two moves with different uuid or parent`)
    }
    resolved.push({from, to: c.uuid, move: m})
  }
  const starts = [...refs.values()].filter((p): p is ProviderRecord => p !== null)

  const holdersOf = (w: World, from: string, rc: string) =>
    Object.entries(w.providers.get(from)?.allocations ?? {})
      .filter(([, a]) => (a.resources[rc] ?? 0) > 0)
      .map(([c]) => c)
  const world = await readWorld(client, starts, (w) => {
    const out: string[] = []
    for (const {from, move} of resolved) for (const rc of Object.keys(move.resources)) out.push(...holdersOf(w, from.uuid, rc))
    return out
  })

  // Group the moves by (source, class).
  type Group = {from: string; fromName: string; rc: string; moves: {to: string; amount: number | 'all'; move: Move}[]}
  const groups = new Map<string, Group>()
  for (const {from, to, move} of resolved) {
    for (const [rc, amount] of Object.entries(move.resources)) {
      const key = `${from.uuid}\u0000${rc}`
      let g = groups.get(key)
      if (!g) groups.set(key, (g = {from: from.uuid, fromName: from.name, rc, moves: []}))
      g.moves.push({to, amount, move})
    }
  }

  const inventories = new Map<string, Map<string, Inventory>>()
  const inventoryOf = (uuid: string) => {
    let inv = inventories.get(uuid)
    if (!inv) {
      const wp = world.providers.get(uuid)
      inventories.set(uuid, (inv = new Map(Object.entries(wp?.inventories ?? {}).map(([rc, i]) => [rc, {...i}]))))
    }
    return inv
  }
  /** consumer -> (source, class) -> target */
  const follow = new Map<string, {from: string; rc: string; to: string}[]>()

  for (const g of groups.values()) {
    const src = world.providers.get(g.from)!.inventories[g.rc]
    if (!src) planError(`${g.fromName} has no ${g.rc} inventory to move`)
    if (g.moves.some((m) => m.amount === 'all') && g.moves.length > 1) planError(`${g.rc} from ${g.fromName}: "all" only when one move takes ${g.rc}`)
    const amounts = g.moves.map((m) => (m.amount === 'all' ? src.total : m.amount))
    const moved = sum(amounts)
    if (moved > src.total) planError(`${g.rc} from ${g.fromName}: moving ${moved} but the total is ${src.total}`)
    const remaining = src.total - moved

    // Which holder follows which move.
    const holders = holdersOf(world, g.from, g.rc)
    const assigned = new Map<string, string>()
    const listed = g.moves.filter((m) => m.move.consumers !== undefined)
    if (listed.length === 0) {
      if (g.moves.length > 1 && holders.length > 0) {
        planError(`${g.rc} from ${g.fromName} is split across ${g.moves.length} providers: each move must list its consumers`)
      }
      if (remaining > 0 && holders.length > 0) {
        planError(`part of ${g.rc} leaves ${g.fromName} (${moved} of ${src.total}): list the consumers that follow it (consumers: [...])`)
      }
      for (const c of holders) assigned.set(c, g.moves[0].to)
    } else {
      for (const m of g.moves) {
        for (const c of m.move.consumers ?? []) {
          if (!holders.includes(c)) {
            // A consumer listed for a move of several classes needs to hold only some of them.
            const holdsAny = Object.keys(m.move.resources).some((rc) => holdersOf(world, g.from, rc).includes(c))
            if (!holdsAny) planError(`consumer ${c} holds none of ${Object.keys(m.move.resources).join(', ')} on ${g.fromName}`)
            continue
          }
          const prev = assigned.get(c)
          if (prev && prev !== m.to) planError(`consumer ${c} is listed in two moves of ${g.rc} from ${g.fromName}`)
          assigned.set(c, m.to)
        }
      }
      if (remaining === 0) {
        const unplaced = holders.filter((c) => !assigned.has(c))
        if (unplaced.length) {
          planError(`all of ${g.rc} leaves ${g.fromName}, but consumer(s) ${unplaced.join(', ')} holding it are in no move's consumers`)
        }
      }
    }
    for (const [c, to] of assigned) {
      const list = follow.get(c) ?? []
      list.push({from: g.from, rc: g.rc, to})
      follow.set(c, list)
    }

    // Inventories: the source keeps what is left; each target gains its share.
    const fromInv = inventoryOf(g.from)
    if (remaining === 0) fromInv.delete(g.rc)
    else fromInv.set(g.rc, {...src, total: remaining, reserved: Math.min(src.reserved, remaining)})
    g.moves.forEach((m, i) => {
      const toInv = inventoryOf(m.to)
      const have = toInv.get(g.rc)
      const overlay = m.move.inventory?.[g.rc] ?? {}
      const next: Inventory = have
        ? {...have, total: have.total + amounts[i]}
        : {
            total: amounts[i],
            reserved: 0,
            min_unit: src.min_unit,
            max_unit: Math.min(src.max_unit, amounts[i]),
            step_size: src.step_size,
            allocation_ratio: src.allocation_ratio,
          }
      toInv.set(g.rc, {...next, ...overlay})
    })
  }

  const createdUuids = new Set([...creates.values()].map((c) => c.uuid))
  const body: ReshaperBody = {inventories: {}, allocations: {}}
  for (const [uuid, inv] of inventories) {
    body.inventories[uuid] = {
      resource_provider_generation: createdUuids.has(uuid) ? 0 : world.providers.get(uuid)!.generation,
      inventories: Object.fromEntries(inv),
    }
  }
  for (const [uuid, moves] of follow) {
    const c = world.consumers.get(uuid)!
    const allocations: Record<string, Amounts> = Object.fromEntries(Object.entries(c.allocations).map(([rp, a]) => [rp, {...a}]))
    for (const {from, rc, to} of moves) {
      const amount = allocations[from]?.[rc] ?? 0
      if (!amount) continue
      delete allocations[from][rc]
      if (!Object.keys(allocations[from]).length) delete allocations[from]
      allocations[to] = {...(allocations[to] ?? {}), [rc]: (allocations[to]?.[rc] ?? 0) + amount}
    }
    body.allocations[uuid] = {
      allocations: Object.fromEntries(Object.entries(allocations).map(([rp, resources]) => [rp, {resources}])),
      project_id: c.project_id,
      user_id: c.user_id,
      consumer_generation: c.generation,
    }
  }
  return {body, creates: [...creates.values()], consumerTypes: false, generationsFilled: true, world}
}

async function prepareBody(client: PlacementClient, raw: ReshaperBody): Promise<Prepared> {
  const body: ReshaperBody = JSON.parse(JSON.stringify(raw))
  const rps = new Set<string>(Object.keys(body.inventories))
  for (const c of Object.values(body.allocations ?? {})) for (const rp of Object.keys(c?.allocations ?? {})) rps.add(rp)
  const starts: ProviderRecord[] = []
  for (const uuid of rps) {
    try {
      starts.push(await client.get<ProviderRecord>(`/resource_providers/${uuid}`))
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err
      // Unknown providers stay in the body: the reshaper reports them as Placement does.
    }
  }
  const world = await readWorld(client, starts, () => Object.keys(body.allocations ?? {}))
  let filled = false
  let explicit = false
  for (const [uuid, entry] of Object.entries(body.inventories)) {
    if (isObject(entry) && entry.resource_provider_generation === undefined) {
      const wp = world.providers.get(uuid)
      if (wp) {
        entry.resource_provider_generation = wp.generation
        filled = true
      }
    } else explicit = true
  }
  let consumerTypes = false
  for (const [uuid, entry] of Object.entries(body.allocations ?? {})) {
    if (!isObject(entry)) continue
    if (entry.consumer_generation === undefined) {
      entry.consumer_generation = world.consumers.get(uuid)?.generation ?? null
      filled = true
    } else explicit = true
    if (entry.consumer_type !== undefined) consumerTypes = true
  }
  return {body, creates: [], consumerTypes, generationsFilled: filled && !explicit, world}
}

// ---------------------------------------------------------------------------
// Checking on a copy of the state, and the views
// ---------------------------------------------------------------------------

export interface InventoryView extends Inventory {
  capacity: number
  used: number
}

export interface ProviderView {
  uuid: string
  name: string
  generation: number
  parent_provider_uuid: string | null
  depth: number
  created: boolean
  inventories: Record<string, InventoryView>
}

export interface ConsumerMove {
  consumer: string
  resource_class: string
  amount: number
  from: string | null
  to: string | null
}

export interface Conflict {
  kind: 'capacity' | 'constraint' | 'generation' | 'inventory_in_use' | 'not_found' | 'invalid'
  message: string
}

export interface Check {
  before: ProviderView[]
  after: ProviderView[] | null
  moves: ConsumerMove[]
  conflicts: Conflict[]
  /** The first error the reshape would raise, as Placement would send it. */
  error: {status: number; detail: string; code: string} | null
}

/** A State holding what the world shows (consumers outside the body only partly: enough for usages). */
function buildState(world: World): State {
  const s = new State()
  s.changes = new Changes()
  const now = Date.now()
  let custom = 10000
  world.classes.forEach((name, i) => s.addClass(name, now, name.startsWith('CUSTOM_') ? custom++ : i))
  const pending = [...world.providers.values()]
  while (pending.length) {
    const before = pending.length
    for (let i = 0; i < pending.length; ) {
      const wp = pending[i]
      const parent = wp.parent ? s.providers.get(wp.parent) : undefined
      if (wp.parent && !parent && world.providers.has(wp.parent)) {
        i++
        continue
      }
      const p = newProvider(wp.uuid, wp.name, parent ?? null, now)
      p.generation = wp.generation
      p.root = wp.root
      p.parent = wp.parent
      p.inventories = new Map(Object.entries(wp.inventories).map(([rc, inv]) => [rc, {...inv}]))
      s.addProvider(p)
      pending.splice(i, 1)
    }
    if (pending.length === before) break
  }
  const consumers = new Map<string, {c: Consumer; allocations: Map<string, Map<string, number>>}>()
  const consumerFor = (uuid: string, generation: number) => {
    let e = consumers.get(uuid)
    if (!e) {
      const c: Consumer = {uuid, project: '', user: '', type: null, generation, createdAt: now, updatedAt: now, allocations: new Map()}
      consumers.set(uuid, (e = {c, allocations: new Map()}))
    }
    return e
  }
  for (const wc of world.consumers.values()) {
    const e = consumerFor(wc.uuid, wc.generation)
    Object.assign(e.c, {project: wc.project_id, user: wc.user_id, type: wc.consumer_type})
    for (const [rp, a] of Object.entries(wc.allocations)) if (s.providers.has(rp)) e.allocations.set(rp, new Map(Object.entries(a)))
  }
  for (const wp of world.providers.values()) {
    for (const [cu, a] of Object.entries(wp.allocations)) {
      if (world.consumers.has(cu)) continue
      consumerFor(cu, a.consumer_generation ?? 0).allocations.set(wp.uuid, new Map(Object.entries(a.resources)))
    }
  }
  for (const {c, allocations} of consumers.values()) {
    s.addConsumer(c)
    s.setAllocations(c, allocations)
  }
  s.changes = null
  return s
}

function views(s: State, roots: string[], created: Set<string>, extra: string[]): ProviderView[] {
  const out: ProviderView[] = []
  const seen = new Set<string>()
  const byName = (a: string, b: string) => {
    const na = s.providers.get(a)?.name ?? a
    const nb = s.providers.get(b)?.name ?? b
    return na < nb ? -1 : na > nb ? 1 : 0
  }
  const walk = (uuid: string, depth: number) => {
    const p = s.providers.get(uuid)
    if (!p || seen.has(uuid)) return
    seen.add(uuid)
    const inventories: Record<string, InventoryView> = {}
    for (const [rc, inv] of p.inventories) inventories[rc] = {...inv, capacity: inventoryCapacity(inv), used: p.usages.get(rc) ?? 0}
    for (const [rc, used] of p.usages) if (!inventories[rc]) inventories[rc] = {...INVENTORY_DEFAULTS, total: 0, capacity: 0, used}
    out.push({uuid, name: p.name, generation: p.generation, parent_provider_uuid: p.parent, depth, created: created.has(uuid), inventories})
    for (const c of [...p.children].sort(byName)) walk(c, depth + 1)
  }
  for (const r of [...roots].sort(byName)) walk(r, 0)
  for (const u of extra.sort(byName)) walk(u, 0)
  return out
}

function conflictKind(err: PlacementError): Conflict['kind'] {
  if (err.code === 'placement.concurrent_update') return 'generation'
  if (err.code === 'placement.inventory.inuse') return 'inventory_in_use'
  if (err.code === 'placement.resource_provider.not_found' || err.status === 404) return 'not_found'
  if (/exceed the capacity/.test(err.detail)) return 'capacity'
  if (/violate inventory constraints/.test(err.detail)) return 'constraint'
  return 'invalid'
}

/**
 * Runs the reshape on a copy of the world: the views before and after, the allocations
 * that move, and the conflicts. Besides the first error (what the reshaper would answer),
 * every provider whose final usage would exceed its capacity and every stale generation
 * in the body is listed.
 */
export function check(prep: Prepared): Check {
  const {world, body} = prep
  const s = buildState(world)
  const created = new Set(prep.creates.map((c) => c.uuid))
  const extra = [...world.providers.values()].filter((p) => !world.roots.includes(p.root)).map((p) => p.uuid)
  const before = views(s, world.roots, created, extra)
  const conflicts: Conflict[] = []

  for (const [uuid, entry] of Object.entries(body.inventories)) {
    const wp = world.providers.get(uuid)
    const given = entry?.resource_provider_generation
    if (wp && given !== wp.generation) {
      conflicts.push({kind: 'generation', message: `provider ${wp.name} (${uuid}): the plan has generation ${given}, it is now ${wp.generation}`})
    }
  }
  for (const [uuid, entry] of Object.entries(body.allocations ?? {})) {
    const now = world.consumers.get(uuid)?.generation ?? null
    const given = entry?.consumer_generation ?? null
    if (given !== now) conflicts.push({kind: 'generation', message: `consumer ${uuid}: the plan has generation ${given}, it is now ${now}`})
  }
  // Final usage against final capacity, for every provider the body touches.
  const finalUse = new Map<string, Map<string, number>>()
  const add = (rp: string, rc: string, n: number) => {
    let m = finalUse.get(rp)
    if (!m) finalUse.set(rp, (m = new Map()))
    m.set(rc, (m.get(rc) ?? 0) + n)
  }
  const inBody = new Set(Object.keys(body.allocations ?? {}))
  const touched = new Set(Object.keys(body.inventories))
  for (const e of Object.values(body.allocations ?? {})) for (const rp of Object.keys(e?.allocations ?? {})) touched.add(rp)
  for (const rp of touched) {
    const p = s.providers.get(rp)
    if (!p) continue
    for (const [cu, amounts] of p.allocations) if (!inBody.has(cu)) for (const [rc, n] of amounts) add(rp, rc, n)
  }
  for (const e of Object.values(body.allocations ?? {})) {
    for (const [rp, a] of Object.entries(e?.allocations ?? {})) for (const [rc, n] of Object.entries(a?.resources ?? {})) add(rp, rc, n)
  }
  for (const rp of touched) {
    const p = s.providers.get(rp)
    const name = p?.name ?? prep.creates.find((c) => c.uuid === rp)?.name ?? rp
    const finalInv = body.inventories[rp]?.inventories as Record<string, Partial<Inventory> & {total: number}> | undefined
    for (const [rc, used] of finalUse.get(rp) ?? []) {
      const raw = finalInv ? finalInv[rc] : p?.inventories.get(rc)
      if (!raw) {
        conflicts.push({kind: 'invalid', message: `${rc} on ${name}: ${used} allocated but it would have no ${rc} inventory`})
        continue
      }
      const cap = inventoryCapacity({...INVENTORY_DEFAULTS, ...raw})
      if (used > cap) conflicts.push({kind: 'capacity', message: `${rc} on ${name}: ${used} allocated, capacity would be ${cap}`})
    }
  }

  let error: Check['error'] = null
  let after: ProviderView[] | null = null
  s.changes = new Changes()
  try {
    const now = Date.now()
    for (const c of prep.creates) createProvider(s, now, c)
    reshape(s, now, body, {consumerTypes: prep.consumerTypes})
    after = views(s, world.roots, created, extra)
  } catch (err) {
    if (!(err instanceof PlacementError)) throw err
    error = {status: err.status, detail: err.detail, code: err.code}
    if (!conflicts.some((c) => c.message === err.detail)) conflicts.push({kind: conflictKind(err), message: err.detail})
  } finally {
    s.changes = null
  }

  const moves: ConsumerMove[] = []
  for (const [cu, e] of Object.entries(body.allocations ?? {})) {
    const was = world.consumers.get(cu)?.allocations ?? {}
    const will: Record<string, Amounts> = Object.fromEntries(Object.entries(e?.allocations ?? {}).map(([rp, a]) => [rp, a?.resources ?? {}]))
    const classes = new Set<string>()
    for (const a of [...Object.values(was), ...Object.values(will)]) for (const rc of Object.keys(a)) classes.add(rc)
    for (const rc of [...classes].sort()) {
      const lost = Object.entries(was).filter(([rp, a]) => (a[rc] ?? 0) > (will[rp]?.[rc] ?? 0))
      const gained = Object.entries(will).filter(([rp, a]) => (a[rc] ?? 0) > (was[rp]?.[rc] ?? 0))
      for (const [rp, a] of lost) {
        const amount = a[rc] - (will[rp]?.[rc] ?? 0)
        const to = gained.length === 1 ? gained[0][0] : null
        moves.push({consumer: cu, resource_class: rc, amount, from: rp, to})
      }
      if (!lost.length) for (const [rp, a] of gained) moves.push({consumer: cu, resource_class: rc, amount: a[rc] - (was[rp]?.[rc] ?? 0), from: null, to: rp})
    }
  }
  return {before, after, moves, conflicts, error}
}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

function inventoryLine(rc: string, v: InventoryView): string {
  const extras: string[] = []
  if (v.reserved) extras.push(`reserved ${v.reserved}`)
  if (v.allocation_ratio !== 1) extras.push(`ratio ${v.allocation_ratio}`)
  if (v.min_unit !== 1) extras.push(`min ${v.min_unit}`)
  if (v.max_unit !== INVENTORY_DEFAULTS.max_unit) extras.push(`max ${v.max_unit}`)
  if (v.step_size !== 1) extras.push(`step ${v.step_size}`)
  const over = v.used > v.capacity ? '  OVER CAPACITY' : ''
  return `${rc.padEnd(18)} ${`${v.used}/${v.capacity}`.padStart(13)}  total ${v.total}${extras.length ? `, ${extras.join(', ')}` : ''}${over}`
}

export function renderTree(list: ProviderView[]): string[] {
  const lines: string[] = []
  for (const p of list) {
    const pad = '  '.repeat(p.depth)
    lines.push(`${pad}${p.name}  ${p.uuid}  generation ${p.generation}${p.created ? '  (new)' : ''}`)
    const rcs = Object.keys(p.inventories).sort()
    if (!rcs.length) lines.push(`${pad}    (no inventory)`)
    for (const rc of rcs) lines.push(`${pad}    ${inventoryLine(rc, p.inventories[rc])}`)
  }
  return lines
}

export interface ReshapeReport {
  plan: 'moves' | 'body'
  dry_run: boolean
  applied: boolean
  transaction: 'offline' | 'online'
  creates: ProviderCreate[]
  body: ReshaperBody
  microversion: string
  before: ProviderView[]
  after: ProviderView[] | null
  moves: ConsumerMove[]
  conflicts: Conflict[]
  error: Check['error']
  attempts: number
  /** Once applied: whether the new providers and the reshape were one transaction (false: plain Placement, two steps). */
  atomic?: boolean
}

export function renderReport(r: ReshapeReport): string {
  const name = (uuid: string | null) => {
    if (!uuid) return '-'
    return r.before.find((p) => p.uuid === uuid)?.name ?? r.after?.find((p) => p.uuid === uuid)?.name ?? r.creates.find((c) => c.uuid === uuid)?.name ?? uuid
  }
  const out: string[] = []
  const how = r.atomic === undefined ? r.transaction : `${r.transaction}, ${r.atomic ? 'one transaction' : 'new providers first, then the reshape'}`
  out.push(`${r.dry_run ? 'Dry run' : 'Reshape'} (${how}): ${r.plan === 'moves' ? 'move plan' : 'reshaper body'}, microversion ${r.microversion}`)
  if (r.creates.length) {
    out.push('', 'New providers:')
    for (const c of r.creates) out.push(`  + ${c.name}  ${c.uuid}  under ${name(c.parent_provider_uuid)}`)
  }
  out.push('', 'Before:', ...renderTree(r.before).map((l) => `  ${l}`))
  out.push('', 'After:')
  if (r.after) out.push(...renderTree(r.after).map((l) => `  ${l}`))
  else out.push('  (the reshape would fail; nothing would change)')
  out.push('', 'Allocations that move:')
  if (!r.moves.length) out.push('  none')
  for (const m of r.moves) out.push(`  ${m.consumer}  ${m.resource_class}:${m.amount}  ${name(m.from)} -> ${name(m.to)}`)
  out.push('', 'Conflicts:')
  if (!r.conflicts.length) out.push('  none')
  for (const c of r.conflicts) out.push(`  ${c.kind}: ${c.message}`)
  out.push('')
  if (r.dry_run) out.push(r.error ? `The reshape would fail: ${r.error.status} ${r.error.detail}` : 'The reshape would succeed. Nothing was changed (dry run).')
  else if (r.applied) out.push(`Reshaped${r.attempts > 1 ? ` (after ${r.attempts} attempts)` : ''}.`)
  return out.join('\n')
}

// ---------------------------------------------------------------------------
// Running it
// ---------------------------------------------------------------------------

export interface ReshapeOptions {
  dryRun: boolean
  tries?: number
}

const toApiError = (err: PlacementError) => new ApiError(err.status, err.detail, err.code, 'POST', '/reshaper')

async function prepare(client: PlacementClient, plan: Plan): Promise<Prepared> {
  return plan.kind === 'moves' ? prepareMoves(client, plan.moves) : prepareBody(client, plan.body)
}

/**
 * On a placemat daemon: the new children and the reshape in one POST /placemat/v1/batch, one
 * transaction. False when the endpoint has no batch API (plain Placement).
 */
async function reshapeInOneBatch(client: PlacementClient, prep: Prepared, microversion: string): Promise<boolean> {
  const operations = [
    ...prep.creates.map((c) => ({op: 'create_provider', ...c})),
    {op: 'reshape', microversion, ...prep.body},
  ]
  try {
    await client.post(`${PLACEMAT_API}/batch`, {operations})
    return true
  } catch (err) {
    // The route itself missing, not an operation failing ("operation N (...): ...").
    if (err instanceof ApiError && err.status === 404 && !/^operation \d+ /.test(err.detail)) return false
    throw err
  }
}

/**
 * Plans, checks and (unless dry run) applies a reshape. Throws ApiError (the reshaper's
 * answer) when it fails; `onReport` gets the report before the write so a failed write
 * still shows what was tried.
 */
export async function runReshape(
  client: PlacementClient,
  plan: Plan,
  opts: ReshapeOptions,
  onReport?: (r: ReshapeReport) => void,
): Promise<ReshapeReport> {
  const store = client.transport instanceof LocalTransport ? client.transport.store : null
  const tries = opts.tries ?? 5
  const created: string[] = []
  for (let attempt = 1; ; attempt++) {
    const prep = await prepare(client, plan)
    const result = check(prep)
    const microversion = prep.consumerTypes ? '1.38' : '1.37'
    const report: ReshapeReport = {
      plan: plan.kind,
      dry_run: opts.dryRun,
      applied: false,
      transaction: store ? 'offline' : 'online',
      creates: prep.creates,
      body: prep.body,
      microversion,
      ...result,
      attempts: attempt,
    }
    if (opts.dryRun) return report
    try {
      // A plan the check already finds failing is not tried (nothing is created for it).
      if (result.error) throw new ApiError(result.error.status, result.error.detail, result.error.code, 'POST', '/reshaper')
      if (store) {
        try {
          await store.write((s, now) => {
            for (const c of prep.creates) createProvider(s, now, c)
            reshape(s, now, prep.body, {consumerTypes: prep.consumerTypes})
          })
        } catch (err) {
          throw err instanceof PlacementError ? toApiError(err) : err
        }
        report.atomic = true
      } else if (await reshapeInOneBatch(client, prep, microversion)) {
        report.atomic = true
      } else {
        for (const c of prep.creates) {
          await client.post('/resource_providers', c, {version: '1.20'})
          created.push(c.uuid)
        }
        await client.post('/reshaper', prep.body, {version: microversion})
        report.atomic = false
      }
      report.applied = true
      return report
    } catch (err) {
      if (isConcurrentUpdate(err) && prep.generationsFilled && attempt < tries) {
        await new Promise((r) => setTimeout(r, 10 * attempt + Math.floor(Math.random() * 20)))
        continue
      }
      onReport?.(report)
      // Online: take back the providers this run created for the failed reshape.
      for (const uuid of created.reverse()) await client.delete(`/resource_providers/${uuid}`).catch(() => undefined)
      throw err
    }
  }
}
