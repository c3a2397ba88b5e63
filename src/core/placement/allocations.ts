/**
 * Allocations and consumers: what a consumer holds on which provider, written the way
 * Placement 8.0.0 writes them (handlers/allocation.py, handlers/util.py ensure_consumer,
 * objects/allocation.py _set_allocations / _check_capacity_exceeded, objects/consumer.py).
 *
 * One write replaces, for every consumer it names, all of that consumer's allocations.
 * Everything is checked before anything changes, so a failure leaves the State as it was.
 */
import {ErrorCode, PlacementError, badRequest, conflict, notFound} from '../errors.js'
import type {Amounts, Consumer, Provider, State} from '../state/state.js'
import {capacityOf} from '../inventory-capacity.js'

/** Placement 8.0.0's default incomplete_consumer_project_id / incomplete_consumer_user_id. */
export const INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000'

/** Placement shows a consumer without a type as this (consumer_type.NULL_CONSUMER_TYPE_ALIAS). */
export const NULL_CONSUMER_TYPE_ALIAS = 'unknown'

/** What one consumer asks for. */
export interface ConsumerWrite {
  uuid: string
  /** provider uuid -> resource class -> amount. Empty means "remove all of this consumer's allocations". */
  allocations: Map<string, Map<string, number>>
  /** Missing (before 1.8) means the incomplete-consumer project and user. */
  project?: string | null
  user?: string | null
  /** The generation the caller believes the consumer has (null: "it does not exist"); checked only with checkGeneration. */
  generation?: number | null
  /** Set from 1.38; undefined leaves an existing consumer's type alone and gives a new one none. */
  type?: string | null
}

export interface WriteAllocationsOptions {
  /** Microversion 1.28+: every consumer's generation must match. */
  checkGeneration: boolean
  /** How a failure to find a resource class is reported (Placement wraps it per handler). */
  notFound: (message: string) => PlacementError
  /** How an inventory/capacity/constraint failure is reported. */
  invalid: (message: string) => PlacementError
}

/** Error wrapping of PUT /allocations/{consumer_uuid}. */
export const putAllocationErrors = (consumerUuid: string) => ({
  notFound: (msg: string) => badRequest(`Unable to allocate inventory for consumer ${consumerUuid}: ${msg}`),
  invalid: (msg: string) => conflict(`Unable to allocate inventory: ${msg}`),
})

/** Error wrapping of POST /allocations. */
export const postAllocationErrors = {
  notFound: (msg: string) => badRequest(`Unable to allocate inventory ${msg}`),
  invalid: (msg: string) => conflict(`Unable to allocate inventory: ${msg}`),
}

const pyStr = (v: unknown): string => (v === null || v === undefined ? 'None' : String(v))

// ---------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------

/** The consumer's allocations as GET /allocations/{consumer_uuid} shows them (the uuid is matched as given). */
export function consumerAllocations(s: State, consumerUuid: string): Consumer | null {
  const c = s.consumers.get(consumerUuid)
  return c && c.allocations.size > 0 ? c : null
}

// ---------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------

interface PlannedConsumer {
  write: ConsumerWrite
  existing: Consumer | undefined
  project: string
  user: string
}

/**
 * Step 1 of a write (Placement's ensure_consumer / inspect_consumers): resolves each
 * consumer's project and user and checks consumer generations. Changes nothing.
 */
export function planConsumers(s: State, writes: ConsumerWrite[], opts: {checkGeneration: boolean}): PlannedConsumer[] {
  const out: PlannedConsumer[] = []
  for (const w of writes) {
    let project = w.project ?? null
    let user = w.user ?? null
    if (project === null) {
      project = INCOMPLETE_CONSUMER_ID
      user = INCOMPLETE_CONSUMER_ID
    }
    const existing = s.consumers.get(w.uuid)
    if (opts.checkGeneration) {
      const given = w.generation ?? null
      if (existing) {
        if (existing.generation !== given) {
          throw new PlacementError(
            409,
            `consumer generation conflict - expected ${existing.generation} but got ${pyStr(given)}`,
            ErrorCode.CONCURRENT_UPDATE,
          )
        }
      } else if (given !== null) {
        throw new PlacementError(409, `consumer generation conflict - expected null but got ${given}`, ErrorCode.CONCURRENT_UPDATE)
      }
    }
    out.push({write: w, existing, project, user: user ?? INCOMPLETE_CONSUMER_ID})
  }
  return out
}

/** Step 2 (Placement's _resource_providers_by_uuid): every named provider must exist. Changes nothing. */
export function checkProvidersExist(s: State, writes: ConsumerWrite[]): void {
  for (const w of writes) {
    for (const rpUuid of w.allocations.keys()) {
      if (!s.providers.has(rpUuid)) {
        throw badRequest(`Allocation for resource provider '${rpUuid}' that does not exist.`)
      }
    }
  }
}

interface AllocRow {
  consumer: string
  provider: Provider
  rc: string
  used: number
}

/**
 * Iteration order of a CPython set built from these small non-negative ints (their hash
 * is the value), used where Placement joins a set of resource class ids into a message.
 */
export function pythonIntSetOrder(values: number[]): number[] {
  const PERTURB_SHIFT = 5
  const LINEAR_PROBES = 9
  let mask = 7
  let table: (number | null)[] = new Array(8).fill(null)
  let fill = 0
  const insertClean = (tbl: (number | null)[], m: number, v: number) => {
    let perturb = v
    let i = v & m
    for (;;) {
      if (tbl[i] === null) {
        tbl[i] = v
        return
      }
      if (i + LINEAR_PROBES <= m) {
        for (let j = 1; j <= LINEAR_PROBES; j++) {
          if (tbl[i + j] === null) {
            tbl[i + j] = v
            return
          }
        }
      }
      perturb = Math.floor(perturb / 2 ** PERTURB_SHIFT)
      i = (i * 5 + 1 + perturb) & m
    }
  }
  for (const v of values) {
    // set_add_entry: look for v or the first free slot along the same probe sequence.
    let perturb = v
    let i = v & mask
    let found = false
    let slot = -1
    outer: for (;;) {
      const probes = i + LINEAR_PROBES <= mask ? LINEAR_PROBES : 0
      for (let j = 0; j <= probes; j++) {
        const e = table[i + j]
        if (e === null) {
          slot = i + j
          break outer
        }
        if (e === v) {
          found = true
          break outer
        }
      }
      perturb = Math.floor(perturb / 2 ** PERTURB_SHIFT)
      i = (i * 5 + 1 + perturb) & mask
    }
    if (found) continue
    table[slot] = v
    fill++
    if (fill * 5 >= mask * 3) {
      const used = fill
      let size = 8
      while (size <= used * 4) size *= 2
      const next: (number | null)[] = new Array(size).fill(null)
      for (const e of table) if (e !== null) insertClean(next, size - 1, e)
      table = next
      mask = size - 1
    }
  }
  return table.filter((e): e is number => e !== null)
}

/**
 * Step 3 (Placement's update_consumers + replace_all): checks classes, inventories,
 * constraints and capacity for every allocation, then replaces the consumers'
 * allocations, bumps the generation of every provider named, bumps each rewritten
 * consumer's generation and deletes the rewritten consumers left with nothing.
 */
export function applyAllocations(s: State, now: number, plan: PlannedConsumer[], opts: WriteAllocationsOptions): void {
  // The allocation rows, as Placement builds them: the requested amounts, or for an
  // empty request every existing allocation of the consumer with used = 0.
  const rows: AllocRow[] = []
  for (const {write: w, existing} of plan) {
    if (w.allocations.size > 0) {
      for (const [rpUuid, resources] of w.allocations) {
        const provider = s.providers.get(rpUuid)!
        for (const [rc, used] of resources) rows.push({consumer: w.uuid, provider, rc, used})
      }
    } else if (existing) {
      for (const [rpUuid, amounts] of existing.allocations) {
        const provider = s.providers.get(rpUuid)
        if (!provider) continue
        for (const rc of amounts.keys()) rows.push({consumer: w.uuid, provider, rc, used: 0})
      }
    }
  }

  // --- validation (_check_capacity_exceeded) ---------------------------------
  const classIds: number[] = []
  for (const r of rows) {
    const rec = s.classes.get(r.rc)
    if (!rec) throw opts.notFound(`No such resource class ${r.rc}.`)
    classIds.push(rec.id)
  }
  const classNames = new Set(rows.map((r) => r.rc))
  const replaced = new Set(rows.map((r) => r.consumer))
  const providers = new Map<string, Provider>()
  for (const r of rows) if (!providers.has(r.provider.uuid)) providers.set(r.provider.uuid, r.provider)
  const missing = [...providers.values()].filter((p) => ![...classNames].some((rc) => p.inventories.has(rc)))
  if (missing.length > 0) {
    const byId = new Map([...s.classes.values()].map((c) => [c.id, c.name]))
    const classStr = pythonIntSetOrder(classIds)
      .map((id) => byId.get(id))
      .join(', ')
    throw opts.invalid(`Inventory for '${classStr}' on resource provider '${missing.map((p) => p.uuid).join(', ')}' invalid.`)
  }
  const requested = new Map<string, number>()
  for (const r of rows) {
    const key = `${r.provider.uuid}\u0000${r.rc}`
    const sum = (requested.get(key) ?? 0) + r.used
    requested.set(key, sum)
    if (r.used === 0) continue
    const inv = r.provider.inventories.get(r.rc)
    if (!inv) throw opts.invalid(`Inventory for '${r.rc}' on resource provider '${r.provider.uuid}' invalid.`)
    if (r.used < inv.min_unit || r.used > inv.max_unit || r.used % inv.step_size !== 0) {
      throw opts.invalid(
        `Unable to create allocation for '${r.rc}' on resource provider '${r.provider.uuid}'. ` +
          'The requested amount would violate inventory constraints.',
      )
    }
    // Usage by every consumer not being rewritten here.
    let used = r.provider.usages.get(r.rc) ?? 0
    for (const c of replaced) used -= r.provider.allocations.get(c)?.get(r.rc) ?? 0
    const capacity = capacityOf(inv)
    if (capacity < used + r.used || capacity < used + sum) {
      throw opts.invalid(
        `Unable to create allocation for '${r.rc}' on resource provider '${r.provider.uuid}'. ` +
          'The requested amount would exceed the capacity.',
      )
    }
  }

  // --- mutation ---------------------------------------------------------------
  const consumers = new Map<string, Consumer>()
  for (const {write: w, existing, project, user} of plan) {
    let c = existing
    if (!c) {
      c = {
        uuid: w.uuid,
        project,
        user,
        type: w.type ?? null,
        generation: 0,
        createdAt: now,
        updatedAt: now,
        allocations: new Map(),
      }
      s.addConsumer(c)
      // It has a record again: what placemat kept of it after it gave its allocations away goes.
      s.removeMoved(w.uuid)
    } else {
      let changed = false
      if (c.project !== project || c.user !== user) {
        c.project = project
        c.user = user
        changed = true
      }
      if (w.type && w.type !== c.type) {
        c.type = w.type
        changed = true
      }
      if (changed) {
        c.updatedAt = now
        s.markConsumer(c)
      }
    }
    consumers.set(w.uuid, c)
  }
  const next = new Map<string, Map<string, Amounts>>()
  for (const r of rows) {
    if (r.used === 0) continue
    let byRp = next.get(r.consumer)
    if (!byRp) next.set(r.consumer, (byRp = new Map()))
    let amounts = byRp.get(r.provider.uuid)
    if (!amounts) byRp.set(r.provider.uuid, (amounts = new Map()))
    amounts.set(r.rc, r.used)
  }
  for (const uuid of replaced) {
    const c = consumers.get(uuid)!
    s.setAllocations(c, next.get(uuid) ?? new Map())
    c.generation += 1
    c.updatedAt = now
  }
  for (const p of providers.values()) s.bumpProvider(p, now)
  for (const uuid of replaced) {
    const c = consumers.get(uuid)!
    if (c.allocations.size === 0) s.removeConsumer(c)
  }
}

/**
 * The whole write of PUT /allocations/{consumer_uuid} (one consumer) or POST /allocations
 * (many, atomically): consumer generations, provider existence, then the replacement.
 */
export function writeAllocations(s: State, now: number, writes: ConsumerWrite[], opts: WriteAllocationsOptions): void {
  const plan = planConsumers(s, writes, opts)
  checkProvidersExist(s, writes)
  applyAllocations(s, now, plan, opts)
}

/**
 * DELETE /allocations/{consumer_uuid}: removes every allocation of the consumer and the
 * consumer itself. Placement does not bump provider generations here.
 */
export function deleteAllocations(s: State, consumerUuid: string): void {
  const c = s.consumers.get(consumerUuid)
  if (!c || c.allocations.size === 0) throw notFound(`No allocations for consumer '${consumerUuid}'`)
  s.removeConsumer(c)
}
