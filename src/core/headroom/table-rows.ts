/**
 * One flavor's rows of a headroom table (headroom.ts countTable), written from its hosts' fits:
 * each host's row; each cell's sums (hosts in the same rack, row and room), then each rack's,
 * row's, room's and the cloud's from its cells; again where a domain draws on a pool or a
 * placement group's rule bounds the fit. A number that does not fit the table's 32-bit columns is
 * noted (`overflow`), and the table counted again in 64-bit ones.
 */
import {type FlavorRequest, askedPerClass} from './flavors.js'
import {groupFit} from './group-headroom.js'
import type {Group} from '../groups.js'
import {domainMembers, mostVoted, poolsDomain, type DomainLayoutPart, type HostFits, type HostNumbers} from './domains.js'
import type {HeadroomTable} from './headroom.js'
import type {State} from '../state/state.js'
import type {HostForest} from './tree-shapes.js'

/** Whether a number fits a 32-bit column: a whole number from -2^31 to 2^31 - 1. */
const fitsInt32 = (x: number): boolean => x <= 0x7fffffff && x >= -0x80000000 && x === Math.floor(x)

/** One flavor's rows of a table: what it asks, and each row written with what follows from its fit. */
export class FlavorRows {
  /** Whether a number did not fit the table's 32-bit columns: then the table is counted again in 64-bit ones. */
  overflow = false
  /** What one instance asks of each class (`asks`, in the same order), and each class's number (-1: no tree has it). */
  readonly asked: ReadonlyMap<string, number>
  readonly asks: number[]
  readonly askClass: Int32Array

  constructor(
    private readonly t: HeadroomTable,
    forest: HostForest,
    flavor: FlavorRequest,
    private readonly wide: boolean,
  ) {
    this.asked = askedPerClass(flavor.request)
    this.asks = [...this.asked.values()]
    this.askClass = Int32Array.from(this.asked.keys(), (rc) => forest.classes.indexOf(rc))
  }

  /** The fit if a host, or a domain's hosts, were one host: each asked class's free amount (in `total` from `at`) over what one instance asks. */
  pooledOf(total: Float64Array, at: number): number {
    let pooled = Infinity
    for (let j = 0; j < this.asks.length; j++) pooled = Math.min(pooled, Math.floor(total[at + j] / this.asks[j]))
    return pooled
  }

  /** Row k: its fit, pooled (never below the fit), the loss to host boundaries between them, and its disabled hosts' fit. */
  set(k: number, fit: number, pooled: number, disabledFit: number): void {
    const {t} = this
    const most = Math.max(pooled, fit)
    const loss = Math.max(0, pooled - fit)
    if (!this.wide && !(fitsInt32(fit) && fitsInt32(most) && fitsInt32(loss) && fitsInt32(disabledFit))) this.overflow = true
    t.fit[k] = fit
    t.pooled[k] = most
    t.fragmentation_loss[k] = loss
    t.disabled_fit[k] = disabledFit
  }

  /** Row k's fit bounded by a placement group's rule (pooled and the loss stay the flavor's: host boundaries alone). */
  bound(k: number, bound: number): void {
    if (!this.wide && !fitsInt32(bound)) this.overflow = true
    this.t.fit[k] = Math.min(this.t.fit[k], bound)
  }

  /** Row k's binding, by number in the table's `bindings` (-1: none). */
  bind(k: number, binding: number): void {
    this.t.binding[k] = binding
  }
}

/**
 * What a flavor's enabled and disabled hosts add up to per cell (hosts in the same rack, row and
 * room), written over for each flavor: a level's domains are then summed from the few cells.
 */
export interface CellSums {
  fit: Float64Array
  disabledFit: Float64Array
  /** 1 where an enabled host could ever hold the flavor. */
  any: Uint8Array
  /** Each cell's hosts by what binds there: [cell * B + binding]. */
  votes: Int32Array
  /** Each cell's free amount of each asked class: [cell * A + asked class]. */
  total: Float64Array
  B: number
}

export const newCellSums = (cells: number, B: number): CellSums => ({
  fit: new Float64Array(cells),
  disabledFit: new Float64Array(cells),
  any: new Uint8Array(cells),
  votes: new Int32Array(cells * B),
  total: new Float64Array(0),
  B,
})

/**
 * Each cell's sums of a flavor's hosts, and whether the flavor fits anywhere: some host could ever
 * hold it (`eligible`), an enabled one (`eligibleEnabled`). Marks the enabled hosts where it fits
 * now in `fitsSomewhere`.
 */
export function sumCells(
  forest: HostForest,
  cellOf: Int32Array,
  fits: HostFits,
  classFree: Float64Array,
  rows: FlavorRows,
  sums: CellSums,
  fitsSomewhere: Uint8Array,
): {eligible: boolean; eligibleEnabled: boolean} {
  const {disabled} = forest
  const C = forest.classes.length
  const {askClass} = rows
  const A = askClass.length
  const {B} = sums
  sums.fit.fill(0)
  sums.disabledFit.fill(0)
  sums.any.fill(0)
  sums.votes.fill(0)
  sums.total = new Float64Array(sums.fit.length * A)
  let eligible = false
  let eligibleEnabled = false
  for (let i = 0; i < forest.hosts.length; i++) {
    const c = cellOf[i]
    if (disabled[i]) {
      sums.disabledFit[c] += fits.fit[i]
      if (fits.eligible[i]) eligible = true
      continue
    }
    sums.fit[c] += fits.fit[i]
    if (!fits.eligible[i]) continue
    eligible = eligibleEnabled = true
    if (fits.fit[i] > 0) fitsSomewhere[i] = 1
    sums.any[c] = 1
    if (fits.binding[i] >= 0) sums.votes[c * B + fits.binding[i]]++
    for (let j = 0; j < A; j++) if (askClass[j] >= 0) sums.total[c * A + j] += classFree[i * C + askClass[j]]
  }
  return {eligible, eligibleEnabled}
}

/** Hosts' rows, from `base`: each host its own domain, in the order of the rows. */
export function writeHostRows(host: Int32Array, base: number, h: HostNumbers, rows: FlavorRows): void {
  const {fits, disabled, classFree, C} = h
  const {askClass} = rows
  const A = askClass.length
  const hostTotal = new Float64Array(A)
  host.forEach((i, d) => {
    if (disabled[i]) rows.set(base + d, 0, 0, fits.fit[i])
    else if (!fits.eligible[i] || !A) rows.set(base + d, fits.fit[i], 0, 0)
    else {
      for (let j = 0; j < A; j++) hostTotal[j] = askClass[j] < 0 ? 0 : classFree[i * C + askClass[j]]
      rows.set(base + d, fits.fit[i], rows.pooledOf(hostTotal, 0), 0)
      rows.bind(base + d, fits.binding[i])
    }
  })
}

/** The rows of a level's `count` racks, rows, rooms or the cloud, from `base`: the sums of their cells (`ofCell`). */
export function writeCellRows(ofCell: Int32Array, count: number, base: number, cells: CellSums, rows: FlavorRows): void {
  const A = rows.askClass.length
  const {B} = cells
  const fit = new Float64Array(count)
  const disabledFit = new Float64Array(count)
  const any = new Uint8Array(count)
  const total = new Float64Array(count * A)
  const votes = new Int32Array(count * B)
  for (let c = 0; c < ofCell.length; c++) {
    const d = ofCell[c]
    if (d < 0) continue
    fit[d] += cells.fit[c]
    disabledFit[d] += cells.disabledFit[c]
    any[d] |= cells.any[c]
    for (let j = 0; j < A; j++) total[d * A + j] += cells.total[c * A + j]
    for (let b = 0; b < B; b++) votes[d * B + b] += cells.votes[c * B + b]
  }
  for (let d = 0; d < count; d++) {
    rows.set(base + d, fit[d], any[d] && A ? rows.pooledOf(total, d * A) : 0, disabledFit[d])
    rows.bind(base + d, mostVoted(votes, d * B, B))
  }
}

/**
 * A level's rows again where its hosts' own sums do not tell: a domain that draws on a pool takes
 * it once (poolsDomain), and a group's rule bounds the fit. Both need the domain's hosts.
 */
export function writePoolAndGroupRows(
  s: State,
  part: DomainLayoutPart,
  base: number,
  h: HostNumbers,
  rows: FlavorRows,
  group: Group | undefined,
): void {
  const {drawing} = h.fits
  if (!drawing && !group) return
  const {count, of} = part
  const {disabled, fits} = h
  const {hosts} = h.forest
  const n = hosts.length
  const drawn = new Uint8Array(count)
  for (let i = 0; i < n; i++) if (drawing?.[i] !== undefined && (of ? of[i] : 0) >= 0) drawn[of ? of[i] : 0] = 1
  const members = domainMembers(part, n, (d) => group !== undefined || drawn[d] === 1)
  for (let d = 0; d < count; d++) {
    const k = base + d
    const at = members.get(d) ?? []
    if (drawn[d]) {
      const row = poolsDomain(h, at)
      rows.set(k, row.fit, row.pooled, row.disabledFit)
      if (part.level !== 'host') rows.bind(k, row.binding)
    }
    if (group) rows.bound(k, groupFit(s, group, new Map(at.filter((i) => !disabled[i]).map((i) => [hosts[i].uuid, fits.fit[i]]))))
  }
}
