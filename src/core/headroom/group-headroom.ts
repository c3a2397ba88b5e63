/**
 * How many more members of a placement group fit in a domain while its rule holds, from what each
 * domain of the group's level (its L-domains) can hold of the flavor:
 *   anti-affinity  the L-domains with no member that can hold one
 *   max-per N      the sum over L-domains of min(N - members there, what it holds)
 *   affinity       what the members' L-domain holds (the largest L-domain's when none is placed)
 *   spread S       the most that keeps every L-domain of the level that has a host (Kubernetes'
 *                  maxSkew) within S of the emptiest: with t the highest count the emptiest can
 *                  reach, the sum over L-domains of min(what it holds, t + S - members there)
 * A host in no domain of the group's level takes no member (it would be outside the topology).
 */
import {membersByDomain, stateLocator, type Group} from '../groups.js'
import {consumerHosts} from '../host.js'
import type {State} from '../state/state.js'

/** What the L-domains that meet a domain can hold of the flavor (host uuid -> its fit in the domain). */
export function groupFit(s: State, g: Group, fits: ReadonlyMap<string, number>): number {
  const loc = stateLocator(s)
  const {inDomain, domainsOfMember} = membersByDomain(g, (m) => consumerHosts(s, m), loc)
  const members = (d: string) => inDomain.get(d)?.length ?? 0
  // What each L-domain meeting the domain holds.
  const holds = new Map<string, number>()
  for (const [host, fit] of fits) {
    const at = loc.domainsOf(host, g.level)
    if (at.length === 0) continue
    holds.set(at[0], (holds.get(at[0]) ?? 0) + fit)
  }
  let total = 0
  switch (g.policy) {
    case 'anti-affinity':
      for (const [d, n] of holds) if (members(d) === 0 && n >= 1) total++
      return total
    case 'max-per':
      for (const [d, n] of holds) total += Math.min(Math.max(0, (g.maxPer ?? 0) - members(d)), n)
      return total
    case 'affinity': {
      const placed = new Set<string>()
      for (const ds of domainsOfMember.values()) for (const d of ds) placed.add(d)
      if (placed.size > 1) return 0 // broken already: no new member can keep it
      if (placed.size === 1) return holds.get([...placed][0]) ?? 0
      return Math.max(0, ...holds.values())
    }
    case 'spread': {
      const skew = g.maxSkew ?? 0
      // The emptiest count reachable: domains the new members cannot reach keep theirs.
      let t = Infinity
      let fullest = 0
      for (const d of loc.domains(g.level)) {
        const m = members(d)
        fullest = Math.max(fullest, m)
        t = Math.min(t, holds.has(d) ? m + holds.get(d)! : m)
      }
      if (t === Infinity || fullest > t + skew) return 0
      for (const [d, n] of holds) total += Math.min(n, Math.max(0, t + skew - members(d)))
      return total
    }
  }
}
