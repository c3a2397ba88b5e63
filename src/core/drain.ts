/**
 * Draining a host: where each consumer holding allocations in the host's tree can go, so
 * that the host can be emptied one atomic move at a time.
 *
 * A consumer's move keeps what it holds, provider by provider: what it holds on each provider
 * of the drained tree (root, NUMA node, GPU...) is found again on one provider each, all in
 * the tree of one other enabled host (the candidates engine, with one granular group per
 * provider held and group_policy=isolate; or, when no class is held on two providers, as one
 * unsuffixed group: moveRequests); what it holds outside the tree (shared storage)
 * stays where it is, so the new host must share an aggregate with every sharing provider it
 * keeps. Its placement groups' hard rules must hold after the move (as the write will check
 * them: newBreaches); among the places left, the one breaking the fewest soft rules wins, then
 * the nearest to the drained host (same rack, row, room), then the engine's order.
 *
 * Consumers are planned one after another, each against the State as the moves before it
 * leave it (planDrain writes them into the State it is given), so two consumers never count
 * on the same room and a group's members see each other where they will be.
 */
import {closeness, placementOf} from './affinity.js'
import {postAllocationErrors, writeAllocations} from './placement/allocations.js'
import {findCandidates, type AllocationRequest, type CandidateOptions} from './candidates/engine.js'
import type {CandidateRequest, RequestGroup} from './candidates/request.js'
import {notFound} from './errors.js'
import {breachRecord, breachText, newBreaches, type Breach, type BreachRecord} from './groups.js'
import {DISABLED_TRAIT, hostsOfProviders, isSharing} from './host.js'
import {requireHost} from './host-status.js'
import type {Amounts, State} from './state/state.js'
import {Changes} from './state/changes.js'

/** Amounts per resource class, per provider uuid. */
export type ProviderAmounts = Record<string, Record<string, number>>

export interface DrainMove {
  consumer: string
  project: string
  user: string
  type: string | null
  /** The consumer generation the move is written with (the write is refused if it changed). */
  generation: number
  /** The placement groups it is a member of. */
  groups: string[]
  /** What it holds in the drained host's tree. */
  from: ProviderAmounts
  /** The host it goes to, and what it takes there. */
  host: string
  to: ProviderAmounts
  /** All it holds after the move: `to`, and what it keeps outside the drained tree. */
  allocations: ProviderAmounts
  /** The soft rules the move breaks (none where a place keeping them all had room). */
  soft: BreachRecord[]
}

export interface DrainStuck {
  consumer: string
  groups: string[]
  from: ProviderAmounts
  /** Why no host can take it. */
  why: string
}

export interface DrainPlan {
  host: string
  moves: DrainMove[]
  stuck: DrainStuck[]
}

export interface DrainOptions {
  candidates?: CandidateOptions
}

const record = (m: Iterable<[string, Amounts]>): ProviderAmounts => Object.fromEntries([...m].map(([rp, a]) => [rp, Object.fromEntries(a)]))

/** Groups `consumer` is a member of, hard ones first. */
function groupsOf(s: State, consumer: string) {
  return [...s.groups.values()]
    .filter((g) => g.members.has(consumer))
    .sort((a, b) => Number(a.soft) - Number(b.soft) || a.name.localeCompare(b.name))
}

/**
 * The consumers holding allocations in `host`'s tree, in the order they are planned: members
 * of hard groups first (the hardest to place), then of soft ones, then the rest; by uuid within.
 */
export function hostConsumers(s: State, host: string): string[] {
  const found = new Set<string>()
  for (const p of s.subtree(host)) for (const c of p.allocations.keys()) found.add(c)
  const rank = (c: string) => {
    const gs = groupsOf(s, c)
    return gs.length === 0 ? 2 : gs[0].soft ? 1 : 0
  }
  return [...found]
    .map((c) => ({c, r: rank(c)}))
    .sort((a, b) => a.r - b.r || (a.c < b.c ? -1 : a.c > b.c ? 1 : 0))
    .map((x) => x.c)
}

/** Amounts as the reasons say them: `VCPU=2,MEMORY_MB=2048`. */
export const amountsText = (a: Record<string, number>) =>
  Object.entries(a)
    .map(([rc, n]) => `${rc}=${n}`)
    .join(',')

/** What a consumer holds in the tree, as the reasons say it. */
export function heldText(from: ProviderAmounts): string {
  const parts = Object.values(from).map(amountsText)
  return parts.length === 1 ? `${parts[0]} on one provider` : `${parts.join(' and ')} on ${parts.length} providers of one host`
}

/** Whether the tree of `root` shares an aggregate with provider `sharing`. */
function associated(s: State, root: string, sharing: string): boolean {
  const aggs = s.providers.get(sharing)?.aggregates
  if (!aggs || aggs.size === 0) return false
  for (const p of s.subtree(root)) for (const a of p.aggregates) if (aggs.has(a)) return true
  return false
}

/**
 * The requests that find a consumer's new place, on the tree of a host that is not disabled (as
 * nova's scheduler asks): what it holds on each provider of its host's tree (`held`, one entry a
 * provider) found again on one provider each (one granular group each, group_policy=isolate); and,
 * when no class is held on two providers, the same amounts as one unsuffixed group, which takes
 * each class from one provider of the tree, so it may fold them onto fewer providers (a NUMA
 * node's and the root's onto a host without NUMA children) or spread them (a host's onto a NUMA
 * node and its root), as nova asks for an instance of one NUMA node. A place either finds will do.
 * Drain and make-room ask them.
 */
export function moveRequests(s: State, held: ReadonlyArray<ReadonlyMap<string, number>>): CandidateRequest[] {
  const request = (groups: RequestGroup[]): CandidateRequest => ({
    groups,
    groupPolicy: groups.length > 1 ? 'isolate' : undefined,
    sameSubtree: [],
    rootRequired: [],
    // Only a trait the cloud knows can be named.
    rootForbidden: new Set(s.traits.has(DISABLED_TRAIT) ? [DISABLED_TRAIT] : []),
    nestedAware: true,
  })
  const group = (suffix: string, resources: Map<string, number>): RequestGroup => ({
    suffix,
    resources,
    requiredTraits: [],
    forbiddenTraits: new Set(),
    memberOf: [],
    forbiddenAggs: new Set(),
  })
  const out = [request(held.map((amounts, i) => group(`_DRAIN${i + 1}`, new Map(amounts))))]
  const all = new Map<string, number>()
  for (const amounts of held) for (const [rc, n] of amounts) all.set(rc, all.has(rc) ? Number.NaN : n)
  if (![...all.values()].some(Number.isNaN)) out.push(request([group('', all)]))
  return out
}

/** The candidates of every request in turn, each place once (the first request's first). */
export function movePlaces(s: State, requests: readonly CandidateRequest[], opts: CandidateOptions = {}): AllocationRequest[] {
  const seen = new Set<string>()
  const out: AllocationRequest[] = []
  for (const r of requests)
    for (const ar of findCandidates(s, r, opts).allocationRequests) {
      const key = [...ar.allocations].map(([rp, a]) => `${rp}:${[...a].join()}`).join(';')
      if (seen.has(key)) continue
      seen.add(key)
      out.push(ar)
    }
  return out
}

/**
 * Where `consumer` would go from `host`, against `s` as it is: a move, or why it cannot. Changes
 * nothing. Throws when the consumer holds nothing in the host's tree.
 */
export function planMove(s: State, host: string, consumer: string, opts: DrainOptions = {}): DrainMove | DrainStuck {
  const drained = requireHost(s, host)
  const c = s.consumers.get(consumer)
  const tree = new Set(s.subtree(drained.uuid).map((p) => p.uuid))
  const held = [...(c?.allocations ?? [])].filter(([rp]) => tree.has(rp))
  if (!c || held.length === 0) throw notFound(`Consumer ${consumer} holds nothing on host ${drained.name}.`)
  const kept = [...c.allocations].filter(([rp]) => !tree.has(rp))
  const keptSharing = kept
    .map(([rp]) => rp)
    .filter((rp) => {
      const p = s.providers.get(rp)
      return p !== undefined && isSharing(p)
    })
  const groups = groupsOf(s, consumer).map((g) => g.name)
  const from = record(held)

  const amounts = held.map(([, a]) => a)
  const places = movePlaces(s, moveRequests(s, amounts), opts.candidates ?? {})

  const here = placementOf(s, [drained.uuid])
  const judged = new Map<string, Breach[]>()
  let withRoom = 0
  let unassociated: string | undefined
  let hardBest: Breach[] | undefined
  let best: {move: DrainMove; score: [number, number]} | undefined
  for (const ar of places) {
    // A move goes to one other host (what it takes from sharing providers is no host's).
    const hosts = hostsOfProviders(s, ar.allocations.keys())
    const root = hosts.length === 1 ? hosts[0] : undefined
    if (root === undefined || root === drained.uuid || s.providers.get(root)?.traits.has(DISABLED_TRAIT)) continue
    withRoom++
    const far = keptSharing.find((rp) => !associated(s, root!, rp))
    if (far !== undefined) {
      unassociated ??= far
      continue
    }
    const allocations = new Map<string, Amounts>(kept.map(([rp, a]) => [rp, new Map(a)]))
    for (const [rp, a] of ar.allocations) {
      const sum = new Map(allocations.get(rp) ?? [])
      for (const [rc, n] of a) sum.set(rc, (sum.get(rc) ?? 0) + n)
      allocations.set(rp, sum)
    }
    // A group's judgement depends only on the hosts: once per host.
    let breaches = judged.get(root)
    if (!breaches) {
      breaches = newBreaches(s, {placements: new Map([[consumer, allocations.keys()]])}, {soft: true})
      judged.set(root, breaches)
    }
    const hard = breaches.filter((b) => !b.soft)
    if (hard.length) {
      // What the place that breaks the least would break, to say why none would do.
      if (!hardBest || hard.length < hardBest.length) hardBest = hard
      continue
    }
    const score: [number, number] = [breaches.length, closeness(placementOf(s, [root]), here)]
    if (best && (best.score[0] < score[0] || (best.score[0] === score[0] && best.score[1] <= score[1]))) continue
    best = {
      score,
      move: {
        consumer,
        project: c.project,
        user: c.user,
        type: c.type,
        generation: c.generation,
        groups,
        from,
        host: root,
        to: record(ar.allocations),
        allocations: record(allocations),
        soft: breaches.map(breachRecord),
      },
    }
    if (score[0] === 0 && score[1] === 0) break // nothing can do better than the engine's next
  }
  if (best) return best.move
  const name = (rp: string) => s.providers.get(rp)?.name ?? rp
  let why: string
  if (withRoom === 0) why = `no other enabled host has room for ${heldText(from)}`
  else if (hardBest) why = `every host with room would break ${breachText(breachRecord(hardBest[0]))}`
  else
    why = `no enabled host with room shares an aggregate with ${name(unassociated!)}, where it keeps ${amountsText(Object.fromEntries(c.allocations.get(unassociated!)!))}`
  return {consumer, groups, from, why}
}

export const isMove = (m: DrainMove | DrainStuck): m is DrainMove => 'host' in m

/** Writes a planned move into `s` (inside a transaction), as the write of the move would. */
export function applyMove(s: State, now: number, move: DrainMove): void {
  const c = s.consumers.get(move.consumer)
  const allocations = new Map(Object.entries(move.allocations).map(([rp, a]) => [rp, new Map(Object.entries(a))]))
  writeAllocations(
    s,
    now,
    [{uuid: move.consumer, allocations, project: move.project, user: move.user, generation: c?.generation ?? null, type: move.type}],
    {checkGeneration: false, ...postAllocationErrors},
  )
  // The candidates index reads usages again at the next version.
  s.version += 1
}

/**
 * Every consumer of `host`'s tree, planned in turn: where each goes, or why it cannot. The
 * moves are written into `s` as planned (give it a copy of the cloud, or a rehearsal).
 */
export function planDrain(s: State, now: number, host: string, opts: DrainOptions = {}): DrainPlan {
  const drained = requireHost(s, host)
  const plan: DrainPlan = {host: drained.uuid, moves: [], stuck: []}
  const own = s.changes === null
  if (own) s.changes = new Changes()
  try {
    for (const consumer of hostConsumers(s, drained.uuid)) {
      const planned = planMove(s, drained.uuid, consumer, opts)
      if (isMove(planned)) {
        plan.moves.push(planned)
        applyMove(s, now, planned)
      } else plan.stuck.push(planned)
    }
  } finally {
    if (own) s.changes = null
  }
  return plan
}
