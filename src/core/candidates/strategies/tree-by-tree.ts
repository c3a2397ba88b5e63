/**
 * Tree-by-tree strategy: a limited search without sharing providers. The groups were only
 * shelled (groupShell); their per-anchor lists are built tree by tree, in the eager search's
 * anchor order (walkAnchors), and the walk stops once the target is reached.
 */
import {AnchorEnum} from '../anchor-enum.js'
import {anchorLists, walkAnchors} from '../tree-search.js'
import {choicesOf, type Search} from './search.js'

export function enumerateTreeByTree(s: Search): void {
  const {ix, plan, target, sink} = s
  const preps = plan.preps
  let e: AnchorEnum | null = null
  const byGroup: number[][][] = new Array(preps.length)
  walkAnchors(ix, preps[0], s.anchorOk, (a) => {
    for (let gi = 0; gi < preps.length; gi++) {
      const lists = anchorLists(ix, preps[gi], a)
      if (!lists) return false
      byGroup[gi] = lists
    }
    const choices = choicesOf(s, a, byGroup)
    if (!choices) return false
    if (e) e.reset(a, choices)
    else e = new AnchorEnum(ix, plan, a, choices)
    while (sink.count < target && e.next()) sink.emit(e.cur)
    if (sink.count >= target) {
      e.suspend()
      return true
    }
    return false
  })
}
