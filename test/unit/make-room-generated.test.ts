/**
 * make-room (core/make-room) on generated tiny clouds (test/helpers/make-room-clouds.ts: hosts
 * flat or with NUMA children, a shared pool, disabled hosts, placement groups of every policy,
 * hard and soft): every plan replayed move by move against the model written in the helper
 * (what moves and what stays, the new host enabled and reaching the pools kept, every provider
 * within capacity at each step, every hard rule after each move, the goal at the end), and its
 * number of moves equal to the fewest a breadth-first search over move sequences finds; a goal
 * the planner says is impossible is one the search finds no sequence for.
 */
import {describe, expect, it} from 'vitest'
import {planDrainDomain, planFreeHosts, planMakeRoom, type Plan} from '../../src/core/make-room/plan.js'
import {depth} from '../helpers/depth.js'
import {fewestByBfs, Model, tinyCloud, type Allocs, type Holding} from '../helpers/make-room-clouds.js'

/** Holdings the breadth-first search may visit before it gives up on a cloud. */
const BFS_LIMIT = 4000

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
}

/** Holds `plan` to the model and to the search: a replay, and the fewest. */
function check(model: Model, start: Holding, plan: Plan, goal: (h: Holding) => boolean, tally: Tally, what: string): void {
  tally.plans++
  const replayed = replay(model, start, plan)
  if ('why' in replayed) throw new Error(`${what}: ${replayed.why}`)
  if (plan.possible) expect(goal(replayed.end), `${what}: the goal at the end`).toBe(true)
  tally.replays++
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

describe('make-room on generated tiny clouds', () => {
  const clouds = depth(240, 60)
  it(`plans the fewest moves on ${clouds} clouds, each replayed against a model of the cloud`, () => {
    const tally: Record<'room' | 'free' | 'drain', Tally> = {
      room: {plans: 0, equal: 0, beyond: 0, replays: 0, impossible: 0},
      free: {plans: 0, equal: 0, beyond: 0, replays: 0, impossible: 0},
      drain: {plans: 0, equal: 0, beyond: 0, replays: 0, impossible: 0},
    }
    for (let seed = 1; seed <= clouds; seed++) {
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
      check(model, start, room, (h) => model.fit(h, flavor, enabledIn) >= count, tally.room, `seed ${seed} room for ${count}`)

      const empty = (h: Holding) =>
        inDomain.filter((host) => ![...h.values()].some((a) => [...a.keys()].some((rp) => model.rootOf.get(rp) === host))).length
      const free = planFreeHosts(state, {count: empty(start) + 1, domain})
      check(model, start, free, (h) => empty(h) >= empty(start) + 1, tally.free, `seed ${seed} free ${empty(start) + 1}`)

      if (domain?.level === 'rack') {
        const drain = planDrainDomain(state, domain)
        check(model, start, drain, (h) => empty(h) === inDomain.length, tally.drain, `seed ${seed} drain`)
      }
    }
    for (const [goal, t] of Object.entries(tally))
      console.log(
        `make-room ${goal}: ${clouds} clouds, ${t.plans} plans, ${t.replays} replays held, ${t.equal} equal to the fewest the search found (${t.impossible} of them impossible, both said), ${t.beyond} beyond the search's ${BFS_LIMIT} holdings`,
      )
    for (const t of Object.values(tally)) expect(t.replays).toBe(t.plans)
  })
})
