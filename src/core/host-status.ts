/**
 * Hosts taken out of service and brought back. A host is out of service when its root
 * provider carries COMPUTE_STATUS_DISABLED, the trait nova's compute service sets when an
 * operator disables it: nova's scheduler, and placemat's candidates and claims, leave it out.
 * Placement has nowhere to say why; placemat keeps the reason with the host (its provider
 * row), shows it while the trait is there, and forgets it when the trait goes, whoever
 * removes it (State.setTraits).
 */
import {ErrorCode, badRequest, conflict, notFound} from './errors.js'
import {DISABLED_TRAIT, SHARES_VIA_AGGREGATE, everyHost, isDisabled, isSharing} from './host.js'
import {ensureTrait} from './placement/traits.js'
import {hostRollup} from './topology-view.js'
import {hostDomains} from './topology.js'
import type {Provider, State} from './state/state.js'

/** The longest reason kept (a column of the provider row). */
export const MAX_REASON = 255

/** The host (a root provider that does not share: host.ts) named by uuid; 404 when there is none, 400 for another provider. */
export function requireHost(s: State, uuid: string): Provider {
  const p = s.providers.get(uuid)
  if (!p) throw notFound(`No resource provider with uuid ${uuid} found.`)
  if (p.parent !== null)
    throw badRequest(`Provider ${p.name} is not a host: it is in the tree of ${s.providers.get(p.root)?.name ?? p.root}.`)
  if (isSharing(p))
    throw badRequest(`Provider ${p.name} is not a host: it shares its inventory with its aggregates (${SHARES_VIA_AGGREGATE}).`)
  return p
}

export interface HostStatusChange {
  disabled: boolean
  /** The reason to keep (disabling only): undefined keeps the one there is, null or '' forgets it. */
  reason?: string | null
  /** When given, the host's generation must be this (409 placement.concurrent_update otherwise). */
  generation?: number
}

/**
 * Takes a host out of service (the trait, and the reason) or brings it back (neither). One
 * provider write: its generation bumped once, and only when something changes.
 */
export function setHostStatus(s: State, now: number, uuid: string, change: HostStatusChange): Provider {
  const p = requireHost(s, uuid)
  if (change.generation !== undefined && change.generation !== p.generation) {
    throw conflict(
      "Resource provider's generation already changed. Please update the generation and try again.",
      ErrorCode.CONCURRENT_UPDATE,
    )
  }
  if (change.reason && change.reason.length > MAX_REASON) throw badRequest(`A reason is at most ${MAX_REASON} characters.`)
  const reason = change.disabled ? (change.reason === undefined ? p.disabledReason : change.reason || undefined) : undefined
  const traitChanges = isDisabled(p) !== change.disabled
  if (!traitChanges && reason === p.disabledReason) return p
  if (traitChanges) {
    if (change.disabled) ensureTrait(s, now, DISABLED_TRAIT)
    const traits = new Set(p.traits)
    if (change.disabled) traits.add(DISABLED_TRAIT)
    else traits.delete(DISABLED_TRAIT)
    s.setTraits(p, traits)
  }
  if (reason !== p.disabledReason) {
    p.disabledReason = reason
    s.markProvider(p, 'row')
  }
  s.bumpProvider(p, now)
  return p
}

/** A host as GET /placemat/v1/hosts/{uuid} answers it. */
export interface HostRecord {
  uuid: string
  name: string
  generation: number
  disabled: boolean
  /** Why it is out of service (placemat's; null when none was given, or it is in service). */
  disabled_reason: string | null
  rack: string | null
  row: string | null
  room: string | null
  /** The consumers holding allocations in its tree. */
  consumers: string[]
  /** Capacity and usage of its whole tree, per resource class (used: every class of capacity, 0 when unused). */
  capacity: Record<string, number>
  used: Record<string, number>
}

export function hostRecord(s: State, uuid: string): HostRecord {
  const p = requireHost(s, uuid)
  const at = hostDomains(s, p)
  const consumers = new Set<string>()
  for (const q of s.subtree(p.uuid)) for (const c of q.allocations.keys()) consumers.add(c)
  const {capacity, used} = hostRollup(s, p)
  return {
    uuid: p.uuid,
    name: p.name,
    generation: p.generation,
    disabled: isDisabled(p),
    disabled_reason: isDisabled(p) ? (p.disabledReason ?? null) : null,
    ...at,
    consumers: [...consumers].sort(),
    capacity,
    // Every class it has, 0 when none of it is used: free room is capacity - used, with no default.
    used: {...Object.fromEntries(Object.keys(capacity).map((rc) => [rc, 0])), ...used},
  }
}

/** A host as GET /placemat/v1/hosts lists it: its record with the number of its consumers. */
export type HostListing = Omit<HostRecord, 'consumers'> & {consumers: number}

/** Every host (host.ts: never a sharing provider, nor a root holding nothing), by name. */
export function hostListing(s: State): HostListing[] {
  return everyHost(s)
    .sort((a, b) => a.name.localeCompare(b.name) || a.uuid.localeCompare(b.uuid))
    .map((h) => {
      const r = hostRecord(s, h.uuid)
      return {...r, consumers: r.consumers.length}
    })
}
