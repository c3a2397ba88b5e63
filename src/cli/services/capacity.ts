/**
 * `placemat capacity`: the core's headroom of a flavor catalog, on the cloud any backend holds
 * (a --db file's own State, or one read from a placemat daemon or a plain Placement), worked out
 * here in one place for all of them.
 */
import {flavorRequest, type Flavor, type FlavorRequest} from '../../core/flavors.js'
import {headroom, type Headroom, type HeadroomLevel} from '../../core/headroom.js'
import {loadState, type Backend} from '../backend/backend.js'
import {usageError} from '../failure.js'

export interface CapacityAnswer extends Headroom {
  /** Extra specs not modelled, per flavor. */
  warnings: Array<{flavor: string; warning: string}>
}

/** The flavors of `catalog` named by `names` (all when none), as Nova's requests; an unknown name is a usage error. */
export function chosenFlavors(catalog: Flavor[], names: readonly string[] = []): FlavorRequest[] {
  const byName = new Map(catalog.map((f) => [f.name, f]))
  const unknown = names.filter((n) => !byName.has(n))
  if (unknown.length) throw usageError(`no flavor named ${unknown.join(', ')} in the flavor file; it has ${catalog.map((f) => f.name).join(', ') || 'none'}`)
  return (names.length ? names.map((n) => byName.get(n)!) : catalog).map(flavorRequest)
}

export async function capacity(backend: Backend, flavors: FlavorRequest[], opts: {levels?: HeadroomLevel[]} = {}): Promise<CapacityAnswer> {
  const state = await loadState(backend)
  return {...headroom(state, flavors, opts), warnings: flavors.flatMap((f) => f.warnings.map((warning) => ({flavor: f.flavor, warning})))}
}
