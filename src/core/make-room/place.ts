/**
 * Where one piece goes, chosen as drain.ts chooses (planMove): of the places a move may take
 * (world.ts fitting: an enabled host, room now, what it keeps on sharing providers reached), those
 * whose move breaks no hard rule (rules.ts); of them, the one breaking the fewest soft rules, then
 * the nearest to where it is (same rack, row, room), then the engine's order. A goal may put a
 * cost before all that (what a host of the domain would lose: place it elsewhere first) and keep
 * hosts out. Or why no place will do, in drain's words.
 */
import {amountsText, heldText, type ProviderAmounts} from '../drain.js'
import {breachRecord, breachText, type Breach} from '../groups.js'
import type {ShapeCandidates} from '../headroom/tree-shapes.js'
import type {Rules} from './rules.js'
import type {Move, Piece, World} from './world.js'

export interface PlaceOptions {
  /** Hosts the piece may not go to. */
  avoid?: (j: number) => boolean
  /** A cost ranked before the rules' (0 for a place that costs the goal nothing). */
  penalty?: (j: number, cs: ShapeCandidates, c: number) => number
  /** Only these hosts. */
  only?: readonly number[]
}

export interface Place {
  move: Move
  soft: number
  penalty: number
}

export const isPlace = (p: Place | {why: string}): p is Place => 'move' in p

export function bestPlace(w: World, rules: Rules, piece: Piece, opts: PlaceOptions = {}): Place | {why: string} {
  let best: Place | undefined
  let bestNear = 0
  let withRoom = 0
  let hardBest: Breach[] | undefined
  let unassociated: string | undefined
  // The nearest first: once a place costs nothing and breaks no soft rule, none farther can do better.
  const hosts = opts.only ?? w.nearest(piece.host)
  for (const j of hosts) {
    if (j === piece.host || !w.enabled[j] || opts.avoid?.(j) || !piece.movable) continue
    const cs = w.candidates(piece, j)
    let room = -1
    for (let c = 0; c + 1 < cs.start.length; c++)
      if (w.fits(cs, c, j)) {
        room = c
        break
      }
    if (room < 0) continue
    withRoom++
    if (!w.reaches(piece, j)) {
      unassociated ??= piece.keeps.find((p) => !reachesOne(w, j, p))
      continue
    }
    const judged = rules.judge(piece, j)
    if (judged.hard.length) {
      if (!hardBest || judged.hard.length < hardBest.length) hardBest = judged.hard
      continue
    }
    const near = w.closeness(piece.host, j)
    for (let c = room; c + 1 < cs.start.length; c++) {
      if (!w.fits(cs, c, j)) continue
      const penalty = opts.penalty?.(j, cs, c) ?? 0
      if (best && !better(penalty, judged.soft.length, near, best, bestNear)) continue
      best = {move: {piece: piece.id, from: piece.host, to: j, candidate: c}, soft: judged.soft.length, penalty}
      bestNear = near
      if (!opts.penalty) break
    }
    if (best && best.penalty === 0 && best.soft === 0) break
  }
  if (best) return best
  if (withRoom === 0) return {why: `no other enabled host${opts.avoid ? ' it may go to' : ''} has room for ${heldText(heldOf(w, piece))}`}
  if (hardBest) return {why: `every host with room would break ${breachText(breachRecord(hardBest[0]))}`}
  const pool = w.s.providers.get(unassociated!)
  const kept = piece.consumer.allocations.get(unassociated!)
  return {
    why: `no enabled host with room shares an aggregate with ${pool?.name ?? unassociated}${kept ? `, where it keeps ${amountsText(Object.fromEntries(kept))}` : ''}`,
  }
}

const better = (penalty: number, soft: number, near: number, best: Place, bestNear: number): boolean =>
  penalty !== best.penalty ? penalty < best.penalty : soft !== best.soft ? soft < best.soft : near < bestNear

function reachesOne(w: World, j: number, pool: string): boolean {
  const {treeSize} = w.forest.shapes[w.forest.shapeOf[j]]
  for (let k = w.forest.memberAt[j] + treeSize; k < w.forest.memberAt[j + 1]; k++) if (w.forest.members[k].uuid === pool) return true
  return false
}

/** What a piece holds, provider by provider (uuids), as a drain plan names it. */
export function heldOf(w: World, piece: Piece): ProviderAmounts {
  const base = w.forest.memberAt[piece.host]
  const out: ProviderAmounts = {}
  piece.held.members.forEach((m, k) => {
    out[w.forest.members[base + m].uuid] = Object.fromEntries(piece.held.amounts[k])
  })
  return out
}
