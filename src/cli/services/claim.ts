/**
 * Claiming resources for consumers as Nova's scheduler does: read the candidates, write the
 * first one with the consumer's generation, and on a 409 (someone else took the capacity,
 * or a concurrent update) go down the list (alternates) in a tight loop. A consumer
 * generation conflict re-reads the generation and tries the same candidate again.
 *
 * The backend writes each claim: placemat checks in the write transaction the topology rules
 * (--same / --different), the group the consumer joins (--group) and every group it is already
 * a member of, and its candidates are those these rules allow; when another claimer got there
 * first the answer is 409 placemat.affinity_violation and the candidates are read again (the
 * filters then see the new allocations). Against plain Placement the rules are member_of
 * filters only, and groups those of a --groups file, judged when the candidates are read. When
 * there is no candidate, the message says which part of the request emptied them.
 *
 * Spread (many consumers over distinct racks, rows or rooms) is in spread.ts.
 */
import {ApiError, type PlacementClient} from '../../client/client.js'
import type {ConsumerAllocations, Ownership} from './allocations.js'
import type {CandidateFlagValues} from '../candidates/flags.js'
import {searchCandidates, type CandidateSearch, type Resources} from '../candidates/search.js'
import {isPlacementGroupName, placementGroupOf} from '../candidates/query.js'
import {whyEmpty} from '../candidates/why.js'
import type {AffinityRule} from '../../core/affinity.js'
import {AFFINITY_VIOLATION, ErrorCode} from '../../core/errors.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import type {ListedProvider} from '../../core/wire.js'
import type {Backend, ClaimVia, Endpoint, MoveOutcome} from '../backend/backend.js'
import {conflictError as conflict, usageError as usage} from '../failure.js'
import {consumerUuid, hasAllocations, typeOf} from '../backend/consumer-lookup.js'

export {AFFINITY_VIOLATION}
export type {MoveOutcome}

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
  /** Look up the winner's providers (names for tables). */
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
  via: ClaimVia
  search: CandidateSearch
  /** The providers of the winner (and more) by uuid, when names were asked for. */
  providers?: Map<string, ListedProvider>
}

/** The consumer as it is now; refuses one that already holds something unless `replace`. */
export async function currentConsumer(backend: Backend, consumer: string, replace: boolean | undefined): Promise<ConsumerAllocations> {
  const current = await backend.claimant(consumer)
  if (hasAllocations(current) && !replace) throw conflict(`consumer ${consumer} already has allocations (release it first, or --replace)`)
  return current
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
  const consumer = canonical(opts.consumer)
  if (!isUuidLike(opts.consumer)) throw usage(`${opts.consumer} is not a consumer uuid`)
  const group = placementGroupOf(flags.group)
  // Allowed to break its group, the claim looks at every candidate, not only those the rule keeps.
  if (opts.allowViolations && group !== undefined) flags = {...flags, group: flags.group!.filter((g) => !isPlacementGroupName(g))}
  // The consumer's own groups keep the candidates too, unless it may break them.
  const searchOpts = {consumer: opts.allowViolations ? undefined : consumer}
  const backend = await endpoint.backend()
  const files = {groups: flags.groups, layout: flags.layout}
  const [firstSearch, firstCurrent] = await Promise.all([
    searchCandidates(endpoint, flags, searchOpts),
    currentConsumer(backend, consumer, opts.replace),
  ])
  let search = firstSearch
  let current = firstCurrent
  const {project, user, type} = ownership(consumer, current, opts.own)
  const rules: AffinityRule[] = search.rules.map(({relation, level, consumer: c}) => ({relation, level, consumer: c}))

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
          const generation = current.consumer_generation ?? null
          const written = await backend.claim(
            {consumer, project, user, type, generation, allocations, rules, group},
            {allowViolations: opts.allowViolations, files},
          )
          return {
            consumer_uuid: consumer,
            candidate: i + 1,
            alternates: list.length - i - 1,
            attempts,
            refreshes,
            consumer_generation: written.consumer_generation,
            allocations,
            via: written.via,
            search,
            providers: opts.names ? await namesOf(backend, search, allocations) : undefined,
          }
        } catch (err) {
          if (!is409(err)) throw err
          lastError = (err as ApiError).detail
          if (isConsumerGenerationConflict(err) && rereads++ < MAX_GENERATION_REREADS) {
            current = await currentConsumer(backend, consumer, opts.replace)
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
      currentConsumer(backend, consumer, opts.replace),
    ])
  }
}

/** The providers the search read (for its rules), else those of the winner alone. */
async function namesOf(backend: Backend, search: CandidateSearch, allocations: Allocations): Promise<Map<string, ListedProvider>> {
  if (search.providers) return search.providers
  return new Map((await backend.providers(Object.keys(allocations))).map((p) => [p.uuid, p]))
}

// ---- release, move -------------------------------------------------------------------------------

/** DELETE /allocations/{consumer}; 404 when it holds nothing. */
export async function release(client: PlacementClient, consumer: string): Promise<void> {
  await client.delete(`/allocations/${consumerUuid(consumer)}`)
}

/**
 * Nova's move_allocations: the migration consumer gets the instance's allocations and the
 * instance's are emptied, in one write (the backend's: placemat decides it in the write with
 * the consumers' placement groups checked, and keeps what the instance was while it holds
 * nothing; plain Placement, one POST /allocations decided the same way on what can be read).
 */
export async function move(
  backend: Backend,
  consumer: string,
  migration: string,
  migrationType?: string,
  opts: {allowViolations?: boolean} = {},
): Promise<MoveOutcome> {
  consumerUuid(consumer)
  consumerUuid(migration, 'migration consumer (--to)')
  if (canonical(consumer) === canonical(migration)) throw usage('--to must be another consumer')
  return backend.move({consumer, to: migration, consumerType: migrationType}, opts)
}
