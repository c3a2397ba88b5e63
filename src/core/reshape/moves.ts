/**
 * The move form of a reshape plan, compiled into a POST /reshaper body against a State:
 *
 *   moves:
 *     - from: cn1                  # provider (name or uuid) the inventory leaves
 *       to: cn1_pgpu0              # provider it goes to; when no provider has this name it
 *                                  #   is created, as a child of `parent` (default: from)
 *       uuid: UUID                 # optional: uuid of the created provider (default:
 *                                  #   uuid5(NS, "provider:NAME"), as apply gives one)
 *       parent: NAME|UUID          # optional: parent of the created provider
 *       resources: {VGPU: 4}       # inventory totals that move ("all": the whole total)
 *       inventory: {VGPU: {max_unit: 4}}  # optional: fields of the new inventory on `to`
 *       consumers: [UUID, ...]     # whose allocations of these classes on `from` follow
 *
 * Per (from, class): the totals moved are taken off the source inventory (reserved is
 * capped at what is left; the class disappears when all of it moves) and added to the
 * targets (to an existing inventory of that class, or a new one: min_unit, step_size and
 * allocation_ratio of the source, max_unit capped at the amount moved, reserved 0, then the
 * move's `inventory` fields). A consumer that holds the class on `from` and is listed in a
 * move follows it with its whole amount of that class; its other allocations stay.
 * `consumers` may be left out only when it cannot be ambiguous: one move takes all of a
 * class, then every holder follows it. When all of a class leaves `from`, every holder must
 * be placed; when part of it leaves, unlisted holders stay on `from`.
 *
 * The State must hold the trees of every provider the moves name, and every holder of a
 * moved class on a source in full (all its allocations): see consumersToRead.
 */
import type {ReshaperBody} from '../placement/reshaper.js'
import type {Inventory, Provider, State} from '../state/state.js'
import {canonicalUuid, isUuidLike, providerUuid} from '../uuids.js'
import {ReshapePlanError, type CompiledReshape, type ProviderCreate} from './compiled.js'

export interface Move {
  from: string
  to: string
  uuid?: string
  parent?: string
  resources: Record<string, number | 'all'>
  inventory?: Record<string, Partial<Inventory>>
  consumers?: string[]
}

function planError(msg: string): never {
  throw new ReshapePlanError(msg)
}

function missingProvider(msg: string): never {
  throw new ReshapePlanError(msg, true)
}

/** The provider a plan names (a uuid, else a name), if the State holds it. */
export function providerByRef(s: State, ref: string): Provider | undefined {
  return (isUuidLike(ref) ? s.providers.get(canonicalUuid(ref)) : undefined) ?? s.providerByName.get(ref)
}

/** Consumers holding `rc` on provider `from`, in the State's order. */
function holdersOf(s: State, from: string, rc: string): string[] {
  const out: string[] = []
  for (const [c, amounts] of s.providers.get(from)?.allocations ?? []) if ((amounts.get(rc) ?? 0) > 0) out.push(c)
  return out
}

/**
 * The consumers whose whole allocations the compiler needs: every holder of a moved class
 * on a source. `s` needs only the trees (the consumers as the providers list them).
 */
export function consumersToRead(s: State, moves: Move[]): string[] {
  const out = new Set<string>()
  for (const m of moves) {
    const from = providerByRef(s, m.from)
    if (from) for (const rc of Object.keys(m.resources)) for (const c of holdersOf(s, from.uuid, rc)) out.add(c)
  }
  return [...out]
}

interface Resolved {
  from: Provider
  /** uuid of the target, existing or created */
  to: string
  move: Move
}

/**
 * The uuid of the provider a move creates: the plan's, else the one its name gives. Decided
 * by the plan alone, so a dry run shows the uuid the run creates, and a run again finds it.
 */
export const createdUuid = (m: Move): string => (m.uuid ? canonicalUuid(m.uuid) : providerUuid(m.to))

/** The providers each move names; the targets that do not exist yet become creates. */
function resolveMoves(s: State, moves: Move[]) {
  const roots = new Set<string>()
  const find = (ref: string) => {
    const p = providerByRef(s, ref)
    if (p) roots.add(p.root)
    return p
  }
  const creates = new Map<string, ProviderCreate>()
  const resolved: Resolved[] = []
  for (const [i, m] of moves.entries()) {
    const from = find(m.from)
    if (!from) missingProvider(`moves[${i}]: no provider ${m.from}`)
    const to = find(m.to)
    if (to) {
      if (m.uuid && to.uuid !== m.uuid) planError(`moves[${i}]: ${m.to} exists with uuid ${to.uuid}, not ${m.uuid}`)
      resolved.push({from, to: to.uuid, move: m})
      continue
    }
    if (isUuidLike(m.to)) missingProvider(`moves[${i}]: no provider ${m.to}; to create one, give its name in "to" (and the uuid in "uuid")`)
    let parentUuid = from.uuid
    if (m.parent) {
      // The parent may itself be created by an earlier move.
      const parent = find(m.parent)?.uuid ?? creates.get(m.parent)?.uuid
      if (!parent) missingProvider(`moves[${i}]: no provider ${m.parent} to be the parent of ${m.to}`)
      parentUuid = parent
    }
    let c = creates.get(m.to)
    if (!c) creates.set(m.to, (c = {uuid: createdUuid(m), name: m.to, parent_provider_uuid: parentUuid}))
    else if ((m.uuid && c.uuid !== m.uuid) || c.parent_provider_uuid !== parentUuid) {
      planError(`moves[${i}]: ${m.to} is created by two moves with different uuid or parent`)
    }
    resolved.push({from, to: c.uuid, move: m})
  }
  return {resolved, creates: [...creates.values()], roots: [...roots]}
}

/** The moves of one class out of one source. */
interface Group {
  from: Provider
  rc: string
  moves: {to: string; amount: number | 'all'; move: Move}[]
}

function groupMoves(resolved: Resolved[]): Group[] {
  const groups = new Map<string, Group>()
  for (const {from, to, move} of resolved) {
    for (const [rc, amount] of Object.entries(move.resources)) {
      const key = `${from.uuid}\u0000${rc}`
      let g = groups.get(key)
      if (!g) groups.set(key, (g = {from, rc, moves: []}))
      g.moves.push({to, amount, move})
    }
  }
  return [...groups.values()]
}

/** Which holder of the group's class follows which target (consumer -> target uuid). */
function assignHolders(s: State, g: Group, moved: number, remaining: number): Map<string, string> {
  const {from, rc} = g
  const total = moved + remaining
  const holders = holdersOf(s, from.uuid, rc)
  const assigned = new Map<string, string>()
  if (!g.moves.some((m) => m.move.consumers !== undefined)) {
    if (g.moves.length > 1 && holders.length > 0) {
      planError(`${rc} from ${from.name} is split across ${g.moves.length} providers: each move must list its consumers`)
    }
    if (remaining > 0 && holders.length > 0) {
      planError(`part of ${rc} leaves ${from.name} (${moved} of ${total}): list the consumers that follow it (consumers: [...])`)
    }
    for (const c of holders) assigned.set(c, g.moves[0].to)
    return assigned
  }
  for (const m of g.moves) {
    for (const c of m.move.consumers ?? []) {
      if (!holders.includes(c)) {
        // A consumer listed for a move of several classes needs to hold only some of them.
        const classes = Object.keys(m.move.resources)
        if (!classes.some((other) => holdersOf(s, from.uuid, other).includes(c))) {
          planError(`consumer ${c} holds none of ${classes.join(', ')} on ${from.name}`)
        }
        continue
      }
      const prev = assigned.get(c)
      if (prev && prev !== m.to) planError(`consumer ${c} is listed in two moves of ${rc} from ${from.name}`)
      assigned.set(c, m.to)
    }
  }
  const unplaced = remaining === 0 ? holders.filter((c) => !assigned.has(c)) : []
  if (unplaced.length) {
    planError(`all of ${rc} leaves ${from.name}, but consumer(s) ${unplaced.join(', ')} holding it are in no move's consumers`)
  }
  return assigned
}

/** The new inventory of a target that gains `amount` of the source's class. */
function targetInventory(src: Inventory, have: Inventory | undefined, amount: number, overlay: Partial<Inventory>): Inventory {
  const next: Inventory = have
    ? {...have, total: have.total + amount}
    : {
        total: amount,
        reserved: 0,
        min_unit: src.min_unit,
        max_unit: Math.min(src.max_unit, amount),
        step_size: src.step_size,
        allocation_ratio: src.allocation_ratio,
      }
  return {...next, ...overlay}
}

/** A consumer's allocations with the given (source, class) amounts moved to their targets. */
function movedAllocations(s: State, consumer: string, follows: {from: string; rc: string; to: string}[]) {
  const c = s.consumers.get(consumer)!
  const allocations: Record<string, Record<string, number>> = {}
  for (const [rp, amounts] of c.allocations) allocations[rp] = Object.fromEntries(amounts)
  for (const {from, rc, to} of follows) {
    const amount = allocations[from]?.[rc] ?? 0
    if (!amount) continue
    delete allocations[from][rc]
    if (!Object.keys(allocations[from]).length) delete allocations[from]
    allocations[to] = {...(allocations[to] ?? {}), [rc]: (allocations[to]?.[rc] ?? 0) + amount}
  }
  return {
    allocations: Object.fromEntries(Object.entries(allocations).map(([rp, resources]) => [rp, {resources}])),
    project_id: c.project,
    user_id: c.user,
    consumer_generation: c.generation,
  }
}

/**
 * Moves + State -> the reshaper body, the providers to create and the trees involved.
 * Throws ReshapePlanError when the plan does not fit the State.
 */
export function compileReshapeMoves(s: State, moves: Move[]): CompiledReshape {
  const {resolved, creates, roots} = resolveMoves(s, moves)
  const inventories = new Map<string, Map<string, Inventory>>()
  const inventoryOf = (uuid: string) => {
    let inv = inventories.get(uuid)
    if (!inv) inventories.set(uuid, (inv = new Map([...(s.providers.get(uuid)?.inventories ?? [])].map(([rc, i]) => [rc, {...i}]))))
    return inv
  }
  /** consumer -> the (source, class) pairs it follows, and where to */
  const follow = new Map<string, {from: string; rc: string; to: string}[]>()

  for (const g of groupMoves(resolved)) {
    const src = g.from.inventories.get(g.rc)
    if (!src) planError(`${g.from.name} has no ${g.rc} inventory to move`)
    if (g.moves.some((m) => m.amount === 'all') && g.moves.length > 1)
      planError(`${g.rc} from ${g.from.name}: "all" only when one move takes ${g.rc}`)
    const amounts = g.moves.map((m) => (m.amount === 'all' ? src.total : m.amount))
    const moved = amounts.reduce((a, b) => a + b, 0)
    if (moved > src.total) planError(`${g.rc} from ${g.from.name}: moving ${moved} but the total is ${src.total}`)
    const remaining = src.total - moved

    for (const [c, to] of assignHolders(s, g, moved, remaining)) {
      const list = follow.get(c) ?? []
      list.push({from: g.from.uuid, rc: g.rc, to})
      follow.set(c, list)
    }
    // Inventories: the source keeps what is left; each target gains its share.
    const fromInv = inventoryOf(g.from.uuid)
    if (remaining === 0) fromInv.delete(g.rc)
    else fromInv.set(g.rc, {...src, total: remaining, reserved: Math.min(src.reserved, remaining)})
    g.moves.forEach((m, i) => {
      const toInv = inventoryOf(m.to)
      toInv.set(g.rc, targetInventory(src, toInv.get(g.rc), amounts[i], m.move.inventory?.[g.rc] ?? {}))
    })
  }

  const created = new Set(creates.map((c) => c.uuid))
  const body: ReshaperBody = {inventories: {}, allocations: {}}
  for (const [uuid, inv] of inventories) {
    const generation = created.has(uuid) ? 0 : s.providers.get(uuid)!.generation
    body.inventories[uuid] = {resource_provider_generation: generation, inventories: Object.fromEntries(inv)}
  }
  for (const [uuid, follows] of follow) body.allocations[uuid] = movedAllocations(s, uuid, follows)
  return {body, creates, consumerTypes: false, generationsFilled: true, roots}
}

/**
 * Whether the moves are already in place (a plan run before, run again): every target exists
 * with the classes it was to receive, and each moved class is gone from its source, or every
 * consumer the move names now holds it on the target and not on the source, or (a move of
 * idle inventory, naming no consumers, whose source keeps part of the class) the target is
 * the provider the plan creates (its uuid, under its parent) holding exactly what the plan
 * gives it. Then there is nothing to do, rather than "no inventory to move" or moving the
 * same amounts again.
 *
 * A part of an idle class moved to a provider that existed before cannot be told from the
 * state before the move, and is moved again.
 */
export function movesInPlace(s: State, moves: Move[]): boolean {
  if (moves.length === 0) return false
  // What the plan creates, by target name: the first move naming it decides (as resolveMoves does).
  const planned = new Map<string, {uuid: string; parent: string}>()
  for (const m of moves) if (!planned.has(m.to)) planned.set(m.to, {uuid: createdUuid(m), parent: m.parent ?? m.from})
  /** Of `rc`, what the plan moves into the provider `to` (null when a move of it is "all"). */
  const movedInto = (to: string, rc: string): number | null => {
    let sum = 0
    for (const m of moves) {
      const amount = m.resources[rc]
      if (amount === undefined || providerByRef(s, m.to)?.uuid !== to) continue
      if (amount === 'all') return null
      sum += amount
    }
    return sum
  }
  return moves.every((m) => {
    const from = providerByRef(s, m.from)
    const to = providerByRef(s, m.to)
    if (!from || !to || (m.uuid && canonicalUuid(m.uuid) !== to.uuid)) return false
    const plan = planned.get(m.to)!
    const createdByPlan = to.uuid === plan.uuid && to.parent === providerByRef(s, plan.parent)?.uuid
    return Object.entries(m.resources).every(([rc, amount]) => {
      const target = to.inventories.get(rc)
      if (!target || (typeof amount === 'number' && target.total < amount)) return false
      if (!from.inventories.has(rc)) return true
      const named = m.consumers ?? []
      if (named.length === 0) return createdByPlan && target.total === movedInto(to.uuid, rc)
      return named.every(
        (c) => (to.allocations.get(canonicalUuid(c))?.get(rc) ?? 0) > 0 && !(from.allocations.get(canonicalUuid(c))?.get(rc) ?? 0),
      )
    })
  })
}
