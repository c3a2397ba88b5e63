/**
 * Headroom: how many more instances of each flavor fit, per host, rack, row, room and the cloud,
 * what is lost to host boundaries, what is stranded, and which flavors can never fit.
 *
 *   fit(host, X)    how many times X's request can be claimed one after another in the host's
 *                   tree, as a claim takes it: the first candidate each time (the
 *                   allocation-candidates engine, with capacity int((total - reserved) * ratio),
 *                   min/max_unit, step_size, group_policy, traits and every sharing provider the
 *                   host reaches).
 *                   While the first candidate still fits it stays first (usage only grows), so
 *                   it is taken as many times as it fits at once; the candidates are searched
 *                   once per shape of tree (tree-shapes.ts), not once per host.
 *                   A disabled host counts 0; what it would hold is its `disabledFit`.
 *   fit(domain, X)  claims one after another over its enabled hosts: candidates come host after
 *                   host, so the first host fills (its own inventory first where its candidates
 *                   put it first, then its pools) before the next; a pool is shared, each host
 *                   finding what those before it left (domains.ts poolsDomain). Without pools,
 *                   the sum of its hosts' fits.
 *   binding         what stops one more: on a host, the class (or CLASS@pool) the candidate
 *                   closest to fitting once more lacks most (fit-walk.ts); a domain's, most of
 *                   its hosts'.
 *   pooled          the fit if the domain were one host: for each class X asks, the free amount of
 *                   the hosts that could hold X at all (and the pools they reach) over what X asks.
 *   stranded        on an enabled host where no flavor fits, each class's free amount, with the
 *                   class that blocks (the bottleneck).
 *   lint            flavors that fit nowhere even on an empty cloud, and those that fit only on
 *                   disabled hosts.
 * Pure over a State; nothing is written to it.
 */
import {capacityOf} from '../inventory-capacity.js'
import {askedPerClass, type FlavorRequest} from './flavors.js'
import type {Group} from '../groups.js'
import {byName, domainLayout, type DomainLayout, type HostFits, type HostNumbers} from './domains.js'
import type {State, TopologyLevel} from '../state/state.js'
import {bindingName, bindingOf, fitOneAfterAnother, freeNow, poolFreeNow, type FitWalk} from './fit-walk.js'
import {candidatesByHost, hostForest, type HostForest} from './tree-shapes.js'
import {FlavorRows, newCellSums, sumCells, writeCellRows, writePoolAndGroupRows, writeHostRows} from './table-rows.js'

export type {HostFits} from './domains.js'
export type HeadroomLevel = 'host' | TopologyLevel | 'cloud'
export const HEADROOM_LEVELS: readonly HeadroomLevel[] = ['host', 'rack', 'row', 'room', 'cloud']

export interface DomainHeadroom {
  level: HeadroomLevel
  name: string
  flavor: string
  fit: number
  pooled: number
  fragmentation_loss: number
  /** What the domain's disabled hosts would hold, apart. */
  disabled_fit: number
  /**
   * What binds: the class (`CLASS@pool` for a sharing provider's) that stops one more, on most of
   * the domain's enabled hosts that could hold the flavor; null when none could.
   */
  binding: string | null
}

export interface Stranded {
  host: string
  class: string
  amount: number
  /** Of the flavors that could ever fit the host, the class that blocks the one closest to fitting. */
  bottleneck: string
}

export interface LintFinding {
  flavor: string
  problem: string
}

export interface Headroom {
  domains: DomainHeadroom[]
  stranded: Stranded[]
  lint: LintFinding[]
}

/**
 * The headroom as columns: row k = f * levels.length + d is flavor f in domain d (a cloud of
 * 100,000 hosts and 20 flavors has two million rows: numbers in arrays, not objects). Whole
 * numbers below 2^31 as they mostly are, in half the memory; else 64-bit floats.
 */
export interface HeadroomTable {
  flavors: string[]
  /** Each domain's level and name, in the order a table shows them. */
  levels: HeadroomLevel[]
  names: string[]
  fit: Column
  pooled: Column
  fragmentation_loss: Column
  disabled_fit: Column
  /** Each row's binding, by number in `bindings` (-1: none). */
  binding: Int32Array
  bindings: ReadonlyArray<string | null>
  stranded: Stranded[]
  lint: LintFinding[]
}

export type Column = Int32Array | Float64Array

export interface HeadroomOptions {
  /** Levels to report (all when absent). */
  levels?: readonly HeadroomLevel[]
  /** Count members of this placement group: `fit` is what its rule still allows (group-headroom.ts). */
  group?: Group
}

/**
 * fit(host, X) of every host, each counted alone (a pool's free amount is the same for each), and
 * whether it could ever hold X: its shape's candidates (tree-shapes.ts), searched once per shape,
 * walked with each host's free amounts (freeNow). Written into `out` when given (one per flavor
 * in turn: a cloud's worth of numbers made once).
 */
export function hostFits(s: State, forest: HostForest, free: Float64Array, flavor: FlavorRequest, out?: HostFits): HostFits {
  const n = forest.hosts.length
  if (out) {
    out.fit.fill(0)
    out.eligible.fill(0)
    out.binding.fill(-1)
    out.drawing = null
  } else out = {fit: new Float64Array(n), eligible: new Uint8Array(n), binding: new Int32Array(n).fill(-1), drawing: null}
  const candidatesOf = candidatesByHost(s, forest, flavor.request)
  for (let i = 0; i < n; i++) {
    const c = candidatesOf(i)
    if (c.start.length === 1) continue
    out.eligible[i] = 1
    out.fit[i] = fitOneAfterAnother(forest, i, c, free, null, walk)
    out.binding[i] = bindingOf(forest, i, walk.binding)
    if (walk.tookFromPool) (out.drawing ??= [])[i] = c
  }
  return out
}
const walk: FitWalk = {tookFromPool: false, binding: -1}

/** The headroom of `flavors` in `s`, per level (see the module's comment for what is counted). */
export function headroom(s: State, flavors: readonly FlavorRequest[], opts: HeadroomOptions = {}): Headroom {
  const t = headroomTable(s, flavors, opts)
  const D = t.levels.length
  const domains: DomainHeadroom[] = new Array(t.flavors.length * D)
  t.flavors.forEach((flavor, f) => {
    for (let d = 0, k = f * D; d < D; d++, k++)
      domains[k] = {
        level: t.levels[d],
        name: t.names[d],
        flavor,
        fit: t.fit[k],
        pooled: t.pooled[k],
        fragmentation_loss: t.fragmentation_loss[k],
        disabled_fit: t.disabled_fit[k],
        binding: t.binding[k] < 0 ? null : t.bindings[t.binding[k]],
      }
  })
  releaseTable(t)
  return {domains, stranded: t.stranded, lint: t.lint}
}

/** The headroom of `flavors` in `s`, as columns (headroom() makes them rows). */
export function headroomTable(s: State, flavors: readonly FlavorRequest[], opts: HeadroomOptions = {}): HeadroomTable {
  return countTable(s, flavors, opts, false) ?? countTable(s, flavors, opts, true)!
}

/** The table in 32-bit columns (none when a number does not fit them), or `wide`, in 64-bit ones. */
function countTable(s: State, flavors: readonly FlavorRequest[], opts: HeadroomOptions, wide: boolean): HeadroomTable | null {
  const forest = hostForest(s)
  const layout = domainLayout(s, forest, opts.levels ?? HEADROOM_LEVELS)
  const D = layout.levels.length
  const w = workspaceOf(forest)
  const t = newTable(forest, layout, flavors, w, wide)
  // What does not depend on the flavor, once: each pair's and each class's free amount by host.
  const free = freeNow(forest, w.free)
  const classFree = freeByClass(forest, free, w.classFree)
  const poolFree = poolFreeNow(forest)
  const {fits, fitsSomewhere} = w // some flavor fits there now
  fitsSomewhere.fill(0)
  const cells = newCellSums(layout.cells, t.bindings.length)
  for (let f = 0; f < flavors.length; f++) {
    const flavor = flavors[f]
    hostFits(s, forest, free, flavor, fits)
    const rows = new FlavorRows(t, forest, flavor, wide)
    const {eligible, eligibleEnabled} = sumCells(forest, layout.cellOf, fits, classFree, rows, cells, fitsSomewhere)
    if (!eligible) t.lint.push({flavor: flavor.flavor, problem: whyNowhere(s, flavor)})
    else if (!eligibleEnabled) t.lint.push({flavor: flavor.flavor, problem: 'fits only on disabled hosts'})
    const numbers: HostNumbers = {
      forest,
      free,
      poolFree,
      fits,
      disabled: forest.disabled,
      classFree,
      C: forest.classes.length,
      asked: rows.asked,
      askClass: rows.askClass,
    }
    for (const part of layout.parts) {
      const base = f * D + part.start
      if (part.host) writeHostRows(part.host, base, numbers, rows)
      else if (part.ofCell) writeCellRows(part.ofCell, part.count, base, cells, rows)
      writePoolAndGroupRows(s, part, base, numbers, rows, opts.group)
    }
    if (rows.overflow) {
      releaseTable(t)
      return null
    }
  }
  t.stranded = stranded(s, forest, classFree, poolFree, flavors, fitsSomewhere)
  return t
}

/** An empty table of `flavors` over the layout's domains: 32-bit columns (the workspace's, when large enough), or `wide`, 64-bit ones. */
function newTable(forest: HostForest, layout: DomainLayout, flavors: readonly FlavorRequest[], w: Workspace, wide: boolean): HeadroomTable {
  const rows = flavors.length * layout.levels.length
  let columns: Column
  if (wide) columns = new Float64Array(4 * rows)
  else if (w.columns && w.columns.length >= 4 * rows) {
    columns = w.columns
    w.columns = null
  } else columns = new Int32Array(4 * rows)
  const t: HeadroomTable = {
    flavors: flavors.map((f) => f.flavor),
    levels: layout.levels,
    names: layout.names,
    fit: columns.subarray(0, rows),
    pooled: columns.subarray(rows, 2 * rows),
    fragmentation_loss: columns.subarray(2 * rows, 3 * rows),
    disabled_fit: columns.subarray(3 * rows, 4 * rows),
    binding: new Int32Array(rows).fill(-1),
    bindings: Array.from({length: forest.classes.length + forest.poolPairs.length}, (_, b) => bindingName(forest, b)),
    stranded: [],
    lint: [],
  }
  owners.set(t, {forest, columns})
  return t
}

/**
 * What the tables of a cloud work in, made once with its host trees: a call writes over the last
 * one's numbers (pages new to the process cost more than the counting), and a table's columns
 * are taken again once released (releaseTable).
 */
interface Workspace {
  free: Float64Array
  classFree: Float64Array
  fits: HostFits
  fitsSomewhere: Uint8Array
  columns: Int32Array | null
}
const workspaces = new WeakMap<HostForest, Workspace>()
const owners = new WeakMap<HeadroomTable, {forest: HostForest; columns: Column}>()

function workspaceOf(forest: HostForest): Workspace {
  let w = workspaces.get(forest)
  const n = forest.hosts.length
  if (!w)
    workspaces.set(
      forest,
      (w = {
        free: new Float64Array(forest.pairAt[n]),
        classFree: new Float64Array(n * forest.classes.length),
        fits: {fit: new Float64Array(n), eligible: new Uint8Array(n), binding: new Int32Array(n).fill(-1), drawing: null},
        fitsSomewhere: new Uint8Array(n),
        columns: null,
      }),
    )
  return w
}

/**
 * Hands a table's columns back, to be written over by the next table of the same cloud: for a
 * reader that is done with them (a daemon's answer sent, the gauges set). Never needed.
 */
export function releaseTable(t: HeadroomTable): void {
  const owner = owners.get(t)
  if (!owner) return
  owners.delete(t)
  const w = workspaces.get(owner.forest)
  if (w && owner.columns instanceof Int32Array && (!w.columns || w.columns.length < owner.columns.length)) w.columns = owner.columns
}

/** Each host's free amount of each class (HostForest.classes) in its tree, sharing providers aside: [host * classes + class]. */
function freeByClass(forest: HostForest, free: Float64Array, out: Float64Array): Float64Array {
  const C = forest.classes.length
  out.fill(0)
  for (let i = 0; i < forest.hosts.length; i++) {
    const {pairClass} = forest.shapes[forest.shapeOf[i]]
    const at = forest.pairAt[i]
    for (let k = 0; k < pairClass.length; k++) if (pairClass[k] >= 0) out[i * C + pairClass[k]] += Math.max(0, free[at + k])
  }
  return out
}

/** Why a flavor fits on no host even with nothing used. */
function whyNowhere(s: State, flavor: FlavorRequest): string {
  const providers = [...s.providers.values()]
  for (const g of flavor.request.groups) {
    for (const [rc, n] of g.resources) {
      const having = providers.filter((p) => p.inventories.has(rc))
      if (having.length === 0) return `no provider has ${rc}`
      if (having.every((p) => n > p.inventories.get(rc)!.max_unit || n > capacityOf(p.inventories.get(rc)!)))
        return `${rc}:${n} is above every provider's max_unit or capacity`
      if (having.every((p) => n < p.inventories.get(rc)!.min_unit)) return `${rc}:${n} is below every provider's min_unit`
      if (having.every((p) => n % p.inventories.get(rc)!.step_size !== 0)) return `${rc}:${n} is off every provider's step_size`
    }
    for (const any of g.requiredTraits)
      if (!providers.some((p) => any.some((t) => p.traits.has(t)))) return `no provider has trait ${any.join(' or ')}`
  }
  return 'no host holds all it asks at once'
}

/**
 * On each enabled host where no flavor fits now, each class's free amount (in the order its tree
 * first has them), with the class that blocks. Only the flavors that could ever fit the host are
 * asked (a flavor of PCPU never blocks a host without PCPU; one lint says fits nowhere blocks
 * none): of those, the one that comes closest, and its class with the least free (pools the host
 * reaches included) against what it asks. A host no flavor of the catalog could ever fit is not
 * stranded by what is used, and is left out (as is every host when lint says no flavor fits).
 */
function stranded(
  s: State,
  forest: HostForest,
  classFree: Float64Array,
  poolFree: Float64Array,
  flavors: readonly FlavorRequest[],
  fitsSomewhere: Uint8Array,
): Stranded[] {
  const {disabled} = forest
  const out: Stranded[] = []
  const C = forest.classes.length
  const asks = flavors.map((f) => [...askedPerClass(f.request)])
  // Whether a host could ever hold each flavor: its shape's candidates are some.
  const candidatesOf = flavors.map((f) => candidatesByHost(s, forest, f.request))
  // In the host rows' order (by name, then uuid).
  for (const i of byName(forest).order) {
    if (disabled[i] || fitsSomewhere[i]) continue
    const shape = forest.shapes[forest.shapeOf[i]]
    const reach = (rc: string): number => {
      const c = forest.classes.indexOf(rc)
      let n = c < 0 ? 0 : classFree[i * C + c]
      for (let k = 0; k < shape.pairs.length; k++)
        if (shape.pairSharing[k] && shape.pairs[k].rc === rc) n += Math.max(0, poolFree[shape.poolPair[k]])
      return n
    }
    let bottleneck = ''
    let closest = -Infinity
    flavors.forEach((_, k) => {
      if (!asks[k].length || candidatesOf[k](i).start.length === 1) return
      let worst = Infinity
      let blocking = ''
      for (const [rc, n] of asks[k]) {
        const r = reach(rc) / n
        if (r < worst) [worst, blocking] = [r, rc]
      }
      if (worst > closest) [closest, bottleneck] = [worst, blocking]
    })
    if (!bottleneck) continue
    for (const c of shape.classes) {
      const amount = classFree[i * C + c]
      if (amount > 0 && forest.classes[c] !== bottleneck)
        out.push({host: forest.hosts[i].name, class: forest.classes[c], amount, bottleneck})
    }
  }
  return out
}
