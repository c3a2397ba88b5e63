/**
 * Depth-first strategy (the default): the groups were searched over the whole cloud; the
 * viable anchors are exhausted one after another, in the first group's order, until the
 * target is reached.
 */
import {AnchorEnum} from '../anchor-enum.js'
import {choicesOf, viableAnchors, type Search} from './search.js'

export function enumerateDepthFirst(s: Search): void {
  const {ix, plan, target, sink} = s
  let e: AnchorEnum | null = null
  for (const a of viableAnchors(plan)) {
    const choices = choicesOf(s, a)
    if (!choices) continue
    if (e) e.reset(a, choices)
    else e = new AnchorEnum(ix, plan, a, choices)
    while (sink.count < target && e.next()) sink.emit(e.cur)
    if (sink.count >= target) {
      e.suspend()
      break
    }
  }
}
