/**
 * Spread: N consumers, each in a different rack/row/room, written in one transaction
 * (the backend's claims: placemat's POST /placemat/v1/claims, or one POST /allocations): all or nothing. The consumers
 * of a spread, and a consumer named the way `claim --count` names them.
 */
import type {ApiError} from '../../client/client.js'
import type {Ownership} from './allocations.js'
import {LEVELS, placementInLayout, type Level, type NodeSets} from '../candidates/anchors.js'
import type {CandidateFlagValues} from '../candidates/flags.js'
import {searchCandidates, type CandidateSearch} from '../candidates/search.js'
import {placementGroupOf} from '../candidates/query.js'
import type {AffinityRule} from '../../core/affinity.js'
import {NAMES_NAMESPACE, canonicalUuid as canonical, isUuidLike, uuid5} from '../../core/uuids.js'
import type {ClaimVia, ClaimWrite, Endpoint} from '../backend/backend.js'
import {conflictError as conflict, usageError as usage} from '../failure.js'
import {currentConsumer, is409, ownership, type Allocations} from './claim.js'

/**
 * The consumers of a spread: a comma list of uuids, one uuid prefix (8 hex digits, a dash
 * and more: the index, from 1, is zero-padded onto it to make a whole uuid), or a name
 * (uuid5 of "consumer:NAME-i").
 */
export function spreadConsumers(spec: string, count: number | undefined): Array<{uuid: string; label: string}> {
  const parts = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (parts.length > 1 || (parts.length === 1 && isUuidLike(parts[0]) && (count ?? 1) === 1)) {
    if (!parts.every(isUuidLike)) throw usage(`${spec}: a list of consumers must be uuids`)
    if (count !== undefined && count !== parts.length) throw usage(`--count ${count} but ${parts.length} consumers listed`)
    if (new Set(parts.map(canonical)).size !== parts.length) throw usage(`${spec}: a consumer is listed twice`)
    return parts.map((p) => ({uuid: canonical(p), label: p}))
  }
  if (!count || count < 1) throw usage('give --count N with a consumer prefix')
  const prefix = parts[0] ?? ''
  if (/^[0-9a-fA-F]{8}-[0-9a-fA-F-]*$/.test(prefix) && prefix.length < 36) {
    const width = 36 - prefix.length
    const out = Array.from({length: count}, (_, i) => `${prefix}${String(i + 1).padStart(width, '0')}`)
    if (String(count).length > width || !out.every(isUuidLike))
      throw usage(`${prefix}: not a uuid prefix that ${count} consumers fit after`)
    return out.map((u) => ({uuid: canonical(u), label: u}))
  }
  return Array.from({length: count}, (_, i) => ({uuid: namedConsumer(`${prefix}-${i + 1}`), label: `${prefix}-${i + 1}`}))
}

/** A consumer given by uuid, or by a name `claim --count` gave (NAME-i): uuid5 of "consumer:NAME". */
export function namedConsumer(ref: string): string {
  if (isUuidLike(ref)) return canonical(ref)
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(ref))
    throw usage(`'${ref}' is neither a consumer uuid nor a consumer name (letters, digits, . _ -)`)
  return uuid5(`consumer:${ref}`, NAMES_NAMESPACE)
}

export interface SpreadPick {
  consumer_uuid: string
  label: string
  candidate: number
  node: string
  allocations: Allocations
}

export interface SpreadOutcome {
  level: Level
  claims: SpreadPick[]
  attempts: number
  via: ClaimVia
  search: CandidateSearch
}

/** The first candidates (in order) in pairwise distinct nodes of `level`; null when there are not enough. */
export function pickDistinct(
  search: CandidateSearch,
  level: Level,
  n: number,
): Array<{index: number; node: string; allocations: Allocations}> | {found: number} {
  const used = new Set<string>()
  const out: Array<{index: number; node: string; allocations: Allocations}> = []
  const rootOf = new Map<string, string>()
  for (const [uuid, s] of Object.entries(search.body.provider_summaries ?? {}))
    if (s.root_provider_uuid) rootOf.set(uuid, s.root_provider_uuid)
  search.body.allocation_requests.forEach((ar, index) => {
    if (out.length >= n) return
    const where: NodeSets = placementInLayout(search.topology!, search.providers!, Object.keys(ar.allocations), rootOf)
    const nodes = [...where[level]]
    if (nodes.length === 0 || nodes.some((x) => used.has(x))) return
    for (const x of nodes) used.add(x)
    out.push({
      index: index + 1,
      node: nodes
        .map((x) => search.topology!.nodes.get(x)?.name ?? x)
        .sort()
        .join(','),
      allocations: ar.allocations,
    })
  })
  return out.length >= n ? out : {found: out.length}
}

/**
 * N consumers in N distinct racks/rows/rooms, in one write (the backend's: placemat checks
 * every rule between them, and the group they join, in it). Nothing is claimed when it cannot
 * be done (exit 4).
 */
export async function spread(
  endpoint: Endpoint,
  flags: CandidateFlagValues,
  consumers: Array<{uuid: string; label: string}>,
  level: Level,
  own: Ownership,
  replace: boolean | undefined,
): Promise<SpreadOutcome> {
  if (!LEVELS.includes(level)) throw usage(`--spread ${level}: rack, row or room`)
  const backend = await endpoint.backend()
  // All of them join the placement group, checked together in the one write.
  const group = placementGroupOf(flags.group)
  let attempts = 0
  let lastError = ''
  for (;;) {
    attempts++
    const [search, currents] = await Promise.all([
      searchCandidates(endpoint, flags, {names: true, topology: 'required', topologyWhy: `--spread ${level}`}),
      Promise.all(consumers.map((c) => currentConsumer(backend, c.uuid, replace))),
    ])
    const picked = pickDistinct(search, level, consumers.length)
    if (!Array.isArray(picked)) {
      throw conflict(
        `cannot spread ${consumers.length} consumers over distinct ${level}s: candidates are in ${picked.found} ${level}(s); nothing claimed`,
      )
    }
    const rules: AffinityRule[] = search.rules.map(({relation, level: l, consumer}) => ({relation, level: l, consumer}))
    const writes = consumers.map((c, i): ClaimWrite => {
      const o = ownership(c.uuid, currents[i], own)
      // Each in another place than the others: placemat checks that in the write too.
      const apart = consumers.filter((x) => x.uuid !== c.uuid).map((x) => ({relation: 'different' as const, level, consumer: x.uuid}))
      return {
        consumer: c.uuid,
        project: o.project,
        user: o.user,
        type: o.type,
        generation: currents[i].consumer_generation ?? null,
        allocations: picked[i].allocations,
        rules: [...rules, ...apart],
        group,
      }
    })
    try {
      const {via} = await backend.claims(writes)
      return {
        level,
        attempts,
        via,
        search,
        claims: consumers.map((c, i) => ({
          consumer_uuid: c.uuid,
          label: c.label,
          candidate: picked[i].index,
          node: picked[i].node,
          allocations: picked[i].allocations,
        })),
      }
    } catch (err) {
      if (!is409(err)) throw err
      lastError = (err as ApiError).detail
      if (attempts >= 5)
        throw conflict(`cannot spread ${consumers.length} consumers over distinct ${level}s: ${lastError}; nothing claimed`)
      // Someone took capacity or a place in between: read everything again and choose again.
    }
  }
}
