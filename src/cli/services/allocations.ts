/**
 * Consumer allocations for the CLI: parsing osc-placement style --allocation strings,
 * and read-modify-write of one consumer's allocations with its consumer generation
 * (re-read and re-applied on a concurrent update).
 */
import {ApiError, type PlacementClient} from '../../client/client.js'
import {mapLimit} from '../../client/map-limit.js'
import {isUuidLike} from '../../core/uuids.js'
import type {ConsumerAllocations, Endpoint} from '../backend/backend.js'
import {consumerUuid, getConsumer, hasAllocations, UNKNOWN_CONSUMER_TYPE, unknownConsumer} from '../backend/consumer-lookup.js'
import {resolveProviderUuids} from '../backend/provider-lookup.js'
import {retryOnConcurrentUpdate} from '../backend/retry.js'
import {usageError} from '../failure.js'
import {readDocument} from '../formats/document.js'

export type Resources = Record<string, number>

export type {ConsumerAllocations}

const usage = usageError

/**
 * "rp=PROVIDER,VCPU=2,MEMORY_MB=1024" strings into amounts per provider reference; the
 * same provider may come back in several strings (merged, a class given twice with two
 * amounts is an error). With `allowZero`, 0 means "drop this class".
 */
export function parseAllocationArgs(strings: string[], allowZero = false): Map<string, Resources> {
  const out = new Map<string, Resources>()
  for (const s of strings) {
    const parts = s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
    let rp: string | undefined
    const resources: Resources = {}
    for (const part of parts) {
      const eq = part.indexOf('=')
      if (eq <= 0) throw usage(`--allocation ${s}: expected rp=PROVIDER,CLASS=AMOUNT[,CLASS=AMOUNT...]`)
      const key = part.slice(0, eq).trim()
      const value = part.slice(eq + 1).trim()
      if (key === 'rp' || key === 'provider') {
        rp = value
        continue
      }
      if (!/^[0-9]+$/.test(value)) throw usage(`--allocation ${s}: ${key} must be a whole number, not '${value}'`)
      const n = Number(value)
      if (n === 0 && !allowZero) throw usage(`--allocation ${s}: ${key}=0 (amounts start at 1; use allocation unset to remove a class)`)
      resources[key] = n
    }
    if (!rp) throw usage(`--allocation ${s}: name the provider with rp=UUID or rp=NAME`)
    if (!Object.keys(resources).length) throw usage(`--allocation ${s}: give at least one CLASS=AMOUNT`)
    const prev = out.get(rp) ?? {}
    for (const [rc, n] of Object.entries(resources)) {
      if (rc in prev && prev[rc] !== n) throw usage(`--allocation: ${rc} on ${rp} given twice with different amounts`)
      prev[rc] = n
    }
    out.set(rp, prev)
  }
  return out
}

/** Replaces provider references (names or uuids) by uuids. */
export async function resolveAllocationProviders(
  client: PlacementClient,
  byRef: Map<string, Resources>,
): Promise<Record<string, Resources>> {
  const uuids = await resolveProviderUuids(client, [...byRef.keys()])
  const out: Record<string, Resources> = {}
  for (const [ref, resources] of byRef) {
    const uuid = uuids.get(ref)!
    out[uuid] = {...(out[uuid] ?? {}), ...resources}
  }
  return out
}

/**
 * A consumer's allocations (GET /allocations/{consumer}) for a command that shows them; exit 3
 * when the endpoint knows nothing of it, as `consumer show` says. Placement answers an unknown
 * consumer with empty allocations (200): one that holds none is still shown when placemat keeps
 * its record (made without allocations, or moved away with claim move).
 */
export async function shownConsumer(endpoint: Endpoint, consumer: string): Promise<ConsumerAllocations> {
  const body = await getConsumer(endpoint.client, consumer)
  if (hasAllocations(body) || (await (await endpoint.backend()).knownConsumer(consumerUuid(consumer)))) return body
  throw unknownConsumer(consumerUuid(consumer))
}

/** The current allocations as amounts per provider uuid. */
export const amountsOf = (c: ConsumerAllocations): Record<string, Resources> =>
  Object.fromEntries(Object.entries(c.allocations ?? {}).map(([rp, a]) => [rp, {...a.resources}]))

export interface Ownership {
  project?: string
  user?: string
  consumerType?: string
}

/**
 * The PUT body for a consumer, with the current consumer generation and, where not
 * given, the current project, user and consumer type. Returns the microversion to use:
 * without a known consumer type the write is made at 1.37, which leaves the type as it is.
 */
export function consumerBody(
  consumer: string,
  current: ConsumerAllocations,
  allocations: Record<string, Resources>,
  own: Ownership,
): {body: Record<string, unknown>; version?: string} {
  const project = own.project ?? current.project_id
  const user = own.user ?? current.user_id
  if (!project || !user) throw usage(`consumer ${consumer} has no allocations yet: give --project and --user`)
  const body: Record<string, unknown> = {
    allocations: Object.fromEntries(Object.entries(allocations).map(([rp, resources]) => [rp, {resources}])),
    project_id: project,
    user_id: user,
    consumer_generation: current.consumer_generation ?? null,
  }
  const type =
    own.consumerType ?? (current.consumer_type && current.consumer_type !== UNKNOWN_CONSUMER_TYPE ? current.consumer_type : undefined)
  if (type) {
    body.consumer_type = type
    return {body}
  }
  return {body, version: '1.37'}
}

/**
 * Read-modify-write of one consumer's allocations: `change` gets the current state and
 * returns the amounts per provider to PUT. Re-run on a concurrent update.
 */
export async function updateConsumer(
  client: PlacementClient,
  consumer: string,
  own: Ownership,
  change: (current: ConsumerAllocations) => Record<string, Resources>,
): Promise<ConsumerAllocations> {
  const path = `/allocations/${consumerUuid(consumer)}`
  await retryOnConcurrentUpdate(async () => {
    const current = await getConsumer(client, consumer)
    const amounts = change(current)
    const {body, version} = consumerBody(consumer, current, amounts, own)
    await client.put(path, body, {version})
  })
  return getConsumer(client, consumer)
}

/** Drops classes (from the given providers, or all) or whole providers, as osc-placement's unset. */
export function unsetAmounts(current: Record<string, Resources>, providers: string[], classes: string[]): Record<string, Resources> {
  const out: Record<string, Resources> = {}
  for (const [rp, res] of Object.entries(current)) out[rp] = {...res}
  const targets = providers.length ? Object.keys(out).filter((rp) => providers.includes(rp)) : Object.keys(out)
  if (!classes.length) {
    for (const rp of targets) delete out[rp]
    return out
  }
  for (const rp of targets) {
    for (const rc of classes) delete out[rp][rc]
    if (!Object.keys(out[rp]).length) delete out[rp]
  }
  return out
}

/** Lays `changes` over `current`, per provider and class; 0 drops a class. */
export function amendAmounts(current: Record<string, Resources>, changes: Record<string, Resources>): Record<string, Resources> {
  const out: Record<string, Resources> = {}
  for (const [rp, res] of Object.entries(current)) out[rp] = {...res}
  for (const [rp, res] of Object.entries(changes)) {
    out[rp] = {...(out[rp] ?? {}), ...res}
    for (const [rc, n] of Object.entries(res)) if (n === 0) delete out[rp][rc]
    if (!Object.keys(out[rp]).length) delete out[rp]
  }
  return out
}

// ---- POST /allocations from a file --------------------------------------------------

export interface PostEntry {
  allocations: Record<string, {resources: Resources}>
  project_id?: string
  user_id?: string
  consumer_generation?: number | null
  consumer_type?: string
  mappings?: unknown
}

/** Reads a YAML or JSON file (or stdin for "-") holding a POST /allocations body. */
export function readPostFile(file: string): Record<string, PostEntry> {
  const data = readDocument(file)
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw usage(`${file}: expected a mapping of consumer uuid to {allocations, project_id, user_id, ...}`)
  }
  const out = data as Record<string, PostEntry>
  for (const [consumer, entry] of Object.entries(out)) {
    if (!entry || typeof entry !== 'object' || typeof entry.allocations !== 'object' || entry.allocations === null) {
      throw usage(`${file}: consumer ${consumer} needs an allocations mapping`)
    }
  }
  return out
}

/**
 * Completes a POST /allocations body: provider names become uuids, and each consumer
 * missing consumer_generation, project_id, user_id or consumer_type gets the current ones
 * (or the defaults given). Returns the body, the microversion to use, and whether
 * generations were filled in (so a concurrent update may be retried).
 */
export async function preparePost(
  client: PlacementClient,
  entries: Record<string, PostEntry>,
  defaults: Ownership,
): Promise<{body: Record<string, PostEntry>; version?: string; filledGenerations: boolean}> {
  const refs = new Set<string>()
  for (const e of Object.values(entries)) for (const rp of Object.keys(e.allocations)) if (!isUuidLike(rp)) refs.add(rp)
  const uuids = refs.size ? await resolveProviderUuids(client, [...refs]) : new Map<string, string>()
  let filled = false
  const prepared = await mapLimit(Object.entries(entries), 8, async ([consumer, e]) => {
    const out: PostEntry = {...e, allocations: {}}
    for (const [rp, a] of Object.entries(e.allocations)) out.allocations[uuids.get(rp) ?? rp] = a
    const needsCurrent = !('consumer_generation' in e) || !e.project_id || !e.user_id || (!e.consumer_type && !defaults.consumerType)
    const current: ConsumerAllocations = needsCurrent ? await getConsumer(client, consumer) : {allocations: {}}
    if (!('consumer_generation' in e)) {
      out.consumer_generation = current.consumer_generation ?? null
      filled = true
    }
    out.project_id ??= defaults.project ?? current.project_id
    out.user_id ??= defaults.user ?? current.user_id
    if (!out.project_id || !out.user_id)
      throw usage(`consumer ${consumer}: give project_id and user_id in the file, or --project and --user`)
    const type =
      e.consumer_type ??
      defaults.consumerType ??
      (current.consumer_type && current.consumer_type !== UNKNOWN_CONSUMER_TYPE ? current.consumer_type : undefined)
    if (type) out.consumer_type = type
    else delete out.consumer_type
    return [consumer, out, Boolean(type)] as const
  })
  const body: Record<string, PostEntry> = Object.fromEntries(prepared.map(([c, out]) => [c, out]))
  const typed = prepared.map(([, , t]) => t)
  if (typed.every(Boolean)) return {body, filledGenerations: filled}
  if (typed.some(Boolean)) {
    throw usage('some consumers have a consumer_type and some do not: give consumer_type for each, or --consumer-type')
  }
  return {body, version: '1.37', filledGenerations: filled}
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404
}

/**
 * POST /allocations of a file's entries, each filled in (generations, owners, type) as
 * preparePost does; a concurrent update is read again and retried only when a generation was
 * read here (those the file gives are the user's to fix).
 */
export async function postAllocations(client: PlacementClient, entries: Record<string, PostEntry>, defaults: Ownership): Promise<void> {
  const attempt = async () => {
    const {body, version} = await preparePost(client, entries, defaults)
    await client.post('/allocations', body, {version})
  }
  const filled = Object.values(entries).some((e) => !('consumer_generation' in e))
  await (filled ? retryOnConcurrentUpdate(attempt) : attempt())
}

/** Deletes each consumer's allocations in turn (stopping at the first refused). */
export async function deleteAllocations(client: PlacementClient, consumers: string[]): Promise<void> {
  for (const c of consumers) await client.delete(`/allocations/${encodeURIComponent(c)}`)
}
