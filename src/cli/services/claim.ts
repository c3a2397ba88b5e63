/**
 * Claiming resources for consumers as Nova's scheduler does: read the candidates, write the
 * first one with the consumer's generation, and on a 409 (someone else took the capacity,
 * or a concurrent update) go down the list (alternates) in a tight loop. A consumer
 * generation conflict re-reads the generation and tries the same candidate again.
 *
 * On a placemat endpoint (daemon or --db) the write goes through POST /placemat/v1/claims,
 * which checks in the write transaction the topology rules (--same / --different), the group
 * the consumer joins (--group) and every group it is already a member of; the candidates are
 * those these rules allow (GET /placemat/v1/allocation_candidates with consumer=). When another
 * claimer got there first the answer is 409 placemat.affinity_violation and the candidates are
 * read again (the filters then see the new allocations). Against plain Placement the rules are
 * member_of filters only, and groups those of a --groups file, judged when the candidates are
 * read. When there is no candidate, the message says which part of the request emptied them.
 *
 * Spread (many consumers over distinct racks, rows or rooms) is in spread.ts.
 */
import {ApiError, type PlacementClient} from '../../client/client.js'
import {consumerUuid, getConsumer, hasAllocations, knownConsumer, typeOf, type ConsumerAllocations, type Ownership} from './allocations.js'
import {receiverType} from '../../core/moves.js'
import type {CandidateFlagValues} from '../candidates/flags.js'
import {searchCandidates, type CandidateSearch, type Resources} from '../candidates/search.js'
import {isPlacementGroupName, placementGroupOf} from '../candidates/query.js'
import {whyEmpty} from '../candidates/why.js'
import {groupsOf} from '../groups/groups.js'
import type {AffinityRule} from '../../core/affinity.js'
import {AFFINITY_VIOLATION, ErrorCode} from '../../core/errors.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import type {Backend, Endpoint} from '../backend/backend.js'
import {retryOnConcurrentUpdate} from './retry.js'
import {conflictError as conflict, notFoundError, usageError as usage} from '../failure.js'

export {AFFINITY_VIOLATION}

const isConsumerGenerationConflict = (err: unknown) =>
  err instanceof ApiError &&
  err.status === 409 &&
  err.code === ErrorCode.CONCURRENT_UPDATE &&
  /consumer generation conflict/i.test(err.detail)
const isAffinityViolation = (err: unknown) => err instanceof ApiError && err.status === 409 && err.code === AFFINITY_VIOLATION
export const is409 = (err: unknown) => err instanceof ApiError && err.status === 409

export type Allocations = Record<string, {resources: Resources}>

export interface ClaimOptions {
  consumer: string
  own: Ownership
  /** Replace the consumer's current allocations (else a consumer that has some is a conflict). */
  replace?: boolean
  /** Read provider names (for tables). */
  names?: boolean
  /** Write even if it breaks a placement group's rule. */
  allowViolations?: boolean
  /**
   * Called once, after the candidates are read and before the first write, with the first
   * candidate's allocations (tests use it to race a concurrent claimer).
   */
  beforeFirstWrite?: (first: Allocations | undefined) => Promise<void> | void
}

export interface ClaimOutcome {
  consumer_uuid: string
  /** 1-based position of the winner in the candidate list it was taken from. */
  candidate: number
  /** Candidates in that list after the winner: the alternates left. */
  alternates: number
  /** Writes tried, including the winner. */
  attempts: number
  /** Times the candidates were read again (rule violations at write time). */
  refreshes: number
  consumer_generation: number
  allocations: Allocations
  /** Which endpoint wrote it. */
  via: 'PUT /allocations' | 'POST /placemat/v1/claims'
  search: CandidateSearch
}

const stripGenerations = (a: ConsumerAllocations['allocations']): Allocations =>
  Object.fromEntries(Object.entries(a ?? {}).map(([rp, x]) => [rp, {resources: {...x.resources}}]))

/**
 * The consumer as it is now; refuses one that already holds something unless `replace`. One that
 * holds nothing may still be known to placemat (a record without allocations, or what it was
 * when it gave its allocations away with claim move): that is asked for when the flags leave
 * its project, user or type open, or (`always`) after a consumer generation conflict, which a
 * record GET /allocations does not show makes.
 */
export async function currentConsumer(
  client: PlacementClient,
  consumer: string,
  replace: boolean | undefined,
  own: Ownership,
  always = false,
): Promise<ConsumerAllocations> {
  const current = await getConsumer(client, consumer)
  if (hasAllocations(current)) {
    if (!replace) throw conflict(`consumer ${consumer} already has allocations (release it first, or --replace)`)
    return current
  }
  if (!always && own.project && own.user && own.consumerType) return current
  const known = await knownConsumer(client, consumer)
  if (!known) return current
  const type = typeOf(known)
  return {
    ...current,
    project_id: known.project_id,
    user_id: known.user_id,
    consumer_generation: known.consumer_generation,
    ...(type ? {consumer_type: type} : {}),
  }
}

export function ownership(consumer: string, current: ConsumerAllocations, own: Ownership) {
  const project = own.project ?? current.project_id
  const user = own.user ?? current.user_id
  if (!project || !user) throw usage(`consumer ${consumer} is new: give --project and --user`)
  const type = own.consumerType ?? typeOf(current) ?? undefined
  return {project, user, type}
}

/**
 * One consumer: candidates, then the writes down the list. Exit 4 when no candidate could
 * be written (or there is none).
 */
export async function claim(endpoint: Endpoint, flags: CandidateFlagValues, opts: ClaimOptions): Promise<ClaimOutcome> {
  const {client} = endpoint
  const consumer = canonical(opts.consumer)
  if (!isUuidLike(opts.consumer)) throw usage(`${opts.consumer} is not a consumer uuid`)
  const group = placementGroupOf(flags.group)
  // Allowed to break its group, the claim looks at every candidate, not only those the rule keeps.
  if (opts.allowViolations && group !== undefined) flags = {...flags, group: flags.group!.filter((g) => !isPlacementGroupName(g))}
  // The consumer's own groups keep the candidates too, unless it may break them.
  const searchOpts = {names: opts.names, consumer: opts.allowViolations ? undefined : consumer}
  const [firstSearch, firstCurrent] = await Promise.all([
    searchCandidates(endpoint, flags, searchOpts),
    currentConsumer(client, consumer, opts.replace, opts.own),
  ])
  let search = firstSearch
  let current = firstCurrent
  const {project, user, type} = ownership(consumer, current, opts.own)
  const rules: AffinityRule[] = search.rules.map(({relation, level, consumer: c}) => ({relation, level, consumer: c}))
  // placemat checks the consumer's groups (and the rules) in the write, whether or not --group
  // names one; on plain Placement (a --groups file) only when the candidates were chosen, and
  // the member is written to the file after the claim.
  const api = (await endpoint.backend()).placemat
  const viaClaims = api !== undefined
  const placematGroup = group !== undefined && viaClaims
  const fileGroup = group !== undefined && !viaClaims

  let attempts = 0
  let refreshes = 0
  let hookRun = false
  let lastError = ''
  const MAX_REFRESHES = 25
  const MAX_GENERATION_REREADS = 10
  for (;;) {
    const list = search.body.allocation_requests
    if (!list.length) {
      if (attempts)
        throw conflict(
          `no candidate could be claimed for ${consumer}: ${attempts} tried, none left${lastError ? ` (last: ${lastError})` : ''}`,
        )
      const why = await whyEmpty(endpoint, search)
      throw conflict(
        why
          ? `no allocation candidates for this request: ${why}`
          : group !== undefined && !opts.allowViolations
            ? `no allocation candidates for this request that keep the rule of group ${group}`
            : `no allocation candidates for this request`,
      )
    }
    if (!hookRun) {
      hookRun = true
      await opts.beforeFirstWrite?.(list[0]?.allocations)
    }
    let refresh = false
    for (let i = 0; i < list.length && !refresh; i++) {
      const allocations = list[i].allocations
      let rereads = 0
      for (;;) {
        attempts++
        try {
          let generation: number
          if (api) {
            const body: Record<string, unknown> = {
              consumer_uuid: consumer,
              project_id: project,
              user_id: user,
              consumer_generation: current.consumer_generation ?? null,
              allocations,
              affinity: rules,
            }
            if (type) body.consumer_type = type
            if (placematGroup) body.group = group
            const res = await api.claim(body, {allowViolations: opts.allowViolations})
            generation = res.consumer_generation
          } else {
            const body: Record<string, unknown> = {
              allocations,
              project_id: project,
              user_id: user,
              consumer_generation: current.consumer_generation ?? null,
            }
            if (type) body.consumer_type = type
            await client.put(`/allocations/${consumer}`, body, {version: type ? undefined : '1.37'})
            generation = (current.consumer_generation ?? 0) + 1
          }
          if (fileGroup) {
            const groups = await groupsOf(await endpoint.backend(), {groups: flags.groups, layout: flags.layout})
            await groups.members(group!, {add: [consumer]}, {allowViolations: true})
          }
          return {
            consumer_uuid: consumer,
            candidate: i + 1,
            alternates: list.length - i - 1,
            attempts,
            refreshes,
            consumer_generation: generation,
            allocations,
            via: viaClaims ? 'POST /placemat/v1/claims' : 'PUT /allocations',
            search,
          }
        } catch (err) {
          if (!is409(err)) throw err
          lastError = (err as ApiError).detail
          if (isConsumerGenerationConflict(err) && rereads++ < MAX_GENERATION_REREADS) {
            current = await currentConsumer(client, consumer, opts.replace, opts.own, true)
            continue // the same candidate, with the consumer's generation as it is now
          }
          if (isAffinityViolation(err)) refresh = true
          break // capacity gone, or the rules no longer hold there: the next candidate
        }
      }
    }
    if (!refresh || refreshes >= MAX_REFRESHES) {
      throw conflict(`no candidate could be claimed for ${consumer}: ${attempts} tried${lastError ? ` (last: ${lastError})` : ''}`)
    }
    // Another claimer moved an anchor consumer: read its place and the candidates again.
    refreshes++
    ;[search, current] = await Promise.all([
      searchCandidates(endpoint, flags, searchOpts),
      currentConsumer(client, consumer, opts.replace, opts.own),
    ])
  }
}

// ---- release, move, show -------------------------------------------------------------------------

/** DELETE /allocations/{consumer}; 404 when it holds nothing. */
export async function release(client: PlacementClient, consumer: string): Promise<void> {
  await client.delete(`/allocations/${consumerUuid(consumer)}`)
}

export interface MoveOutcome {
  consumer_uuid: string
  migration_uuid: string
  allocations: Allocations
  /** The migration consumer held something before (it was overwritten, as Nova does). */
  overwrote: boolean
  /** The type the migration consumer was written with; null: none. */
  consumer_type: string | null
}

/**
 * Nova's move_allocations: the migration consumer gets the instance's allocations and the
 * instance's are emptied, in one write. On placemat, POST /placemat/v1/moves: decided in the
 * write (core/moves.ts), with the consumers' placement groups checked, and what the instance was
 * kept while it holds nothing. On plain Placement, one POST /allocations decided the same way on
 * what can be read: both consumer generations are sent, and a concurrent update re-reads both
 * and tries again (a few times).
 */
export async function move(
  backend: Backend,
  consumer: string,
  migration: string,
  migrationType?: string,
  opts: {allowViolations?: boolean} = {},
): Promise<MoveOutcome> {
  const {client} = backend
  consumerUuid(consumer)
  consumerUuid(migration, 'migration consumer (--to)')
  if (canonical(consumer) === canonical(migration)) throw usage('--to must be another consumer')
  if (backend.placemat) {
    const body: {consumer_uuid: string; to: string; consumer_type?: string} = {consumer_uuid: canonical(consumer), to: canonical(migration)}
    if (migrationType) body.consumer_type = migrationType
    try {
      const r = await backend.placemat.move(body, opts)
      return {
        consumer_uuid: r.consumer_uuid,
        migration_uuid: r.migration_uuid,
        allocations: r.allocations,
        overwrote: r.overwrote,
        consumer_type: r.consumer_type,
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw notFoundError(`consumer ${consumer} has no allocations to move`)
      throw err
    }
  }
  // Both consumers' generations are read again when another writer got in between.
  return retryOnConcurrentUpdate(async () => {
    const [source, target] = await Promise.all([getConsumer(client, consumer), getConsumer(client, migration)])
    if (!hasAllocations(source)) {
      throw notFoundError(`consumer ${consumer} has no allocations to move`)
    }
    const allocations = stripGenerations(source.allocations)
    // What can be known of the receiver here is its record while it holds something.
    const type = receiverType(migrationType, hasAllocations(target) ? {type: typeOf(target)} : undefined, typeOf(source))
    const entry = (allocs: Allocations, generation: number | null | undefined, consumerType: string) => ({
      allocations: allocs,
      project_id: source.project_id,
      user_id: source.user_id,
      consumer_generation: generation ?? null,
      ...(type === null ? {} : {consumer_type: consumerType}),
    })
    const body = {
      // At 1.38 each consumer needs a type: one without gets the receiver's, never kept, as
      // Placement deletes the record of a consumer left with nothing.
      [canonical(consumer)]: entry({}, source.consumer_generation, typeOf(source) ?? type ?? ''),
      [canonical(migration)]: entry(allocations, target.consumer_generation, type ?? ''),
    }
    // No type to write: 1.37, which has none, so none is invented.
    await client.post('/allocations', body, {version: type === null ? '1.37' : undefined})
    return {
      consumer_uuid: canonical(consumer),
      migration_uuid: canonical(migration),
      allocations,
      overwrote: hasAllocations(target),
      consumer_type: type,
    }
  }, 5)
}
