/**
 * `placemat capacity`: the core's headroom of a flavor catalog, on the cloud any backend holds
 * (a --db file's own State, or one read from a placemat daemon or a plain Placement), worked out
 * here in one place for all of them.
 */
import {flavorRequest, flavorWarnings, type Flavor, type FlavorRequest} from '../../core/headroom/flavors.js'
import {racksOf} from '../../core/layout-edits.js'
import {PlacementError} from '../../core/errors.js'
import {ApplyRefused} from '../../core/apply-plan/types.js'
import type {DatacenterFile} from '../apply/apply-file.js'
import type {GroupRecord} from '../../core/groups.js'
import {headroom, type Headroom, type HeadroomLevel} from '../../core/headroom/headroom.js'
import {changesNothing, whatIf, type LostDomain, type WhatIfChange} from '../../core/headroom/what-if.js'
import {lostDomainOf, ratioOf, whatIfHeadroom, type WhatIfAnswer} from '../../core/headroom/what-if-headroom.js'
import {ApiError} from '../../client/client.js'
import {loadState, type Backend, type CatalogLosses, type CatalogMix} from '../backend/backend.js'
import {mixAnswer, parseMix} from '../../core/headroom/flavor-mix.js'
import {lossesAnswer, lossesOneByOne} from '../../core/headroom/losses.js'
import type {State} from '../../core/state/state.js'
import {usageError} from '../failure.js'
import {groupOfRecord} from '../groups/groups.js'

export interface CapacityAnswer extends Headroom {
  /** Extra specs not modelled, per flavor. */
  warnings: Array<{flavor: string; warning: string}>
  /** With a change asked: what it was, who it displaced, whether all found a place, each domain's fit before and after. */
  what_if?: WhatIfAnswer
}

/** `--add FILE`: an apply file's providers, and the racks its layout puts hosts in; a file with none is a usage error. */
export function addedHosts(file: DatacenterFile, name = 'FILE'): NonNullable<WhatIfChange['add']> {
  if (!file.providers?.length) throw usageError(`--add ${name}: no hosts to add (an apply file's providers: list, and its racks:)`)
  const racks = file.layout
    ? [...racksOf(file.layout)].flatMap(({rack}) => (rack.hosts?.length ? [{rack: rack.name, hosts: rack.hosts}] : []))
    : []
  return {file, racks}
}

/** `--without LEVEL:NAME` values; a level not among host, rack, row and room is a usage error. */
export function parseWithout(values: readonly string[] = []): LostDomain[] {
  return values.map((v) => lostDomainOf(v) ?? failUsage(`--without ${v}: host:NAME, rack:NAME, row:NAME or room:NAME expected`))
}

/** `--ratio CLASS=R` values; a ratio that is not a number above 0 is a usage error. */
export function parseRatios(values: readonly string[] = []): Map<string, number> {
  return new Map(values.map((v) => ratioOf(v) ?? failUsage(`--ratio ${v}: CLASS=R expected, with R a number above 0`)))
}

const failUsage = (message: string): never => {
  throw usageError(message)
}

/** The flavors of `catalog` named by `names` (all when none), as Nova's requests; an unknown name is a usage error. */
export function chosenFlavors(catalog: Flavor[], names: readonly string[] = []): FlavorRequest[] {
  const byName = new Map(catalog.map((f) => [f.name, f]))
  const unknown = names.filter((n) => !byName.has(n))
  if (unknown.length)
    throw usageError(`no flavor named ${unknown.join(', ')} in the flavor file; it has ${catalog.map((f) => f.name).join(', ') || 'none'}`)
  return (names.length ? names.map((n) => byName.get(n)!) : catalog).map(flavorRequest)
}

export async function capacity(
  backend: Backend,
  flavors: FlavorRequest[],
  opts: {levels?: HeadroomLevel[]; change?: WhatIfChange; group?: GroupRecord; layout?: string} = {},
): Promise<CapacityAnswer> {
  const state = await cloudOf(backend, opts.layout)
  const warnings = flavorWarnings(flavors)
  const change = opts.change
  const group = opts.group ? groupOfRecord(opts.group) : undefined
  if (!change || changesNothing(change)) return {...headroom(state, flavors, {levels: opts.levels, group}), warnings}
  try {
    return {...whatIfHeadroom(state, flavors, change, {levels: opts.levels, group}), warnings}
  } catch (err) {
    throw changeRefused(err)
  }
}

/** `change` made on a copy of `state`; what the operator asked that cannot be is a usage error. */
function changed(state: State, change: WhatIfChange) {
  try {
    return whatIf(state, change)
  } catch (err) {
    throw changeRefused(err)
  }
}

/**
 * The cloud the backend holds; on plain Placement, with the racks, rows and rooms the --layout
 * file names (its aggregates carry no names there).
 */
const cloudOf = (backend: Backend, layout: string | undefined): Promise<State> =>
  layout ? backend.stateWithGroups({layout}) : loadState(backend)

/** The cloud the backend holds, after `change` when one is asked (made on a copy). */
async function stateAfter(backend: Backend, change: WhatIfChange | undefined, layout?: string): Promise<State> {
  const state = await cloudOf(backend, layout)
  return change && !changesNothing(change) ? changed(state, change).after : state
}

/**
 * What the daemon works out from its own catalog: its refusals the operator's to correct (`prefix`
 * names the flag), its lack of a catalog said with what to do instead.
 */
async function askCatalog<T>(ask: () => Promise<T>, prefix = ''): Promise<T> {
  try {
    return await ask()
  } catch (err) {
    if (err instanceof ApiError && err.status === 404 && err.detail.includes('no flavor catalog'))
      throw usageError('the daemon has no flavor catalog: give --flavors FILE, or start the daemon with --flavors FILE')
    if (err instanceof ApiError && (err.status === 400 || err.status === 404)) throw usageError(prefix + err.detail)
    throw err
  }
}

/** A change is made on a copy of the cloud here, with the flavors of a file: the daemon's catalog cannot be asked for it. */
function refuseChange(change: WhatIfChange | undefined): void {
  if (!changesNothing(change)) throw usageError('--without, --ratio and --add are tried on a copy of the cloud here: give --flavors FILE')
}

/** A domain nobody has, a ratio out of range, hosts the apply would refuse: the operator's to correct. */
function changeRefused(err: unknown): unknown {
  if (err instanceof PlacementError) return usageError(err.message)
  if (err instanceof ApplyRefused) return usageError(`--add: ${err.message}`)
  return err
}

/**
 * N+1: every domain of `level` lost in turn (core/headroom/losses.ts), after `change` when one is asked
 * (it is made first, on a copy), on the cloud any backend holds.
 */
export async function losses(
  backend: Backend,
  flavors: FlavorRequest[],
  level: LostDomain['level'],
  change?: WhatIfChange,
  layout?: string,
): Promise<CatalogLosses> {
  const state = await stateAfter(backend, change, layout)
  return {...lossesAnswer(level, flavors, lossesOneByOne(state, level, flavors)), warnings: flavorWarnings(flavors)}
}

/** How many instances of a flavor mix (`spec`: NAME=WEIGHT,...) fit per domain, after `change` when one is asked. */
export async function mix(
  backend: Backend,
  catalog: FlavorRequest[],
  spec: string,
  opts: {levels?: HeadroomLevel[]; change?: WhatIfChange; layout?: string} = {},
): Promise<CatalogMix> {
  const parts = mixParts(spec, catalog)
  const state = await stateAfter(backend, opts.change, opts.layout)
  return {...mixAnswer(state, parts, {levels: opts.levels}), warnings: flavorWarnings(parts.map((p) => p.flavor))}
}

/** A flavor mix's fit on the daemon's own catalog, worked out there. */
export async function catalogMix(
  backend: Backend,
  opts: {spec: string; levels?: HeadroomLevel[]; change?: WhatIfChange},
): Promise<CatalogMix> {
  refuseChange(opts.change)
  return askCatalog(() => backend.catalogMix({mix: opts.spec, level: opts.levels?.length ? opts.levels : undefined}), '--mix: ')
}

/** `--mix` against the flavor file's catalog: what the core refuses is the operator's to correct. */
function mixParts(spec: string, catalog: FlavorRequest[]) {
  try {
    return parseMix(spec, catalog)
  } catch (err) {
    if (err instanceof PlacementError) throw usageError(`--mix: ${err.message}`)
    throw err
  }
}

/** N+1 on the daemon's own catalog, worked out there. */
export async function catalogLosses(
  backend: Backend,
  opts: {names?: string[]; level: LostDomain['level']; change?: WhatIfChange},
): Promise<CatalogLosses> {
  refuseChange(opts.change)
  return askCatalog(() => backend.catalogLosses({flavor: opts.names?.length ? opts.names : undefined, without_each: opts.level}))
}

/**
 * The headroom of the flavor catalog the daemon holds (`daemon start --flavors`), worked out there.
 * Plain Placement keeps none, and a change is tried on a copy here: both need a flavor file.
 */
export async function catalogCapacity(
  backend: Backend,
  opts: {names?: string[]; levels?: HeadroomLevel[]; change?: WhatIfChange; group?: GroupRecord} = {},
): Promise<CapacityAnswer> {
  if (opts.change?.add) throw usageError('--add is tried on a copy of the cloud here: give --flavors FILE')
  if (opts.group) throw usageError('--group is counted here on a copy of the cloud: give --flavors FILE')
  const without = opts.change?.without?.map((d) => `${d.level}:${d.name}`)
  const ratio = [...(opts.change?.ratios ?? [])].map(([rc, r]) => `${rc}=${r}`)
  return askCatalog(() =>
    backend.catalogHeadroom({
      flavor: opts.names?.length ? opts.names : undefined,
      level: opts.levels?.length ? opts.levels : undefined,
      without: without?.length ? without : undefined,
      ratio: ratio.length ? ratio : undefined,
    }),
  )
}
