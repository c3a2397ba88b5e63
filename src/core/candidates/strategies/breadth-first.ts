/**
 * Breadth-first strategy (strategy=breadth-first with a candidate cap): the viable anchors
 * take turns, one candidate each, so that the cap samples many trees rather than exhausting
 * the first ones.
 */
import {AnchorEnum} from '../anchor-enum.js'
import {choicesOf, viableAnchors, type Search} from './search.js'

export function enumerateBreadthFirst(s: Search): void {
  const {ix, plan, target, sink} = s
  // Take turns between trees, one candidate each, until the cap is reached.
  let live: AnchorEnum[] = []
  for (const a of viableAnchors(plan)) {
    const choices = choicesOf(s, a)
    if (choices) live.push(new AnchorEnum(ix, plan, a, choices))
  }
  while (live.length && sink.count < target) {
    const next: AnchorEnum[] = []
    for (const e of live) {
      if (sink.count >= target) break
      e.resume()
      if (e.next()) {
        sink.emit(e.cur)
        e.suspend()
        next.push(e)
      }
    }
    live = next
  }
}
