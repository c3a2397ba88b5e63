/**
 * The heuristic planners, for clouds of any size: each makes its moves on the World, one valid
 * move after another, and says why when it stops short.
 *   room     which hosts of the domain to empty and how far: the fewest moves over the hosts'
 *            eviction curves (the same knapsack as the bound, over the sets the curves found),
 *            each chosen set's pieces then placed (place.ts) off the hosts being emptied, where
 *            the domain loses nothing if it can; a piece with no place is pinned (left out of its
 *            host's curve) and the choice made again. Rounds until K fit (a domain's pool may
 *            count less than the hosts alone promised).
 *   empty    the emptiest hosts first (fewest pieces, then least held), each emptied whole or left
 *            as it was, the next ones kept free of what moves.
 *   drained  every piece of the domain, members of hard groups first, the largest first, placed
 *            off the domain.
 * A piece that finds no place is tried again once the others have moved (a rule may then allow
 * it), then with one move made for it first: a piece of a host it could go to, moved elsewhere.
 */
import {fewestMoves} from './bound.js'
import type {DrainGoal, EmptyGoal, RoomGoal} from './goals.js'
import {bestPlace, isPlace, type PlaceOptions} from './place.js'
import type {Rules} from './rules.js'
import type {Move, Piece, World} from './world.js'

export interface Outcome {
  ok: boolean
  why?: string
}

/** Places `ids` one after another, retrying those that found no place; the first that never does, and why. */
export function placeEach(w: World, rules: Rules, ids: readonly number[], opts: PlaceOptions): {piece: number; why: string} | null {
  let left = [...ids]
  while (left.length) {
    const failed: Array<{piece: number; why: string}> = []
    for (const id of left) {
      const place = bestPlace(w, rules, w.pieces[id], opts)
      if (isPlace(place)) w.apply(place.move)
      else failed.push({piece: id, why: place.why})
    }
    if (failed.length === left.length) {
      // None moved this pass: one move for each in turn, to make it room.
      const made = failed.findIndex((f) => helped(w, rules, w.pieces[f.piece], opts))
      if (made < 0) return failed[0]
      failed.splice(made, 1)
    }
    left = failed.map((f) => f.piece)
  }
  return null
}

/** How many hosts a piece looks at to be made room on, and how many pieces of each it tries to move. */
const HELP_HOSTS = 64
const HELP_PIECES = 4

/** Moves one piece of a host `piece` could go to elsewhere, then `piece` there; whether it could. */
function helped(w: World, rules: Rules, piece: Piece, opts: PlaceOptions): boolean {
  if (!piece.movable) return false
  const hosts: number[] = []
  for (let j = 0; j < w.n && hosts.length < HELP_HOSTS; j++) {
    if (j === piece.host || !w.enabled[j] || opts.avoid?.(j) || !w.reaches(piece, j)) continue
    if (w.candidates(piece, j).start.length > 1) hosts.push(j)
  }
  hosts.sort((a, b) => w.closeness(piece.host, a) - w.closeness(piece.host, b) || a - b)
  for (const j of hosts) {
    const others = [...w.on(j)].filter((id) => w.pieces[id].movable).sort((a, b) => size(w.pieces[b]) - size(w.pieces[a]))
    for (const id of others.slice(0, HELP_PIECES)) {
      const away = bestPlace(w, rules, w.pieces[id], {...opts, avoid: (k) => k === j || k === piece.host || (opts.avoid?.(k) ?? false)})
      if (!isPlace(away)) continue
      w.apply(away.move)
      const here = bestPlace(w, rules, piece, {...opts, only: [j]})
      if (isPlace(here)) {
        w.apply(here.move)
        return true
      }
      w.undo()
    }
  }
  return false
}

/** A piece's size, to place the largest first: its CPUs, then its memory in GB, then the rest (what-if.ts's order). */
export function size(p: Piece): number {
  let cpu = 0
  let mem = 0
  let rest = 0
  for (const a of p.held.amounts)
    for (const [rc, n] of a) {
      if (rc === 'VCPU' || rc === 'PCPU') cpu += n
      else if (rc === 'MEMORY_MB') mem += n
      else rest += n
    }
  return cpu * 1e9 + mem * 1e3 + rest / 1e6
}

/** Hard-group members first, then soft ones', then the largest. */
function placingOrder(w: World, rules: Rules, ids: number[]): number[] {
  const rank = (id: number) => {
    const gs = rules.groups(w.pieces[id].consumer.uuid)
    return gs.length === 0 ? 2 : gs.some((g) => !g.soft) ? 0 : 1
  }
  return ids
    .map((id) => ({id, r: rank(id), s: size(w.pieces[id])}))
    .sort((a, b) => a.r - b.r || b.s - a.s || a.id - b.id)
    .map((x) => x.id)
}

/** How many hosts a round of the room heuristic tries emptying in part before it takes the best it saw. */
const ROOM_TRIES = 8

export function roomHeuristic(w: World, rules: Rules, goal: RoomGoal): Outcome {
  const {fit} = goal
  let why: string | undefined
  for (let round = 0; round < 100000; round++) {
    const now = fit.fit()
    if (now >= goal.count) return {ok: true}
    const hosts = goal.hosts()
    const options = goal.reachOptions(hosts)
    // What the hosts alone promise beyond what the domain counts (a pool they share) is asked on top, where it can be.
    let alone = 0
    for (const i of hosts) alone += fit.hostFit(i)
    let choice = fewestMoves(options, goal.count + Math.max(0, alone - now))
    if (!choice.pick && alone > now) choice = fewestMoves(options, goal.count)
    if (!choice.pick) return {ok: false, why: why ?? 'no choice of hosts to empty in part reaches it'}
    // The hosts the choice empties in part, then the other steps of every host, each by what it gains a move
    // (only the best few are tried: kept in order as they come).
    type Try = {host: number; k: number; x: number; gain: number; rate: number; chosen: number}
    const tries: Try[] = []
    const before = (a: Try, b: Try) => b.chosen - a.chosen || b.rate - a.rate || a.host - b.host
    const planned = new Set<number>()
    hosts.forEach((i, k) => {
      const o = options[k]
      const picked = choice.pick![k]
      if (picked > 0) planned.add(i)
      for (let x = 1; x < o.cost.length; x++) {
        const gain = o.gain[x] - o.gain[0]
        const t: Try = {host: i, k, x, gain, rate: gain / o.cost[x], chosen: x === picked ? 1 : 0}
        if (tries.length === ROOM_TRIES && before(t, tries[ROOM_TRIES - 1]) >= 0) continue
        let at = tries.length
        while (at > 0 && before(t, tries[at - 1]) < 0) at--
        tries.splice(at, 0, t)
        if (tries.length > ROOM_TRIES) tries.pop()
      }
    })
    // The first that gains what its host promised is taken; else the one that gained most a move.
    let kept: {moves: Move[]; rate: number} | undefined
    let taken = false
    let pinned = false
    for (const t of tries) {
      const mark = w.done.length
      const set = goal.curve(t.host, true).sets[options[t.k].cost[t.x]]
      const failed = placeEach(w, rules, placingOrder(w, rules, set), {
        avoid: (j) => j === t.host,
        // Off the domain first: a host of it that takes a piece may be one to empty next (a host the
        // choice empties, most of all); of its hosts, those that lose least.
        penalty: (j, cs, c) => (fit.inDomain[j] ? 1 + 2 * fit.lossIfTaken(j, cs, c) + (planned.has(j) ? 1 : 0) : 0),
      })
      if (failed) {
        while (w.done.length > mark) w.undo()
        goal.pin(t.host, failed.piece)
        why = `consumer ${w.pieces[failed.piece].consumer.uuid} on ${w.name(t.host)}: ${failed.why}`
        pinned = true
        break
      }
      const gained = fit.fit() - now
      if (gained >= t.gain) {
        taken = true
        break
      }
      const made = w.done.slice(mark).map((d) => d.move)
      while (w.done.length > mark) w.undo()
      if (gained > 0 && (!kept || gained / made.length > kept.rate)) kept = {moves: made, rate: gained / made.length}
    }
    if (taken || pinned) continue
    if (!kept) return {ok: false, why: why ?? 'no host of the domain gains from its pieces moving elsewhere'}
    for (const m of kept.moves) w.apply(m)
  }
  return {ok: fit.fit() >= goal.count, why}
}

export function emptyHeuristic(w: World, rules: Rules, goal: EmptyGoal): Outcome {
  const empty = new Set(goal.hosts.filter((i) => w.on(i).size === 0))
  let need = goal.count - empty.size
  if (need <= 0) return {ok: true}
  const held = (i: number) => [...w.on(i)].reduce((sum, id) => sum + size(w.pieces[id]), 0)
  const order = goal.hosts
    .filter((i) => w.on(i).size > 0 && goal.emptiable(i))
    .map((i) => ({i, n: w.on(i).size, held: held(i)}))
    .sort((a, b) => a.n - b.n || a.held - b.held || a.i - b.i)
    .map((x) => x.i)
  let why = order.length < need ? `only ${order.length + empty.size} of the domain's hosts can be emptied` : undefined
  for (let k = 0; k < order.length && need > 0; k++) {
    const h = order[k]
    // The next hosts to empty are kept free of what moves, if there is room elsewhere.
    const next = new Set(order.slice(k + 1, k + 1 + need))
    const mark = w.done.length
    const failed = placeEach(w, rules, placingOrder(w, rules, [...w.on(h)]), {
      avoid: (j) => j === h || empty.has(j),
      penalty: (j) => (next.has(j) ? 1 : 0),
    })
    if (failed) {
      while (w.done.length > mark) w.undo()
      why = `${w.name(h)} cannot be emptied: consumer ${w.pieces[failed.piece].consumer.uuid}: ${failed.why}`
      continue
    }
    empty.add(h)
    need--
  }
  return need <= 0 ? {ok: true} : {ok: false, why}
}

export function drainHeuristic(w: World, rules: Rules, goal: DrainGoal): Outcome {
  const ids = goal.hosts.flatMap((i) => [...w.on(i)])
  const stuck = ids.find((id) => !w.pieces[id].movable)
  if (stuck !== undefined)
    return {
      ok: false,
      why: `consumer ${w.pieces[stuck].consumer.uuid} on ${w.name(w.pieces[stuck].host)} holds what no inventory of its providers has`,
    }
  const failed = placeEach(w, rules, placingOrder(w, rules, ids), {avoid: (j) => goal.inDomain[j] === 1})
  if (!failed) return {ok: true}
  const p = w.pieces[failed.piece]
  return {ok: false, why: `consumer ${p.consumer.uuid} on ${w.name(p.host)}: ${failed.why}`}
}
