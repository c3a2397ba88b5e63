/**
 * A reshape tried on a copy of a State: the trees before and after, the allocations that
 * move, and the conflicts the real run would hit. The reshape itself is placemat's own
 * (createProvider for the new children, then reshape()), so the first error is exactly
 * what the reshaper would answer; besides it, every provider whose final usage would
 * exceed its capacity and every stale generation in the body is listed.
 */
import {ErrorCode, PlacementError} from '../errors.js'
import {INVENTORY_DEFAULTS} from '../placement/inventories.js'
import {createProvider} from '../placement/providers.js'
import {reshape, type ReshaperBody} from '../placement/reshaper.js'
import {stateFromSnapshot} from '../snapshot.js'
import type {Inventory, State} from '../state/state.js'
import {Changes} from '../state/changes.js'
import {capacityOf} from '../inventory-capacity.js'
import {consumerRecord, providerRecord} from '../wire.js'
import type {CompiledReshape} from './compiled.js'
import {treeViews, type ProviderView} from './views.js'

/** Some of one class of a consumer's allocations leaving one provider for another. */
export interface ConsumerMove {
  consumer: string
  resource_class: string
  amount: number
  /** null: newly allocated; to null: released, or split over several providers */
  from: string | null
  to: string | null
}

export interface Conflict {
  kind: 'capacity' | 'constraint' | 'generation' | 'inventory_in_use' | 'not_found' | 'invalid'
  message: string
}

export interface ReshapeCheck {
  before: ProviderView[]
  /** null when the reshape would fail */
  after: ProviderView[] | null
  moves: ConsumerMove[]
  conflicts: Conflict[]
  /** The first error the reshape would raise: the reshaper's own answer. */
  error: PlacementError | null
}

type Amounts = Record<string, number>

export function conflictKind(err: PlacementError): Conflict['kind'] {
  if (err.code === ErrorCode.CONCURRENT_UPDATE) return 'generation'
  if (err.code === ErrorCode.INVENTORY_INUSE) return 'inventory_in_use'
  if (err.code === ErrorCode.PROVIDER_NOT_FOUND || err.status === 404) return 'not_found'
  if (/exceed the capacity/.test(err.detail)) return 'capacity'
  if (/violate inventory constraints/.test(err.detail)) return 'constraint'
  return 'invalid'
}

/** Every generation the body gives that the State no longer has. */
function staleGenerations(s: State, body: ReshaperBody): Conflict[] {
  const out: Conflict[] = []
  for (const [uuid, entry] of Object.entries(body.inventories)) {
    const p = s.providers.get(uuid)
    const given = entry?.resource_provider_generation
    if (p && given !== p.generation) {
      out.push({kind: 'generation', message: `provider ${p.name} (${uuid}): the plan has generation ${given}, it is now ${p.generation}`})
    }
  }
  for (const [uuid, entry] of Object.entries(body.allocations ?? {})) {
    const now = s.consumers.get(uuid)?.generation ?? null
    const given = entry?.consumer_generation ?? null
    if (given !== now) out.push({kind: 'generation', message: `consumer ${uuid}: the plan has generation ${given}, it is now ${now}`})
  }
  return out
}

/** Final usage against final capacity, on every provider the body touches. */
function capacityConflicts(s: State, compiled: CompiledReshape): Conflict[] {
  const {body, creates} = compiled
  const finalUse = new Map<string, Map<string, number>>()
  const add = (rp: string, rc: string, n: number) => {
    let m = finalUse.get(rp)
    if (!m) finalUse.set(rp, (m = new Map()))
    m.set(rc, (m.get(rc) ?? 0) + n)
  }
  const inBody = new Set(Object.keys(body.allocations ?? {}))
  const touched = new Set(Object.keys(body.inventories))
  for (const e of Object.values(body.allocations ?? {})) for (const rp of Object.keys(e?.allocations ?? {})) touched.add(rp)
  for (const rp of touched) {
    for (const [cu, amounts] of s.providers.get(rp)?.allocations ?? []) if (!inBody.has(cu)) for (const [rc, n] of amounts) add(rp, rc, n)
  }
  for (const e of Object.values(body.allocations ?? {})) {
    for (const [rp, a] of Object.entries(e?.allocations ?? {})) for (const [rc, n] of Object.entries(a?.resources ?? {})) add(rp, rc, n)
  }
  const out: Conflict[] = []
  for (const rp of touched) {
    const p = s.providers.get(rp)
    const name = p?.name ?? creates.find((c) => c.uuid === rp)?.name ?? rp
    const finalInv = body.inventories[rp]?.inventories as Record<string, Partial<Inventory> & {total: number}> | undefined
    for (const [rc, used] of finalUse.get(rp) ?? []) {
      const raw = finalInv ? finalInv[rc] : p?.inventories.get(rc)
      if (!raw) {
        out.push({kind: 'invalid', message: `${rc} on ${name}: ${used} allocated but it would have no ${rc} inventory`})
        continue
      }
      const cap = capacityOf({...INVENTORY_DEFAULTS, ...raw})
      if (used > cap) out.push({kind: 'capacity', message: `${rc} on ${name}: ${used} allocated, capacity would be ${cap}`})
    }
  }
  return out
}

/** What each consumer in the body gains and loses, class by class. */
function consumerMoves(s: State, body: ReshaperBody): ConsumerMove[] {
  const moves: ConsumerMove[] = []
  for (const [cu, e] of Object.entries(body.allocations ?? {})) {
    const was: Record<string, Amounts> = {}
    for (const [rp, a] of s.consumers.get(cu)?.allocations ?? []) was[rp] = Object.fromEntries(a)
    const will: Record<string, Amounts> = Object.fromEntries(
      Object.entries(e?.allocations ?? {}).map(([rp, a]) => [rp, a?.resources ?? {}]),
    )
    const classes = new Set<string>()
    for (const a of [...Object.values(was), ...Object.values(will)]) for (const rc of Object.keys(a)) classes.add(rc)
    for (const rc of [...classes].sort()) {
      const lost = Object.entries(was).filter(([rp, a]) => (a[rc] ?? 0) > (will[rp]?.[rc] ?? 0))
      const gained = Object.entries(will).filter(([rp, a]) => (a[rc] ?? 0) > (was[rp]?.[rc] ?? 0))
      for (const [rp, a] of lost) {
        const to = gained.length === 1 ? gained[0][0] : null
        moves.push({consumer: cu, resource_class: rc, amount: a[rc] - (will[rp]?.[rc] ?? 0), from: rp, to})
      }
      if (!lost.length)
        for (const [rp, a] of gained)
          moves.push({consumer: cu, resource_class: rc, amount: a[rc] - (was[rp]?.[rc] ?? 0), from: null, to: rp})
    }
  }
  return moves
}

/** A State of its own holding what `s` holds (classes, providers, consumers). */
function copyOf(s: State, now: number): State {
  return stateFromSnapshot(
    {
      classes: [...s.classes.keys()],
      providers: [...s.providers.values()].map(providerRecord),
      consumers: [...s.consumers.values()].map(consumerRecord),
    },
    now,
  )
}

/**
 * Checks a compiled reshape against `s` (which is left as it is): the trees of
 * `compiled.roots` before and after (and of any other provider `s` holds, i.e. the ones
 * the consumers use elsewhere), the allocations that move, and the conflicts.
 */
export function checkReshape(s: State, compiled: CompiledReshape, now = Date.now()): ReshapeCheck {
  const created = new Set(compiled.creates.map((c) => c.uuid))
  const inTrees = new Set(compiled.roots)
  const extra = [...s.providers.values()].filter((p) => !inTrees.has(p.root)).map((p) => p.uuid)
  const before = treeViews(s, compiled.roots, created, extra)
  const conflicts = [...staleGenerations(s, compiled.body), ...capacityConflicts(s, compiled)]
  const moves = consumerMoves(s, compiled.body)

  const copy = copyOf(s, now)
  let after: ProviderView[] | null = null
  let error: PlacementError | null = null
  copy.changes = new Changes()
  try {
    for (const c of compiled.creates) createProvider(copy, now, c)
    reshape(copy, now, compiled.body, {consumerTypes: compiled.consumerTypes})
    after = treeViews(copy, compiled.roots, created, extra)
  } catch (err) {
    if (!(err instanceof PlacementError)) throw err
    error = err
    if (!conflicts.some((c) => c.message === err.detail)) conflicts.push({kind: conflictKind(err), message: err.detail})
  } finally {
    copy.changes = null
  }
  return {before, after, moves, conflicts, error}
}
