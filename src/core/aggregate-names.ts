/**
 * Names of aggregates. Placement knows an aggregate by its uuid alone; an apply file may name
 * one (its top-level `aggregates:` map, or a name in a provider's list, which is uuid5 of
 * "aggregate:NAME"). placemat keeps those names (table aggregate_names, written by `apply`),
 * so that listings show them beside the uuid again. Racks, rows and rooms are named by the
 * topology, which wins where both name one aggregate. A name names one aggregate: given to
 * another, it leaves the first.
 */
import {badRequest} from './errors.js'
import {compareAggregates} from './listing-order.js'
import type {State, TopologyLevel} from './state/state.js'
import {canonicalUuid, isUuidLike} from './uuids.js'

export interface AggregateName {
  uuid: string
  name: string
  updatedAt: number
}

/** The longest name kept (a column). */
export const MAX_AGGREGATE_NAME = 255

/** Why `name` cannot name an aggregate, or null when it can. */
export function aggregateNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > MAX_AGGREGATE_NAME) return `an aggregate name has 1 to ${MAX_AGGREGATE_NAME} characters`
  // A name in a provider's aggregates list that looks like a uuid is taken as the uuid.
  if (isUuidLike(name)) return `an aggregate name cannot be a uuid ('${name}')`
  if (/\0|[\uD800-\uDFFF]/u.test(name)) return 'an aggregate name cannot hold a NUL character or a lone UTF-16 surrogate'
  return null
}

/** A change of the stored names: `set` gives each uuid its name, `forget` drops a uuid's name. */
export interface AggregateNameEdit {
  set: Array<{uuid: string; name: string}>
  forget: string[]
}

export const isEmptyEdit = (e: AggregateNameEdit) => e.set.length === 0 && e.forget.length === 0

/**
 * What makes the stored names `wanted` (uuid -> name) has: the names that differ, and with
 * `prune` every stored name of an aggregate `wanted` does not name. A name moving from one
 * aggregate to another needs no forget of the first (setting it takes it away).
 */
export function aggregateNameEdit(s: State, wanted: ReadonlyMap<string, string>, prune: boolean): AggregateNameEdit {
  const set = [...wanted].filter(([uuid, name]) => s.aggregateNames.get(uuid)?.name !== name).map(([uuid, name]) => ({uuid, name}))
  const moving = new Set(set.map((e) => e.name))
  const forget = prune
    ? [...s.aggregateNames.values()]
        .filter((n) => !wanted.has(n.uuid) && !moving.has(n.name))
        .map((n) => n.uuid)
        .sort()
    : []
  return {set: set.sort((a, b) => a.name.localeCompare(b.name)), forget}
}

/** Carries out an edit (400 for a malformed name, or two aggregates given one name). */
export function editAggregateNames(s: State, now: number, edit: AggregateNameEdit): void {
  const given = new Map<string, string>()
  for (const {uuid, name} of edit.set) {
    const problem = aggregateNameProblem(name)
    if (problem) throw badRequest(`Aggregate ${uuid}: ${problem}.`)
    const other = given.get(name)
    if (other !== undefined && other !== canonicalUuid(uuid))
      throw badRequest(`Aggregates ${other} and ${uuid} cannot both be named ${name}.`)
    given.set(name, canonicalUuid(uuid))
  }
  for (const uuid of edit.forget) s.removeAggregateName(canonicalUuid(uuid))
  const holder = new Map([...s.aggregateNames.values()].map((n) => [n.name, n.uuid]))
  for (const [name, uuid] of given) {
    const held = holder.get(name)
    if (held !== undefined && held !== uuid) s.removeAggregateName(held)
    if (s.aggregateNames.get(uuid)?.name !== name) s.setAggregateName({uuid, name, updatedAt: now})
  }
}

/** A named aggregate: a rack, row or room (its level), or one an apply file named (level null). */
export interface NamedAggregate {
  uuid: string
  name: string
  level: TopologyLevel | null
}

const LEVELS: TopologyLevel[] = ['rack', 'row', 'room']

/** Every named aggregate, by name within each kind: racks, then rows, rooms, and the others. */
export function namedAggregates(s: State): NamedAggregate[] {
  const topology = [...s.topology.values()].map((n) => ({uuid: n.uuid, name: n.name, level: n.level}))
  const named = [...s.aggregateNames.values()]
    .filter((n) => !s.topology.has(n.uuid))
    .map((n) => ({uuid: n.uuid, name: n.name, level: null}))
  const kind = (a: NamedAggregate) => (a.level === null ? 3 : LEVELS.indexOf(a.level))
  const byName = (a: NamedAggregate, b: NamedAggregate) => kind(a) - kind(b) || a.name.localeCompare(b.name)
  return [...topology, ...named].sort(byName)
}

/**
 * Every name apply files gave aggregates, by name: also those of racks, rows and rooms, which
 * listings name by the topology instead (a snapshot carries them all).
 */
export function keptAggregateNames(s: State): Array<{uuid: string; name: string}> {
  return [...s.aggregateNames.values()]
    .map((n) => ({uuid: n.uuid, name: n.name}))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** How an aggregate is named in listings: "rack k1" for a rack (row, room), its name for one an apply file named. */
export const aggregateLabel = (a: Pick<NamedAggregate, 'name' | 'level'>): string => (a.level ? `${a.level} ${a.name}` : a.name)

/** The label of each named aggregate, by uuid. */
export function aggregateLabels(named: Iterable<NamedAggregate>): Map<string, string> {
  return new Map([...named].map((a) => [a.uuid, aggregateLabel(a)]))
}

/**
 * A provider's aggregates as listings show them, each with its label (null: no name known), in
 * listing order (compareAggregates): the same for a copy of the cloud, whatever order the
 * provider was given them in.
 */
export function listedAggregates(uuids: Iterable<string>, named: Iterable<NamedAggregate>): Array<{uuid: string; label: string | null}> {
  const byUuid = new Map([...named].map((a) => [a.uuid, a]))
  return [...uuids]
    .map((uuid) => byUuid.get(uuid) ?? {uuid, name: null, level: null})
    .sort(compareAggregates)
    .map((a) => ({uuid: a.uuid, label: a.name === null ? null : aggregateLabel(a as NamedAggregate)}))
}
