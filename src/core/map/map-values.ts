/**
 * The numbers the map page colours its boxes by (GET /placemat/v1/map/values): for one flavor of
 * the catalog, each domain's fit, pooled, fragmentation loss, disabled fit and binding, as
 * capacity counts them (headroom.ts, every level); for one class, each domain's capacity and
 * use; what is stranded (on the whole catalog, as capacity says it). With a what-if (a host,
 * rack, row or room lost, a class's ratio changed: what-if.ts, on a copy) the same numbers after
 * it beside those before, whether the cloud survives it and where the displaced consumers go.
 * Only what one view shows: one flavor and one class, in columns (10,000 hosts are some 200 KB).
 */
import {everyHost, isSharing} from '../host.js'
import {capacityOf} from '../inventory-capacity.js'
import type {FlavorRequest} from '../headroom/flavors.js'
import {HEADROOM_LEVELS, headroomTable, releaseTable, type HeadroomLevel, type LintFinding, type Stranded} from '../headroom/headroom.js'
import {whatIf, type Displaced, type LostDomain} from '../headroom/what-if.js'
import type {State} from '../state/state.js'
import {hostDomains} from '../topology.js'

/** One level's domains (names sorted) and their numbers, each column in the names' order. */
export interface LevelValues {
  names: string[]
  /** With a flavor: capacity's columns of it. */
  fit?: number[]
  pooled?: number[]
  fragmentation_loss?: number[]
  disabled_fit?: number[]
  /** What binds, by its number in MapNumbers.bindings (-1: nothing could hold the flavor). */
  binding?: number[]
  /** With a class: what the domain's hosts' trees hold of it (capacity, as Placement counts it) and use. */
  capacity?: number[]
  used?: number[]
}

/** The numbers of one State: before a what-if, or after it. */
export interface MapNumbers {
  levels: Record<HeadroomLevel, LevelValues>
  bindings: Array<string | null>
  /** Free capacity on enabled hosts where no flavor of the catalog fits now (capacity's `stranded`). */
  stranded: Stranded[]
  /** What is used of each sharing pool, by its name and class. */
  pools: Record<string, Record<string, number>>
}

export interface MapWhatIf {
  without: LostDomain[]
  ratios: Record<string, number>
  /** Whether every displaced consumer found a place. */
  survives: boolean
  displaced: Displaced[]
}

export interface MapValues {
  flavor: string | null
  class: string | null
  /** The cloud as it is (before the what-if, when there is one). */
  now: MapNumbers
  /** The cloud after the what-if. */
  after?: MapNumbers
  what_if?: MapWhatIf
  /** Flavors that fit nowhere, or only on disabled hosts (capacity's `lint`). */
  lint: LintFinding[]
}

export interface MapQuery {
  /** The flavor (one of `catalog`), or null for none. */
  flavor: string | null
  class: string | null
  without?: LostDomain[]
  ratios?: Map<string, number>
}

/** The values of `q` on `s` (see the module's comment); `catalog` is the daemon's flavor catalog (none: no fits, no stranded). */
export function mapValues(s: State, catalog: readonly FlavorRequest[], q: MapQuery): MapValues {
  const now = mapNumbers(s, catalog, q)
  const out: MapValues = {flavor: q.flavor, class: q.class, now: now.numbers, lint: now.lint}
  if (q.without?.length || q.ratios?.size) {
    const w = whatIf(s, {without: q.without ?? [], ratios: q.ratios ?? new Map()})
    out.after = mapNumbers(w.after, catalog, q).numbers
    out.what_if = {
      without: q.without ?? [],
      ratios: Object.fromEntries(q.ratios ?? []),
      survives: w.survives,
      displaced: w.displaced,
    }
  }
  return out
}

function mapNumbers(s: State, catalog: readonly FlavorRequest[], q: MapQuery): {numbers: MapNumbers; lint: LintFinding[]} {
  const hosts = everyHost(s)
  const places = hosts.map((h) => hostDomains(s, h))
  // Each level's names, as capacity names them (a host's rack is where it counts).
  const names: Record<HeadroomLevel, string[]> = {
    host: hosts.map((h) => h.name),
    rack: [...new Set(places.flatMap((p) => (p.rack === null ? [] : [p.rack])))],
    row: [...new Set(places.flatMap((p) => (p.row === null ? [] : [p.row])))],
    room: [...new Set(places.flatMap((p) => (p.room === null ? [] : [p.room])))],
    cloud: ['cloud'],
  }
  const levels = {} as Record<HeadroomLevel, LevelValues>
  const index = {} as Record<HeadroomLevel, Map<string, number>>
  for (const level of HEADROOM_LEVELS) {
    const sorted = names[level].sort(compare)
    levels[level] = {names: sorted}
    index[level] = new Map(sorted.map((n, i) => [n, i]))
  }
  const pools: MapNumbers['pools'] = {}
  for (const p of s.providers.values()) if (isSharing(p)) pools[p.name] = Object.fromEntries(p.usages)
  const numbers: MapNumbers = {levels, bindings: [], stranded: [], pools}
  let lint: LintFinding[] = []
  if (catalog.length) {
    const t = headroomTable(s, catalog)
    try {
      numbers.stranded = t.stranded
      lint = t.lint
      const f = q.flavor === null ? -1 : t.flavors.indexOf(q.flavor)
      if (f >= 0) {
        const D = t.levels.length
        const bindingNumber = new Map<string | null, number>()
        for (const level of HEADROOM_LEVELS) {
          const n = levels[level].names.length
          Object.assign(levels[level], {
            fit: new Array(n).fill(0),
            pooled: new Array(n).fill(0),
            fragmentation_loss: new Array(n).fill(0),
            disabled_fit: new Array(n).fill(0),
            binding: new Array(n).fill(-1),
          })
        }
        for (let d = 0; d < D; d++) {
          const at = index[t.levels[d]].get(t.names[d])
          if (at === undefined) continue
          const k = f * D + d
          const v = levels[t.levels[d]]
          v.fit![at] = t.fit[k]
          v.pooled![at] = t.pooled[k]
          v.fragmentation_loss![at] = t.fragmentation_loss[k]
          v.disabled_fit![at] = t.disabled_fit[k]
          const b = t.binding[k] < 0 ? null : t.bindings[t.binding[k]]
          if (b === null) continue
          let number = bindingNumber.get(b)
          if (number === undefined) {
            number = numbers.bindings.length
            bindingNumber.set(b, number)
            numbers.bindings.push(b)
          }
          v.binding![at] = number
        }
      }
    } finally {
      releaseTable(t)
    }
  }
  if (q.class !== null) {
    for (const level of HEADROOM_LEVELS) {
      const n = levels[level].names.length
      levels[level].capacity = new Array(n).fill(0)
      levels[level].used = new Array(n).fill(0)
    }
    hosts.forEach((h, i) => {
      let capacity = 0
      let used = 0
      for (const p of s.subtree(h.uuid)) {
        if (isSharing(p)) continue
        const inv = p.inventories.get(q.class!)
        if (inv) capacity += capacityOf(inv)
        used += p.usages.get(q.class!) ?? 0
      }
      const add = (level: HeadroomLevel, name: string | null) => {
        const at = name === null ? undefined : index[level].get(name)
        if (at === undefined) return
        levels[level].capacity![at] += capacity
        levels[level].used![at] += used
      }
      add('host', h.name)
      add('rack', places[i].rack)
      add('row', places[i].row)
      add('room', places[i].room)
      add('cloud', 'cloud')
    })
  }
  return {numbers, lint}
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
