/**
 * Provider aggregates (handlers/aggregate.py, objects/resource_provider.py _set_aggregates).
 */
import {ErrorCode, PlacementError} from '../errors.js'
import {getProvider} from './providers.js'
import type {Provider, State} from '../state/state.js'
import {canonicalUuid} from '../uuids.js'

export function getAggregates(s: State, uuid: string): {provider: Provider; aggregates: string[]} {
  const p = getProvider(s, uuid)
  return {provider: p, aggregates: [...p.aggregates]}
}

/**
 * Replaces a provider's aggregates. With a generation (1.19+) it must match and the
 * provider's generation is bumped; before 1.19 Placement changes the associations only.
 */
export function setAggregates(s: State, now: number, uuid: string, aggregates: string[], generation?: number): Provider {
  const p = getProvider(s, uuid)
  if (generation !== undefined && p.generation !== generation) {
    throw new PlacementError(
      409,
      "Resource provider's generation already changed. Please update the generation and try again.",
      ErrorCode.CONCURRENT_UPDATE,
    )
  }
  // Every accepted uuid form is stored as one (a urn:uuid: or {braced} id would not fit the column).
  const wanted = new Set(aggregates.map(canonicalUuid))
  const same = wanted.size === p.aggregates.size && [...wanted].every((a) => p.aggregates.has(a))
  if (!same) {
    // Kept associations stay first, as the rows Placement keeps come before the ones it adds.
    s.setAggregates(p, [...[...p.aggregates].filter((a) => wanted.has(a)), ...[...wanted].filter((a) => !p.aggregates.has(a))])
  }
  if (generation !== undefined) s.bumpProvider(p, now)
  return p
}
