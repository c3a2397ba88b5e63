/**
 * The exact search: the fewest moves, by best-first search over the states moves reach (A*),
 * each state's priority the moves made to reach it plus the goal's lower bound from it (goals.ts),
 * which never overestimates. Every move a piece can make is a branch (every enabled host, every
 * candidate there that fits, no hard rule broken: the moves a plan is made of), a state reached
 * again by as many moves or more is not searched again, and states are taken fewest-possible
 * first: the first state taken that meets the goal is reached by the fewest moves, and a search
 * that runs out of states proves there is no plan. Pieces alike (same host, same holdings, in no
 * group) are one branch. A budget of states reached stops it: the least priority left is then a
 * lower bound of every plan. States are told apart by a 104-bit hash of where every piece is.
 */
import type {Goal} from './goals.js'
import type {Rules} from './rules.js'
import type {Move, World} from './world.js'

export interface SearchOptions {
  /** A lower bound already known. */
  from: number
  /** Only sequences shorter than this (a plan of that many is known); Infinity: any. */
  below: number
  /** States it may reach (each a move made, its bound counted, and kept until taken). */
  nodes: number
  /** No sequence longer than this. */
  maxMoves: number
}

export interface SearchResult {
  /** The fewest moves, when found (the World is left as it was). */
  moves: Move[] | null
  /** Every sequence reaching the goal has at least this many moves (Infinity: none does). */
  lowerBound: number
  /** Whether it finished: found the fewest, or proved none shorter than `below` (or `maxMoves`) exists. */
  complete: boolean
  nodes: number
}

interface Node {
  g: number
  f: number
  move: Move | null
  parent: Node | null
  key: string
}

export function searchFewest(w: World, rules: Rules, goal: Goal, opts: SearchOptions): SearchResult {
  goal.searching?.()
  w.hashing()
  const start = w.done.length
  const limit = Math.min(opts.below - 1, opts.maxMoves)
  const best = new Map<string, number>()
  const open = new Heap()
  /** Takes the World to the state of `node`: back to the start, then its moves. */
  const goTo = (node: Node) => {
    while (w.done.length > start) w.undo()
    const path: Move[] = []
    for (let n: Node | null = node; n?.move; n = n.parent) path.push(n.move)
    for (let k = path.length - 1; k >= 0; k--) w.apply(path[k])
  }
  // Whether a state was left out for the limit (not for its bound being infinite): then plans may exist beyond it.
  let cut = false
  const root: Node = {g: 0, f: Math.max(opts.from, goal.bound()), move: null, parent: null, key: w.stateHash()}
  if (root.f <= limit) {
    open.push(root)
    best.set(root.key, 0)
  } else if (root.f < Infinity) cut = true
  let nodes = 0
  try {
    while (open.size) {
      const node = open.pop()!
      if ((best.get(node.key) ?? Infinity) < node.g) continue
      if (nodes > opts.nodes) return {moves: null, lowerBound: Math.max(opts.from, node.f), complete: false, nodes}
      goTo(node)
      if (goal.met()) {
        const moves: Move[] = []
        for (let n: Node | null = node; n?.move; n = n.parent) moves.push(n.move)
        return {moves: moves.reverse(), lowerBound: node.g, complete: true, nodes}
      }
      if (node.g + 1 > limit) {
        cut = true
        continue
      }
      for (const m of movesFrom(w, rules, goal)) {
        nodes++
        w.apply(m)
        const key = w.stateHash()
        const g = node.g + 1
        if ((best.get(key) ?? Infinity) > g) {
          const f = g + goal.bound()
          if (f <= limit) {
            best.set(key, g)
            open.push({g, f, move: m, parent: node, key})
          } else if (f < Infinity) cut = true
        }
        w.undo()
      }
    }
  } finally {
    while (w.done.length > start) w.undo()
  }
  // Nothing within the limit: every plan is longer, or (nothing left out) there is none at all.
  return {moves: null, lowerBound: cut ? limit + 1 : Infinity, complete: true, nodes}
}

/** Every move the World allows now: pieces on the goal's hosts first; pieces alike once. */
function movesFrom(w: World, rules: Rules, goal: Goal): Move[] {
  const out: Move[] = []
  const order = w
    .all()
    .filter((p) => p.movable)
    .sort((a, b) => goal.inDomain[b.host] - goal.inDomain[a.host] || a.id - b.id)
  const alike = new Set<string>()
  for (const p of order) {
    if (!p.signature.startsWith('#')) {
      if (alike.has(p.signature)) continue
      alike.add(p.signature)
    }
    for (let j = 0; j < w.n; j++) {
      const fitting = w.fitting(p, j)
      if (fitting.length === 0 || rules.judge(p, j).hard.length) continue
      for (const c of fitting) out.push({piece: p.id, from: p.host, to: j, candidate: c})
    }
  }
  return out
}

/** The open states, least priority first; of equal priority, the one with more moves made (nearer the goal). */
class Heap {
  private readonly items: Node[] = []
  get size(): number {
    return this.items.length
  }
  private less(a: Node, b: Node): boolean {
    return a.f < b.f || (a.f === b.f && a.g > b.g)
  }
  push(n: Node): void {
    const a = this.items
    a.push(n)
    let i = a.length - 1
    while (i > 0) {
      const up = (i - 1) >> 1
      if (!this.less(a[i], a[up])) break
      ;[a[i], a[up]] = [a[up], a[i]]
      i = up
    }
  }
  pop(): Node | undefined {
    const a = this.items
    const top = a[0]
    const last = a.pop()
    if (a.length && last) {
      a[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < a.length && this.less(a[l], a[m])) m = l
        if (r < a.length && this.less(a[r], a[m])) m = r
        if (m === i) break
        ;[a[i], a[m]] = [a[m], a[i]]
        i = m
      }
    }
    return top
  }
}
