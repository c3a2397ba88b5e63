/**
 * Moves drawn as arrows from host to host: where a what-if's displaced consumers would go, and the
 * hook for a make-room plan. A plan of moves of any origin is turned into `Move`s (one arrow per
 * pair of hosts, with how many consumers take it) and render.ts draws them; a make-room plan, once
 * the daemon answers one, is one more `MoveSource`. Pure.
 */
import type {Displaced} from '../core/headroom/what-if.js'

/** An arrow: `count` consumers going from one host to another. */
export interface Move {
  from: string
  to: string
  count: number
}

/** Anything that says which consumer goes from which host to which: a what-if's displaced, a make-room plan. */
export interface PlannedMove {
  consumer: string
  from: string
  to: string
}

/** Where the arrows of a view come from: given the values the page holds, the moves to draw. */
export type MoveSource = () => PlannedMove[]

/** The moves of a what-if: each displaced consumer placed again, from its first host to the first host it goes to. */
export function displacedMoves(displaced: readonly Displaced[], hosts: ReadonlySet<string>): PlannedMove[] {
  const out: PlannedMove[] = []
  for (const d of displaced) {
    const from = d.from.find((h) => hosts.has(h))
    const to = d.to?.find((h) => hosts.has(h))
    if (from && to) out.push({consumer: d.consumer, from, to})
  }
  return out
}

/** One arrow per pair of hosts, most taken first, at most `most` of them. */
export function arrows(moves: readonly PlannedMove[], most = 300): {arrows: Move[]; left: number} {
  const by = new Map<string, Move>()
  for (const m of moves) {
    const key = `${m.from}\n${m.to}`
    const a = by.get(key)
    if (a) a.count++
    else by.set(key, {from: m.from, to: m.to, count: 1})
  }
  const all = [...by.values()].sort((a, b) => b.count - a.count || (a.from < b.from ? -1 : a.from > b.from ? 1 : a.to < b.to ? -1 : 1))
  return {arrows: all.slice(0, most), left: Math.max(0, all.length - most)}
}
