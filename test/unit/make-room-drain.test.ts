/**
 * A rack drained (make-room's planDrainDomain: live migrations off it, one at a time, under the
 * rules the writes check) and the what-if of losing it (headroom/what-if.ts: its consumers placed
 * again as claims would place them, its hosts gone) agree on generated clouds, but where the two
 * models differ, and each difference is named:
 *   - a member of a hard affinity or spread group in the rack: a drain moves members one at a time
 *     and the rack's hosts stay (a spread counts them empty), where the what-if takes all of them
 *     off at once and loses the hosts;
 *   - a consumer of the rack keeping what it holds on a shared pool: a live migration keeps it (the
 *     new host must reach the pool), where the what-if places its disk again, anywhere;
 *   - the plan finds places the what-if's first fit (the largest first, each the first candidate)
 *     does not: the plan, replayed as its writes would be, shows them.
 */
import {describe, expect, it} from 'vitest'
import {whatIf} from '../../src/core/headroom/what-if.js'
import {isSharing} from '../../src/core/host.js'
import {planDrainDomain} from '../../src/core/make-room/plan.js'
import type {State} from '../../src/core/state/state.js'
import {depth} from '../helpers/depth.js'
import {tinyCloud} from '../helpers/make-room-clouds.js'
import {plannerCloud, plannerState} from '../helpers/planner-cloud.js'

/** Why a drain of `rack` may fail where the what-if of its loss survives; null when nothing in the models differs. */
function differs(s: State, rack: string): string | null {
  const hosts = [...s.providers.values()].filter(
    (p) => p.parent === null && [...p.aggregates].some((a) => s.topology.get(a)?.name === rack),
  )
  const trees = new Set(hosts.flatMap((h) => s.subtree(h.uuid).map((p) => p.uuid)))
  const consumers = [...s.consumers.values()].filter((c) => [...c.allocations.keys()].some((rp) => trees.has(rp)))
  for (const g of s.groups.values())
    if (!g.soft && (g.policy === 'affinity' || g.policy === 'spread') && consumers.some((c) => g.members.has(c.uuid)))
      return `a member of hard ${g.policy} group ${g.name}`
  if (consumers.some((c) => [...c.allocations.keys()].some((rp) => isSharing(s.providers.get(rp)!))))
    return 'a consumer keeping a pool allocation'
  return null
}

describe('a rack drained, and the what-if of its loss', () => {
  const clouds = depth(300, 100)
  it(`agree on ${clouds} generated clouds and the planner's cloud, but where their models differ`, () => {
    const tally = new Map<string, number>()
    const count = (k: string) => tally.set(k, (tally.get(k) ?? 0) + 1)
    const check = (s: State, rack: string, what: string) => {
      const plan = planDrainDomain(s, {level: 'rack', name: rack})
      const survives = whatIf(s, {without: [{level: 'rack', name: rack}]}).survives
      if (plan.possible === survives) return count(survives ? 'both possible' : 'both impossible')
      if (plan.possible) return count('planned where the what-if fails')
      const why = differs(s, rack)
      expect(why, `${what} ${rack}: the drain says ${plan.why}, the what-if survives`).not.toBeNull()
      count(`impossible to drain, survived: ${why!.replace(/ g\d$/, '')}`)
    }
    for (let seed = 1; seed <= clouds; seed++) {
      const {state} = tinyCloud(seed)
      for (const n of state.topology.values()) if (n.level === 'rack') check(state, n.name, `seed ${seed}`)
    }
    const planner = plannerState(plannerCloud())
    for (const n of planner.topology.values()) if (n.level === 'rack') check(planner, n.name, "the planner's cloud")
    console.log(
      `drain vs what-if, every rack: ${[...tally]
        .sort()
        .map(([k, n]) => `${k}: ${n}`)
        .join('; ')}`,
    )
  })
})
