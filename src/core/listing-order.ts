/**
 * The order listings print things in, decided by what they are and never by when they were
 * written: a copy of a cloud (export, then import into a new database) lists exactly as its
 * source does. Resource classes in one fixed order (the usual ones first, then by name),
 * providers by name, a provider's aggregates by kind and name. Texts compare by code point,
 * the same on every machine and locale.
 */
import type {TopologyLevel} from './state/state.js'

/** Code point order of two texts. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** The classes every listing shows first, in this order; the others follow by name. */
const FIRST_CLASSES = ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB']

const classRank = (rc: string) => {
  const i = FIRST_CLASSES.indexOf(rc)
  return i < 0 ? FIRST_CLASSES.length : i
}

/** Resource classes in listing order: VCPU, PCPU, MEMORY_MB, DISK_GB, then the others by name. */
export const compareResourceClasses = (a: string, b: string): number => classRank(a) - classRank(b) || compareText(a, b)

/** Amounts per class as entries in listing order. */
export const orderedResources = (r: Record<string, number>): Array<[string, number]> =>
  Object.entries(r).sort(([a], [b]) => compareResourceClasses(a, b))

/** Providers (or anything with a name and a uuid) by name, then uuid. */
export const compareNamed = (a: {name?: string | null; uuid: string}, b: {name?: string | null; uuid: string}): number =>
  compareText(a.name ?? '', b.name ?? '') || compareText(a.uuid, b.uuid)

/** An aggregate as listings know it: its name and level where placemat keeps them. */
export interface AggregateKind {
  uuid: string
  /** The name an apply file gave it, or its rack's, row's or room's; null where none is known. */
  name: string | null
  level: TopologyLevel | null
}

const LEVEL_RANK: Record<TopologyLevel, number> = {rack: 1, row: 2, room: 3}
const aggregateRank = (a: AggregateKind) => (a.name === null ? 4 : a.level === null ? 0 : LEVEL_RANK[a.level])

/**
 * A provider's aggregates in listing order: those an apply file named, by name; then its racks,
 * rows and rooms, by name; then those without a name, by uuid.
 */
export const compareAggregates = (a: AggregateKind, b: AggregateKind): number =>
  aggregateRank(a) - aggregateRank(b) || compareText(a.name ?? '', b.name ?? '') || compareText(a.uuid, b.uuid)
