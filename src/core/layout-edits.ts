/**
 * Edits of a layout document, as the rack/row/room commands make them. Each changes the
 * document in place; a host is in one rack, a rack in one row, a row in one room, so
 * adding one elsewhere moves it. A name that is not there is a 404, one that already is a 409.
 */
import {conflict, notFound} from './errors.js'
import type {TopologyLevel} from './state/state.js'
import type {Layout, RackLayout, RoomLayout, RowLayout} from './topology.js'

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

export function* rowsOf(doc: Layout): Generator<RowAt> {
  for (const room of doc.rooms ?? []) for (const row of room.rows ?? []) yield {row, list: room.rows!, room}
  for (const row of doc.rows ?? []) yield {row, list: doc.rows!}
}

export function* racksOf(doc: Layout): Generator<RackAt> {
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
  throw notFound(`no ${level} named ${name}`)
}
const without = <T>(list: T[], item: T) => {
  const i = list.indexOf(item)
  if (i >= 0) list.splice(i, 1)
}
const topRows = (doc: Layout) => (doc.rows ??= [])
const topRacks = (doc: Layout) => (doc.racks ??= [])
const unique = (xs: string[]) => [...new Set(xs)]

/** Moves the named members of `list` to the top level (`top`); a name not in `list` is a 404 naming `where`. */
function standAlone<T extends {name: string}>(list: T[] | undefined, names: string[], where: string, top: () => T[]): void {
  const absent = names.filter((n) => !list?.some((x) => x.name === n))
  if (absent.length) throw notFound(`not in ${where}: ${absent.join(', ')}`)
  for (const n of unique(names)) {
    const item = list!.find((x) => x.name === n)!
    without(list!, item)
    top().push(item)
  }
}

/** Takes a host out of whatever rack holds it. */
function detachHost(doc: Layout, host: string): void {
  for (const {rack} of racksOf(doc)) if (rack.hosts?.includes(host)) rack.hosts = rack.hosts.filter((h) => h !== host)
}

export const edits = {
  rackCreate(doc: Layout, name: string, opts: {hosts?: string[]; row?: string} = {}): void {
    const other = findRack(doc, name)
    if (other) throw conflict(`rack ${name} already exists${other.row ? ` (in row ${other.row.name})` : ''}`)
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
    if (absent.length) throw notFound(`not in rack ${name}: ${absent.join(', ')}`)
    rack.hosts = (rack.hosts ?? []).filter((h) => !hosts.includes(h))
  },
  rackDelete(doc: Layout, name: string): void {
    const at = needRack(doc, name)
    without(at.list, at.rack)
  },
  rowCreate(doc: Layout, name: string, opts: {racks?: string[]; room?: string} = {}): void {
    const other = findRow(doc, name)
    if (other) throw conflict(`row ${name} already exists${other.room ? ` (in room ${other.room.name})` : ''}`)
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
    standAlone(needRow(doc, name).row.racks, racks, `row ${name}`, () => topRacks(doc))
  },
  /** The row goes; its racks stay, standing alone. */
  rowDelete(doc: Layout, name: string): void {
    const at = needRow(doc, name)
    without(at.list, at.row)
    topRacks(doc).push(...(at.row.racks ?? []))
  },
  roomCreate(doc: Layout, name: string, opts: {rows?: string[]} = {}): void {
    if (findRoom(doc, name)) throw conflict(`room ${name} already exists`)
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
    standAlone(needRoom(doc, name).rows, rows, `room ${name}`, () => topRows(doc))
  },
  /** The room goes; its rows stay, standing alone. */
  roomDelete(doc: Layout, name: string): void {
    const room = needRoom(doc, name)
    without(doc.rooms!, room)
    topRows(doc).push(...(room.rows ?? []))
  },
}
