/**
 * make-room (core/make-room) on generated tiny clouds (test/helpers/make-room-clouds.ts: hosts
 * flat or with NUMA children, a shared pool, disabled hosts, placement groups of every policy,
 * hard and soft): every plan replayed move by move against the model written in the helper
 * (what moves and what stays, the new host enabled and reaching the pools kept, every provider
 * within capacity at each step, every hard rule after each move, the goal at the end), and its
 * number of moves equal to the fewest a breadth-first search over move sequences finds; a goal
 * the planner says is impossible is one the search finds no sequence for.
 */
import {afterAll, describe, expect, it} from 'vitest'
import {planDrainDomain, planFreeHosts, planMakeRoom, type Plan} from '../../src/core/make-room/plan.js'
import {depth} from '../helpers/depth.js'
import {fewestByBfs, Model, tinyCloud, type Allocs, type Holding} from '../helpers/make-room-clouds.js'

/** Holdings the breadth-first search may visit before it gives up on a cloud. */
const BFS_LIMIT = 10000

const sumByClass = (a: Record<string, Record<string, number>>): string => {
  const out = new Map<string, number>()
  for (const x of Object.values(a)) for (const [rc, n] of Object.entries(x)) out.set(rc, (out.get(rc) ?? 0) + n)
  return [...out].sort().join()
}

/** Replays `plan` on the model from `start`: the holding after it, or why a move would not be made. */
function replay(model: Model, start: Holding, plan: Plan): {end: Holding} | {why: string} {
  let h = start
  for (const [k, m] of plan.moves.entries()) {
    const at = `move ${k + 1}`
    const before = h.get(m.consumer)
    if (!before) return {why: `${at}: no such consumer`}
    const held = [...before].filter(([rp]) => !model.sharing.has(rp) && model.rootOf.get(rp) === m.fromHost)
    if (held.length === 0) return {why: `${at}: the consumer holds nothing on the host it leaves`}
    if (JSON.stringify(Object.fromEntries(held.map(([rp, a]) => [rp, Object.fromEntries(a)]))) !== JSON.stringify(m.from))
      return {why: `${at}: what it takes is not what it holds there`}
    if (!model.enabled.has(m.host) || m.host === m.fromHost) return {why: `${at}: not to another enabled host`}
    if (sumByClass(m.from) !== sumByClass(m.to)) return {why: `${at}: it does not take what it held`}
    const after: Allocs = new Map(Object.entries(m.allocations).map(([rp, a]) => [rp, new Map(Object.entries(a))]))
    for (const rp of after.keys())
      if (!model.sharing.has(rp) && model.rootOf.get(rp) !== m.host && !(before.has(rp) && model.rootOf.get(rp) !== m.fromHost))
        return {why: `${at}: it lands outside the new host`}
    for (const [rp, a] of before) {
      if (!model.sharing.has(rp)) continue
      for (const [rc, n] of a) if ((after.get(rp)?.get(rc) ?? 0) < n) return {why: `${at}: what it holds on a pool does not stay`}
    }
    h = new Map(h).set(m.consumer, after)
    if (!model.withinCapacity(h)) return {why: `${at}: a provider is overfilled`}
    if (!model.rulesHold(h)) return {why: `${at}: a hard rule is broken`}
  }
  return {end: h}
}

interface Tally {
  plans: number
  equal: number
  beyond: number
  replays: number
  impossible: number
  /** Possible plans by their number of moves. */
  lengths: Map<number, number>
  /** Plans by how they are known to be the fewest (the bound, the search, or not known: the heuristic's). */
  proofs: Map<string, number>
}

/**
 * Holds `plan` to the model and to the search: a replay, and the fewest. `never`: the model's own
 * reason the goal cannot be met (then no search is needed to say so).
 */
function check(model: Model, start: Holding, plan: Plan, goal: (h: Holding) => boolean, tally: Tally, what: string, never = false): void {
  tally.plans++
  if (plan.possible) tally.lengths.set(plan.moves.length, (tally.lengths.get(plan.moves.length) ?? 0) + 1)
  const proof = `${plan.possible ? 'plan' : 'none'} ${plan.proof ?? 'unproved'}`
  tally.proofs.set(proof, (tally.proofs.get(proof) ?? 0) + 1)
  const replayed = replay(model, start, plan)
  if ('why' in replayed) throw new Error(`${what}: ${replayed.why}`)
  if (plan.possible) expect(goal(replayed.end), `${what}: the goal at the end`).toBe(true)
  tally.replays++
  if (never) {
    expect(plan.possible, `${what}: the model says it cannot be`).toBe(false)
    tally.impossible++
    tally.equal++
    return
  }
  const fewest = fewestByBfs(model, start, goal, BFS_LIMIT)
  if (fewest === null) {
    tally.beyond++
    return
  }
  if (fewest === Infinity) {
    expect(plan.possible, `${what}: the search finds no sequence`).toBe(false)
    tally.impossible++
  } else {
    expect(plan.possible, `${what}: the search finds ${fewest} moves (${plan.why})`).toBe(true)
    expect(plan.moves.length, `${what}: the fewest moves`).toBe(fewest)
  }
  if (plan.possible && plan.proof === null) expect(plan.lowerBound).toBeLessThanOrEqual(plan.moves.length)
  tally.equal++
}

/** One cloud's three goals, each held to the model and the search. */
function cloudGoals(seed: number, tally: Record<Goal, Tally>): void {
  const {state, flavor, domain} = tinyCloud(seed)
  const model = new Model(state)
  const start = model.holding()
  const inDomain = model.hosts.filter((h) => {
    if (!domain) return true
    const p = state.providers.get(h)!
    return domain.level === 'host'
      ? p.name === domain.name
      : model.rackOf.get(h) === [...state.topology.values()].find((n) => n.name === domain.name)?.uuid
  })
  const enabledIn = new Set(inDomain.filter((h) => model.enabled.has(h)))
  const now = model.fit(start, flavor, enabledIn)
  const count = now + 1 + (seed % 4 === 0 ? 1 : 0)
  const room = planMakeRoom(state, {flavor, count, domain})
  expect(room.fitBefore, `seed ${seed}: the count before`).toBe(now)
  // Even with every consumer of the domain's hosts gone, fewer fit: no moves can do it.
  const gone = new Map([...start].filter(([c]) => !model.hostsOf(start, c).some((h) => inDomain.includes(h))))
  const never = model.fit(gone, flavor, enabledIn) < count
  check(model, start, room, (h) => model.fit(h, flavor, enabledIn) >= count, tally.room, `seed ${seed} room for ${count}`, never)

  const empty = (h: Holding) =>
    inDomain.filter((host) => ![...h.values()].some((a) => [...a.keys()].some((rp) => model.rootOf.get(rp) === host))).length
  const free = planFreeHosts(state, {count: empty(start) + 1, domain})
  check(model, start, free, (h) => empty(h) >= empty(start) + 1, tally.free, `seed ${seed} free ${empty(start) + 1}`)

  if (domain?.level === 'rack') {
    const drain = planDrainDomain(state, domain)
    check(model, start, drain, (h) => empty(h) === inDomain.length, tally.drain, `seed ${seed} drain`)
  }
}

type Goal = 'room' | 'free' | 'drain'
const newTally = (): Tally => ({plans: 0, equal: 0, beyond: 0, replays: 0, impossible: 0, lengths: new Map(), proofs: new Map()})

describe('make-room on generated tiny clouds', () => {
  // The default run a quick pass (about 4 s); CI's full depth every cloud.
  const clouds = depth(240, 24)
  const BATCH = Math.min(60, clouds)
  const tally: Record<Goal, Tally> = {room: newTally(), free: newTally(), drain: newTally()}
  for (let from = 1; from <= clouds; from += BATCH)
    it(`plans the fewest moves on clouds ${from} to ${from + BATCH - 1}, each replayed against a model of the cloud`, () => {
      for (let seed = from; seed < from + BATCH; seed++) cloudGoals(seed, tally)
    })

  afterAll(() => {
    const list = (m: Map<string | number, number>) =>
      [...m]
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')
    for (const [goal, t] of Object.entries(tally))
      console.log(
        `make-room ${goal}: ${clouds} clouds, ${t.plans} plans, ${t.replays} replays held, ${t.equal} equal to the fewest (${t.impossible} of them impossible, as the planner said), ${t.beyond} beyond the search's ${BFS_LIMIT} holdings; plans by moves {${list(t.lengths)}}; proved by {${list(t.proofs)}}`,
      )
  })
})
