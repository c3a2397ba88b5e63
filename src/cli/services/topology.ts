/**
 * Racks, rows and rooms from the CLI: layout files, the plan/apply of a whole layout,
 * read-modify-write edits (rack/row/room commands) and the rolled-up view.
 *
 * On a placemat endpoint (or --db) the topology lives in placemat (GET/PUT
 * /placemat/v1/topology/layout, guarded by the topology generation). On a plain
 * OpenStack Placement endpoint (no /placemat/v1: 404) it is done client-side: each
 * node is an aggregate with the same deterministic uuid (nodeUuid), and each host's
 * aggregates are set through PUT /resource_providers/{uuid}/aggregates (1.19
 * generations, retried on 409), keeping its other aggregates. Placement stores no
 * names, so there the layout file is the only record of them.
 */
import fs from 'node:fs'
import {Errors} from '@oclif/core'
import {ApiError, type PlacementClient} from '../../client/client.js'
import {
  nodeUuid,
  type Layout,
  type RackLayout,
  type RoomLayout,
  type RowLayout,
  type Rollup,
  type TopologyPlan,
  type TopologyView,
} from '../../core/topology.js'
import type {TopologyLevel} from '../../core/state.js'
import {PLACEMAT_API, capacityOf, loadCloud} from './cloud-view.js'
import {isUuidLike, mapLimit, resolveProvider, type ProviderRecord} from './providers.js'
import {retryOnConcurrentUpdate} from './retry.js'
import {readDocument} from './document.js'

export const TOPOLOGY_API = `${PLACEMAT_API}/topology`
export const LAYOUT_API = `${TOPOLOGY_API}/layout`

export type {Layout, TopologyPlan, TopologyView}
export type LayoutDoc = Layout & {generation?: number}

/** A failure with its exit code (2 usage, 3 not found, 4 conflict, 6 bad request). */
export class TopologyError extends Errors.CLIError {
  constructor(message: string, exit: number) {
    super(message, {exit})
  }
}

const usage = (msg: string) => new TopologyError(msg, 2)
const missing = (msg: string) => new TopologyError(msg, 3)
const taken = (msg: string) => new TopologyError(msg, 4)

// ---- layout files ---------------------------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Reads a layout (YAML or JSON; "-" for stdin) and checks its shape (exit 2 when wrong). */
export function readLayoutFile(file: string): LayoutDoc {
  const data = readDocument(file, {fail: usage, jsonFastPath: true})
  return parseLayout(data ?? {}, file)
}

/** Checks the shape of a parsed layout and returns a clean copy (only the keys the API takes). */
export function parseLayout(data: unknown, file = 'layout'): LayoutDoc {
  const errors: string[] = []
  const err = (where: string, msg: string) => errors.push(`${where}: ${msg}`)
  if (!isObject(data)) throw usage(`${file}: expected a mapping with rooms, rows and/or racks`)
  const list = (v: unknown, where: string): unknown[] => {
    if (v === undefined || v === null) return []
    if (!Array.isArray(v)) {
      err(where, 'expected a list')
      return []
    }
    return v
  }
  const named = (v: unknown, where: string, keys: string[]): v is {name: string} & Record<string, unknown> => {
    if (!isObject(v)) {
      err(where, `expected a mapping with ${keys.join(', ')}`)
      return false
    }
    for (const k of Object.keys(v)) if (!keys.includes(k)) err(`${where}.${k}`, `unknown key; expected ${keys.join(', ')}`)
    if (typeof v.name !== 'string' || !v.name.trim() || v.name.length > 255) {
      err(`${where}.name`, 'a name (1-255 characters) is required')
      return false
    }
    return true
  }
  const rack = (v: unknown, where: string): RackLayout | undefined => {
    if (!named(v, where, ['name', 'hosts'])) return undefined
    const hosts: string[] = []
    list(v.hosts, `${where}.hosts`).forEach((h, i) => {
      if ((typeof h !== 'string' && typeof h !== 'number') || String(h).trim() === '') err(`${where}.hosts[${i}]`, 'expected a host name or uuid')
      else hosts.push(String(h))
    })
    return {name: v.name, hosts}
  }
  const row = (v: unknown, where: string): RowLayout | undefined => {
    if (!named(v, where, ['name', 'racks'])) return undefined
    return {name: v.name, racks: list(v.racks, `${where}.racks`).map((k, i) => rack(k, `${where}.racks[${i}]`)).filter((k): k is RackLayout => !!k)}
  }
  const room = (v: unknown, where: string): RoomLayout | undefined => {
    if (!named(v, where, ['name', 'rows'])) return undefined
    return {name: v.name, rows: list(v.rows, `${where}.rows`).map((r, i) => row(r, `${where}.rows[${i}]`)).filter((r): r is RowLayout => !!r)}
  }
  for (const k of Object.keys(data)) if (!['rooms', 'rows', 'racks', 'generation'].includes(k)) err(k, 'unknown key; expected rooms, rows, racks (and generation)')
  const out: LayoutDoc = {
    rooms: list(data.rooms, 'rooms').map((m, i) => room(m, `rooms[${i}]`)).filter((m): m is RoomLayout => !!m),
    rows: list(data.rows, 'rows').map((r, i) => row(r, `rows[${i}]`)).filter((r): r is RowLayout => !!r),
    racks: list(data.racks, 'racks').map((k, i) => rack(k, `racks[${i}]`)).filter((k): k is RackLayout => !!k),
  }
  if (data.generation !== undefined && data.generation !== null) {
    if (typeof data.generation !== 'number' || !Number.isInteger(data.generation) || data.generation < 0) err('generation', 'expected a non-negative integer')
    else out.generation = data.generation
  }
  if (errors.length) throw usage(`${file}: ${errors.slice(0, 20).join('; ')}${errors.length > 20 ? ` (and ${errors.length - 20} more)` : ''}`)
  return out
}

/** Only the layout keys (no generation), without empty top-level lists. */
export function layoutBody(doc: LayoutDoc): Layout {
  const out: Layout = {rooms: doc.rooms ?? []}
  if (doc.rows?.length) out.rows = doc.rows
  if (doc.racks?.length) out.racks = doc.racks
  return out
}

const PLAIN_SCALAR = /^[A-Za-z_][A-Za-z0-9_.\/:+-]*$/
const YAML_WORDS = /^(true|false|yes|no|on|off|null|y|n)$/i
const scalar = (s: string) => (PLAIN_SCALAR.test(s) && !YAML_WORDS.test(s) ? s : JSON.stringify(s))

/** The layout as YAML in the issue's form (hosts as one flow list per rack). */
export function layoutYaml(doc: LayoutDoc, header: string[] = []): string {
  const out = header.map((h) => `# ${h}`)
  if (doc.generation !== undefined) out.push(`generation: ${doc.generation}`)
  const rack = (k: RackLayout, indent: string) => {
    out.push(`${indent}- name: ${scalar(k.name)}`)
    out.push(`${indent}  hosts: [${(k.hosts ?? []).map(scalar).join(', ')}]`)
  }
  const row = (r: RowLayout, indent: string) => {
    out.push(`${indent}- name: ${scalar(r.name)}`)
    if (!r.racks?.length) out.push(`${indent}  racks: []`)
    else {
      out.push(`${indent}  racks:`)
      for (const k of r.racks) rack(k, `${indent}    `)
    }
  }
  const rooms = doc.rooms ?? []
  if (!rooms.length) out.push('rooms: []')
  else {
    out.push('rooms:')
    for (const m of rooms) {
      out.push(`  - name: ${scalar(m.name)}`)
      if (!m.rows?.length) out.push('    rows: []')
      else {
        out.push('    rows:')
        for (const r of m.rows) row(r, '      ')
      }
    }
  }
  if (doc.rows?.length) {
    out.push('rows:')
    for (const r of doc.rows) row(r, '  ')
  }
  if (doc.racks?.length) {
    out.push('racks:')
    for (const k of doc.racks) rack(k, '  ')
  }
  return out.join('\n') + '\n'
}

// ---- walking and editing a layout document -------------------------------------------

interface RackAt {
  rack: RackLayout
  /** The list it sits in (a row's racks, or the top-level racks). */
  list: RackLayout[]
  row?: RowLayout
}
interface RowAt {
  row: RowLayout
  list: RowLayout[]
  room?: RoomLayout
}

function* rowsOf(doc: Layout): Generator<RowAt> {
  for (const room of doc.rooms ?? []) for (const row of room.rows ?? []) yield {row, list: room.rows!, room}
  for (const row of doc.rows ?? []) yield {row, list: doc.rows!}
}

function* racksOf(doc: Layout): Generator<RackAt> {
  for (const {row} of rowsOf(doc)) for (const rack of row.racks ?? []) yield {rack, list: row.racks!, row}
  for (const rack of doc.racks ?? []) yield {rack, list: doc.racks!}
}

export const findRoom = (doc: Layout, name: string) => (doc.rooms ?? []).find((m) => m.name === name)
export const findRow = (doc: Layout, name: string) => [...rowsOf(doc)].find((r) => r.row.name === name)
export const findRack = (doc: Layout, name: string) => [...racksOf(doc)].find((k) => k.rack.name === name)

const needRoom = (doc: Layout, name: string) => findRoom(doc, name) ?? failMissing('room', name)
const needRow = (doc: Layout, name: string) => findRow(doc, name) ?? failMissing('row', name)
const needRack = (doc: Layout, name: string) => findRack(doc, name) ?? failMissing('rack', name)
function failMissing(level: TopologyLevel, name: string): never {
  throw missing(`no ${level} named ${name}`)
}
const without = <T>(list: T[], item: T) => {
  const i = list.indexOf(item)
  if (i >= 0) list.splice(i, 1)
}
const topRows = (doc: Layout) => (doc.rows ??= [])
const topRacks = (doc: Layout) => (doc.racks ??= [])
const unique = (xs: string[]) => [...new Set(xs)]

/** Takes a host out of whatever rack holds it. */
function detachHost(doc: Layout, host: string): void {
  for (const {rack} of racksOf(doc)) if (rack.hosts?.includes(host)) rack.hosts = rack.hosts.filter((h) => h !== host)
}

/**
 * Edits of a layout document, as the rack/row/room commands make them. Each changes the
 * document in place; a host is in one rack, a rack in one row, a row in one room, so
 * adding one elsewhere moves it.
 */
export const edits = {
  rackCreate(doc: Layout, name: string, opts: {hosts?: string[]; row?: string} = {}): void {
    const other = findRack(doc, name)
    if (other) throw taken(`rack ${name} already exists${other.row ? ` (in row ${other.row.name})` : ''}`)
    const list = opts.row ? (needRow(doc, opts.row).row.racks ??= []) : topRacks(doc)
    const rack: RackLayout = {name, hosts: []}
    list.push(rack)
    edits.rackAdd(doc, name, opts.hosts ?? [])
  },
  rackAdd(doc: Layout, name: string, hosts: string[]): void {
    const {rack} = needRack(doc, name)
    for (const h of unique(hosts)) {
      if (rack.hosts?.includes(h)) continue
      detachHost(doc, h)
      ;(rack.hosts ??= []).push(h)
    }
  },
  rackRemove(doc: Layout, name: string, hosts: string[]): void {
    const {rack} = needRack(doc, name)
    const absent = hosts.filter((h) => !rack.hosts?.includes(h))
    if (absent.length) throw missing(`not in rack ${name}: ${absent.join(', ')}`)
    rack.hosts = (rack.hosts ?? []).filter((h) => !hosts.includes(h))
  },
  rackDelete(doc: Layout, name: string): void {
    const at = needRack(doc, name)
    without(at.list, at.rack)
  },
  rowCreate(doc: Layout, name: string, opts: {racks?: string[]; room?: string} = {}): void {
    const other = findRow(doc, name)
    if (other) throw taken(`row ${name} already exists${other.room ? ` (in room ${other.room.name})` : ''}`)
    const racks = unique(opts.racks ?? [])
    for (const k of racks) needRack(doc, k)
    const list = opts.room ? (needRoom(doc, opts.room).rows ??= []) : topRows(doc)
    list.push({name, racks: []})
    edits.rowAdd(doc, name, racks)
  },
  rowAdd(doc: Layout, name: string, racks: string[]): void {
    const {row} = needRow(doc, name)
    const found = unique(racks).map((k) => needRack(doc, k))
    for (const at of found) {
      if (at.row === row) continue
      without(at.list, at.rack)
      ;(row.racks ??= []).push(at.rack)
    }
  },
  rowRemove(doc: Layout, name: string, racks: string[]): void {
    const {row} = needRow(doc, name)
    const absent = racks.filter((k) => !row.racks?.some((r) => r.name === k))
    if (absent.length) throw missing(`not in row ${name}: ${absent.join(', ')}`)
    for (const k of unique(racks)) {
      const rack = row.racks!.find((r) => r.name === k)!
      without(row.racks!, rack)
      topRacks(doc).push(rack)
    }
  },
  /** The row goes; its racks stay, standing alone. */
  rowDelete(doc: Layout, name: string): void {
    const at = needRow(doc, name)
    without(at.list, at.row)
    topRacks(doc).push(...(at.row.racks ?? []))
  },
  roomCreate(doc: Layout, name: string, opts: {rows?: string[]} = {}): void {
    if (findRoom(doc, name)) throw taken(`room ${name} already exists`)
    const rows = unique(opts.rows ?? [])
    for (const r of rows) needRow(doc, r)
    ;(doc.rooms ??= []).push({name, rows: []})
    edits.roomAdd(doc, name, rows)
  },
  roomAdd(doc: Layout, name: string, rows: string[]): void {
    const room = needRoom(doc, name)
    const found = unique(rows).map((r) => needRow(doc, r))
    for (const at of found) {
      if (at.room === room) continue
      without(at.list, at.row)
      ;(room.rows ??= []).push(at.row)
    }
  },
  roomRemove(doc: Layout, name: string, rows: string[]): void {
    const room = needRoom(doc, name)
    const absent = rows.filter((r) => !room.rows?.some((x) => x.name === r))
    if (absent.length) throw missing(`not in room ${name}: ${absent.join(', ')}`)
    for (const r of unique(rows)) {
      const row = room.rows!.find((x) => x.name === r)!
      without(room.rows!, row)
      topRows(doc).push(row)
    }
  },
  /** The room goes; its rows stay, standing alone. */
  roomDelete(doc: Layout, name: string): void {
    const room = needRoom(doc, name)
    without(doc.rooms!, room)
    topRows(doc).push(...(room.rows ?? []))
  },
}

// ---- endpoints ------------------------------------------------------------------------

const notThere = (err: unknown) => err instanceof ApiError && (err.status === 404 || err.status === 405)

/** true on a placemat endpoint (or --db); false on a plain OpenStack Placement endpoint. */
export async function hasTopologyApi(client: PlacementClient): Promise<boolean> {
  return (await layoutIfPlacemat(client)) !== undefined
}

/** The stored layout on a placemat endpoint; undefined on a plain Placement endpoint. */
export async function layoutIfPlacemat(client: PlacementClient): Promise<LayoutDoc | undefined> {
  try {
    return await getLayout(client)
  } catch (err) {
    if (notThere(err)) return undefined
    throw err
  }
}

export const NEEDS_LAYOUT =
  'this is a plain OpenStack Placement endpoint (no /placemat/v1): it stores the aggregates but not the names of racks, rows and rooms; pass the layout file with --layout FILE'

/** Host references (uuids or names) as the names the layout keeps; unknown ones exit 3. */
export async function hostNames(client: PlacementClient, refs: string[]): Promise<string[]> {
  const list = unique(refs)
  const found = await mapLimit(list, 8, (ref) => resolveProvider(client, ref))
  const notRoot = found.filter((p) => p.parent_provider_uuid)
  if (notRoot.length) throw new TopologyError(`not a root provider (only whole hosts go in racks): ${notRoot.map((p) => p.name).join(', ')}`, 6)
  return found.map((p) => p.name)
}

// ---- plans ----------------------------------------------------------------------------

export const emptyPlan = (generation: number | null = null): TopologyPlan => ({
  generation: generation as number,
  nodes: {create: [], update: [], delete: []},
  hosts: {add: [], move: [], remove: []},
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
  return lines
}

export interface Progress {
  (done: number, total: number, label: string): void
}

export interface ApplyOptions {
  dryRun?: boolean
  /** Apply only if the topology is still at this generation (placemat). */
  generation?: number
  /** Plain Placement: the layout applied before, so its racks/rows/rooms that are gone can be emptied. */
  previous?: Layout
  concurrency?: number
  /** Called with the plan before anything is applied (e.g. to print it). */
  onPlan?: (plan: TopologyPlan) => void
  onProgress?: Progress
}

export interface ApplyResult {
  transport: 'placemat' | 'placement'
  plan: TopologyPlan
  applied: boolean
  /** Changes made (placemat: one transaction; placement: aggregate writes). */
  writes: number
}

/**
 * Makes the topology exactly `layout`. placemat: plans (dry run) and applies with the
 * generation it planned at (or `generation`), so a concurrent edit is a clean 409.
 * Plain Placement: see applyPlain.
 */
export async function applyLayout(client: PlacementClient, layout: Layout, opts: ApplyOptions = {}, placemat?: boolean): Promise<ApplyResult> {
  const body = layoutBody(layout)
  if (placemat === undefined || placemat) {
    let planned: TopologyPlan | undefined
    try {
      planned = (await client.put<{plan: TopologyPlan}>(LAYOUT_API, body, {query: {dry_run: 'true'}})).plan
    } catch (err) {
      if (placemat || !notThere(err)) throw err
    }
    if (planned) {
      opts.onPlan?.(planned)
      if (opts.dryRun || planSize(planned) === 0) return {transport: 'placemat', plan: planned, applied: false, writes: 0}
      const generation = opts.generation ?? planned.generation
      const n = planSize(planned)
      opts.onProgress?.(0, 1, `applying ${n} changes in one transaction`)
      const res = await client.put<{plan: TopologyPlan}>(LAYOUT_API, {...body, generation})
      opts.onProgress?.(1, 1, `applied ${n} changes in one transaction`)
      return {transport: 'placemat', plan: res.plan, applied: true, writes: 1}
    }
  }
  return applyPlain(client, body, opts)
}

// ---- plain Placement: client-side -----------------------------------------------------

interface Node {
  uuid: string
  name: string
  level: TopologyLevel
  parent: string | null
}

/** The layout's nodes by uuid (names only; no hosts), without checks. */
export function layoutNodes(layout: Layout): Map<string, Node> {
  const nodes = new Map<string, Node>()
  const add = (level: TopologyLevel, name: string, parent: string | null) => {
    const uuid = nodeUuid(level, name)
    if (!nodes.has(uuid)) nodes.set(uuid, {uuid, name, level, parent})
    return uuid
  }
  const row = (r: RowLayout, parent: string | null) => {
    const u = add('row', r.name, parent)
    for (const k of r.racks ?? []) add('rack', k.name, u)
  }
  for (const m of layout.rooms ?? []) {
    const u = add('room', m.name, null)
    for (const r of m.rows ?? []) row(r, u)
  }
  for (const r of layout.rows ?? []) row(r, null)
  for (const k of layout.racks ?? []) add('rack', k.name, null)
  return nodes
}

const badLayout = (problems: string[]) => new ApiError(400, `Invalid layout: ${problems.join('; ')}`, undefined, 'PUT', 'layout')

/**
 * The layout resolved against the providers, with the checks placemat makes (same
 * messages): node names unique per level, hosts known, root providers, in one rack.
 */
function resolvePlain(layout: Layout, byRef: Map<string, ProviderRecord>): {nodes: Map<string, Node>; hosts: Map<string, string[]>} {
  const nodes = new Map<string, Node>()
  const hosts = new Map<string, string[]>()
  const hostRack = new Map<string, string>()
  const unknown: string[] = []
  const problems: string[] = []
  const add = (level: TopologyLevel, name: string, parent: Node | null): Node | null => {
    const uuid = nodeUuid(level, name)
    if (nodes.has(uuid)) {
      problems.push(`${level} ${name} appears twice`)
      return null
    }
    const n = {uuid, name, level, parent: parent?.uuid ?? null}
    nodes.set(uuid, n)
    return n
  }
  const chain = (n: Node) => {
    const out: string[] = []
    for (let x: Node | undefined = n; x; x = x.parent ? nodes.get(x.parent) : undefined) out.push(x.uuid)
    return out
  }
  const rack = (k: RackLayout, parent: Node | null) => {
    const n = add('rack', k.name, parent)
    if (!n) return
    for (const ref of k.hosts ?? []) {
      const p = byRef.get(ref) ?? (isUuidLike(ref) ? byRef.get(ref.toLowerCase()) : undefined)
      if (!p) {
        unknown.push(ref)
        continue
      }
      if (p.parent_provider_uuid) {
        problems.push(`host ${ref} is not a root provider`)
        continue
      }
      const prev = hostRack.get(p.uuid)
      if (prev) {
        problems.push(`host ${ref} is in two racks (${prev} and ${n.name})`)
        continue
      }
      hostRack.set(p.uuid, n.name)
      hosts.set(p.uuid, chain(n))
    }
  }
  const row = (r: RowLayout, parent: Node | null) => {
    const n = add('row', r.name, parent)
    if (n) for (const k of r.racks ?? []) rack(k, n)
  }
  for (const m of layout.rooms ?? []) {
    const n = add('room', m.name, null)
    if (n) for (const r of m.rows ?? []) row(r, n)
  }
  for (const r of layout.rows ?? []) row(r, null)
  for (const k of layout.racks ?? []) rack(k, null)
  if (unknown.length) problems.unshift(`unknown host(s): ${unknown.slice(0, 20).join(', ')}${unknown.length > 20 ? ` and ${unknown.length - 20} more` : ''}`)
  if (problems.length) throw badLayout(problems)
  return {nodes, hosts}
}

async function allProviders(client: PlacementClient): Promise<ProviderRecord[]> {
  return (await client.get<{resource_providers: ProviderRecord[]}>('/resource_providers')).resource_providers
}

/** Members of each aggregate (GET /resource_providers?member_of=UUID), a few calls in flight. */
async function membersOf(client: PlacementClient, aggs: string[], concurrency: number, progress?: () => void): Promise<Map<string, string[]>> {
  const lists = await mapLimit(aggs, concurrency, async (agg) => {
    const body = await client.get<{resource_providers: ProviderRecord[]}>('/resource_providers', {query: {member_of: agg}})
    progress?.()
    return body.resource_providers.map((p) => p.uuid)
  })
  return new Map(aggs.map((a, i) => [a, lists[i]]))
}

const label = (n: {level: string; name: string}) => `${n.level} ${n.name}`

/**
 * On a plain Placement endpoint: reads who is in each of the layout's aggregates (and the
 * previous layout's), plans as placemat would, and sets each changed host's aggregates
 * (its own generation, re-read and retried on 409), keeping its other aggregates.
 * Without `previous`, a rack/row/room left out of the layout cannot be known, so its
 * hosts keep that aggregate.
 */
export async function applyPlain(client: PlacementClient, layout: Layout, opts: ApplyOptions = {}): Promise<ApplyResult> {
  const concurrency = opts.concurrency ?? 16
  const providers = await allProviders(client)
  const byRef = new Map<string, ProviderRecord>()
  for (const p of providers) byRef.set(p.uuid, p)
  for (const p of providers) if (!byRef.has(p.name)) byRef.set(p.name, p)
  const byUuid = new Map(providers.map((p) => [p.uuid, p]))
  const {nodes, hosts} = resolvePlain(layout, byRef)
  const before = opts.previous ? layoutNodes(opts.previous) : new Map<string, Node>()
  const known = new Map([...before, ...nodes])
  const aggs = [...known.keys()]
  let reads = 0
  const members = await membersOf(client, aggs, concurrency, () => opts.onProgress?.(++reads, aggs.length, `reading ${aggs.length} aggregates`))

  // the topology aggregates each provider is in now
  const current = new Map<string, Set<string>>()
  for (const [agg, list] of members) {
    for (const u of list) {
      let set = current.get(u)
      if (!set) current.set(u, (set = new Set()))
      set.add(agg)
    }
  }
  const plan = emptyPlan()
  const exists = (u: string) => before.has(u) || (members.get(u)?.length ?? 0) > 0
  const parentNow = (n: Node): string | null | undefined => {
    // a node's parent as its members' aggregates say (undefined: cannot tell)
    if (before.has(n.uuid)) return before.get(n.uuid)!.parent
    const first = members.get(n.uuid)?.[0]
    if (!first) return undefined
    const up = n.level === 'rack' ? 'row' : n.level === 'row' ? 'room' : null
    if (!up) return null
    return [...(current.get(first) ?? [])].find((a) => known.get(a)?.level === up) ?? null
  }
  for (const n of nodes.values()) {
    if (!exists(n.uuid)) plan.nodes.create.push(label(n))
    else {
      const p = parentNow(n)
      if (p !== undefined && p !== n.parent) plan.nodes.update.push(label(n))
    }
  }
  for (const n of before.values()) if (!nodes.has(n.uuid) && exists(n.uuid)) plan.nodes.delete.push(label(n))

  const writes = new Map<string, string[]>()
  for (const u of new Set([...hosts.keys(), ...current.keys()])) {
    const wanted = hosts.get(u) ?? []
    const now = current.get(u) ?? new Set<string>()
    if (wanted.length === now.size && wanted.every((a) => now.has(a))) continue
    writes.set(u, wanted)
    const name = byUuid.get(u)?.name ?? u
    if (now.size === 0) plan.hosts.add.push(name)
    else if (wanted.length === 0) plan.hosts.remove.push(name)
    else plan.hosts.move.push(name)
  }
  opts.onPlan?.(plan)
  if (opts.dryRun || writes.size === 0) return {transport: 'placement', plan, applied: false, writes: 0}

  const topology = new Set(aggs)
  let done = 0
  const total = writes.size
  opts.onProgress?.(0, total, `0/${total} hosts`)
  await mapLimit([...writes], concurrency, ([uuid, wanted]) =>
    retryOnConcurrentUpdate(async () => {
      const path = `/resource_providers/${uuid}/aggregates`
      const cur = await client.get<{aggregates: string[]; resource_provider_generation: number}>(path, {version: '1.19'})
      const next = [...cur.aggregates.filter((a) => !topology.has(a)), ...wanted]
      const same = next.length === cur.aggregates.length && next.every((a) => cur.aggregates.includes(a))
      if (!same) await client.put(path, {aggregates: next, resource_provider_generation: cur.resource_provider_generation}, {version: '1.19'})
      opts.onProgress?.(++done, total, `${done}/${total} hosts`)
    }, 10),
  )
  return {transport: 'placement', plan, applied: true, writes: total}
}

// ---- reading the layout back ---------------------------------------------------------

/** placemat: the stored layout (with its generation). */
export async function getLayout(client: PlacementClient): Promise<LayoutDoc> {
  return client.get<LayoutDoc>(LAYOUT_API)
}

/**
 * Plain Placement: the racks, rows and rooms of `file` with the hosts each rack's
 * aggregate really has now (hosts by name).
 */
export async function observedLayout(client: PlacementClient, file: Layout, concurrency = 16): Promise<Layout> {
  const providers = await allProviders(client)
  const names = new Map(providers.map((p) => [p.uuid, p.name]))
  const racks = [...racksOf(file)].map((k) => k.rack)
  const members = await membersOf(client, racks.map((k) => nodeUuid('rack', k.name)), concurrency)
  const copy = structuredClone(layoutBody(file))
  for (const {rack} of racksOf(copy)) {
    rack.hosts = (members.get(nodeUuid('rack', rack.name)) ?? []).filter((u) => names.has(u)).map((u) => names.get(u)!).sort()
  }
  return copy
}

// ---- read-modify-write edits ----------------------------------------------------------

export interface EditOptions {
  dryRun?: boolean
  /** Plain Placement: the layout file that records the topology (read, edited, written back). */
  layoutFile?: string
  concurrency?: number
  onProgress?: Progress
}

export interface EditResult extends ApplyResult {
  layout: Layout
}

/**
 * GET the layout, edit it, PUT it with the generation it was read at; on 409 (another
 * edit in between) read and edit again, a few times. On a plain Placement endpoint the
 * layout file is read, edited, applied client-side (the old file as `previous`) and
 * written back.
 */
export async function editLayout(client: PlacementClient, edit: (doc: Layout) => void, opts: EditOptions = {}): Promise<EditResult> {
  let read = await layoutIfPlacemat(client)
  if (read) {
    return retryOnConcurrentUpdate(async () => {
      const {generation, ...doc} = read ?? (await getLayout(client))
      read = undefined
      edit(doc)
      const res = await applyLayout(client, doc, {dryRun: opts.dryRun, generation, onProgress: opts.onProgress}, true)
      return {...res, layout: doc}
    }, 6)
  }
  if (!opts.layoutFile) throw new TopologyError(NEEDS_LAYOUT, 2)
  const before = fs.existsSync(opts.layoutFile) ? readLayoutFile(opts.layoutFile) : ({} as LayoutDoc)
  const doc = structuredClone(layoutBody(before))
  edit(doc)
  const res = await applyPlain(client, doc, {dryRun: opts.dryRun, previous: before, concurrency: opts.concurrency, onProgress: opts.onProgress})
  if (!opts.dryRun) fs.writeFileSync(opts.layoutFile, layoutYaml(doc, ['placemat topology layout (plain Placement: this file is the record of the names)']))
  return {...res, layout: doc}
}

// ---- the rolled-up view ---------------------------------------------------------------

/** placemat: GET /placemat/v1/topology. */
export async function getView(client: PlacementClient): Promise<{generation: number | null; topology: TopologyView[]}> {
  return client.get(TOPOLOGY_API)
}

/**
 * Plain Placement: the view computed here, as placemat computes it: the racks, rows and
 * rooms of the layout file, each rack's hosts as its aggregate has them now, capacity and
 * usage of each host's whole tree.
 */
export async function plainView(client: PlacementClient, layout: Layout, opts: {concurrency?: number; onProgress?: (d: number, t: number) => void} = {}) {
  const cloud = await loadCloud(client, {placemat: false, parts: {inventories: true, usages: true, traits: false, aggregates: true}, ...opts})
  const children = new Map<string, string[]>()
  const inAgg = new Map<string, string[]>()
  for (const p of cloud.providers.values()) {
    if (p.parent_provider_uuid) children.set(p.parent_provider_uuid, [...(children.get(p.parent_provider_uuid) ?? []), p.uuid])
    for (const a of p.aggregates) inAgg.set(a, [...(inAgg.get(a) ?? []), p.uuid])
  }
  const rollup = (uuid: string): Rollup => {
    const r: Rollup = {capacity: {}, used: {}}
    const stack = [uuid]
    while (stack.length) {
      const p = cloud.providers.get(stack.pop()!)
      if (!p) continue
      for (const [rc, inv] of Object.entries(p.inventories)) r.capacity[rc] = (r.capacity[rc] ?? 0) + capacityOf(inv)
      // as placemat counts: only classes something is allocated from
      for (const [rc, n] of Object.entries(p.usages)) if (n) r.used[rc] = (r.used[rc] ?? 0) + n
      stack.push(...(children.get(p.uuid) ?? []))
    }
    return r
  }
  const addInto = (into: Rollup, from: Rollup) => {
    for (const [rc, n] of Object.entries(from.capacity)) into.capacity[rc] = (into.capacity[rc] ?? 0) + n
    for (const [rc, n] of Object.entries(from.used)) into.used[rc] = (into.used[rc] ?? 0) + n
  }
  const byName = <T extends {name: string}>(a: T, b: T) => a.name.localeCompare(b.name)
  const rack = (k: RackLayout): TopologyView => {
    const uuid = nodeUuid('rack', k.name)
    const v: TopologyView = {uuid, name: k.name, level: 'rack', capacity: {}, used: {}}
    v.hosts = (inAgg.get(uuid) ?? [])
      .map((u) => cloud.providers.get(u)!)
      .sort(byName)
      .map((p) => ({uuid: p.uuid, name: p.name, ...rollup(p.uuid)}))
    for (const h of v.hosts) addInto(v, h)
    return v
  }
  const row = (r: RowLayout): TopologyView => {
    const v: TopologyView = {uuid: nodeUuid('row', r.name), name: r.name, level: 'row', capacity: {}, used: {}}
    v.children = [...(r.racks ?? [])].sort(byName).map(rack)
    for (const c of v.children) addInto(v, c)
    return v
  }
  const room = (m: RoomLayout): TopologyView => {
    const v: TopologyView = {uuid: nodeUuid('room', m.name), name: m.name, level: 'room', capacity: {}, used: {}}
    v.children = [...(m.rows ?? [])].sort(byName).map(row)
    for (const c of v.children) addInto(v, c)
    return v
  }
  const topology = [
    ...[...(layout.rooms ?? [])].sort(byName).map(room),
    ...[...(layout.rows ?? [])].sort(byName).map(row),
    ...[...(layout.racks ?? [])].sort(byName).map(rack),
  ]
  return {generation: null, topology}
}

const CLASS_ORDER = ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB']

/** The resource classes a view has, the usual ones first. */
export function viewClasses(view: TopologyView[]): string[] {
  const seen = new Set<string>()
  for (const v of view) for (const rc of Object.keys(v.capacity)) seen.add(rc)
  for (const v of view) for (const rc of Object.keys(v.used)) seen.add(rc)
  const rank = (rc: string) => (CLASS_ORDER.includes(rc) ? CLASS_ORDER.indexOf(rc) : CLASS_ORDER.length)
  return [...seen].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
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
      for (const h of v.hosts ?? []) rows.push({name: h.name, level: 'host', uuid: h.uuid, hosts: 1, depth: depth + 1, capacity: h.capacity, used: h.used})
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
