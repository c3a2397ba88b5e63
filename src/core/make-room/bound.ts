/**
 * The fewest moves over hosts: each host offers options (so many moves for so many instances),
 * one is taken per host, and the instances must add up to what is asked (a multiple-choice
 * knapsack). Solved exactly by dynamic programming over the instances when that is small
 * (hosts x instances x options), else by its linear relaxation: each host's options on their upper
 * hull, the steepest steps first, the last one in part; the relaxation's cost, rounded up, is
 * still a lower bound of the knapsack's, and its steps taken whole are a choice that reaches it.
 */

export interface HostOptions {
  /** (moves, instances) pairs; the host's first is its instances with no move (0, base). */
  cost: number[]
  gain: number[]
}

export interface Choice {
  /** The fewest moves (Infinity: no choice reaches `need`). */
  cost: number
  /** Whether `cost` is the knapsack's own (else its relaxation's, rounded up: a lower bound). */
  exact: boolean
  /** The option taken of each host (a choice reaching `need`; with exact, one costing `cost`). */
  pick: Int32Array | null
}

/** Beyond this many steps (hosts x instances x options), the relaxation. */
const DP_LIMIT = 2e7

export function fewestMoves(hosts: readonly HostOptions[], need: number): Choice {
  // What the hosts hold with no move counts for itself: the knapsack is over what moves add.
  let base = 0
  for (const h of hosts) base += h.gain[0]
  const more = need - base
  if (more <= 0) return {cost: 0, exact: true, pick: new Int32Array(hosts.length)}
  const added = hosts.map((h) => ({cost: h.cost, gain: h.gain.map((g) => g - h.gain[0])}))
  let work = 0
  for (const h of added) work += h.cost.length * (more + 1)
  return work <= DP_LIMIT ? knapsack(added, more) : relaxation(added, more)
}

function knapsack(hosts: readonly HostOptions[], need: number): Choice {
  let dp = new Float64Array(need + 1).fill(Infinity)
  dp[0] = 0
  const picks: Int32Array[] = []
  for (const h of hosts) {
    const next = new Float64Array(need + 1).fill(Infinity)
    const pick = new Int32Array(need + 1).fill(-1)
    // From the most instances down: of choices as cheap, the one the hosts before it made stands (the first hosts first).
    for (let v = need; v >= 0; v--) {
      if (dp[v] === Infinity) continue
      for (let o = 0; o < h.cost.length; o++) {
        const u = Math.min(need, v + h.gain[o])
        const c = dp[v] + h.cost[o]
        if (c < next[u]) {
          next[u] = c
          pick[u] = o * (need + 1) + v
        }
      }
    }
    picks.push(pick)
    dp = next
  }
  if (dp[need] === Infinity) return {cost: Infinity, exact: true, pick: null}
  const chosen = new Int32Array(hosts.length)
  let v = need
  for (let k = hosts.length - 1; k >= 0; k--) {
    const p = picks[k][v]
    chosen[k] = Math.floor(p / (need + 1))
    v = p % (need + 1)
  }
  return {cost: dp[need], exact: true, pick: chosen}
}

function relaxation(hosts: readonly HostOptions[], need: number): Choice {
  // Each host's upper hull: from its base option, the steps of most instances a move.
  const steps: Array<{host: number; option: number; cost: number; gain: number}> = []
  let have = 0
  const chosen = new Int32Array(hosts.length)
  hosts.forEach((h, k) => {
    have += h.gain[0]
    let at = 0
    for (;;) {
      let next = -1
      let slope = 0
      for (let o = 0; o < h.cost.length; o++) {
        if (h.cost[o] <= h.cost[at] || h.gain[o] <= h.gain[at]) continue
        const s = (h.gain[o] - h.gain[at]) / (h.cost[o] - h.cost[at])
        if (s > slope || (s === slope && next >= 0 && h.cost[o] > h.cost[next])) [slope, next] = [s, o]
      }
      if (next < 0) break
      steps.push({host: k, option: next, cost: h.cost[next] - h.cost[at], gain: h.gain[next] - h.gain[at]})
      at = next
    }
  })
  // A host's steps come steepest first along its hull, so taking all steps by slope keeps each host's in order;
  // of steps as steep, the smaller first (the last one taken whole then overshoots least).
  steps.sort((a, b) => b.gain / b.cost - a.gain / a.cost || a.cost - b.cost || a.host - b.host)
  let cost = 0
  let whole = 0
  for (const s of steps) {
    if (have >= need) break
    const part = Math.min(1, (need - have) / s.gain)
    cost += part * s.cost
    whole += s.cost
    have += s.gain
    chosen[s.host] = s.option
  }
  if (have < need) return {cost: Infinity, exact: false, pick: null}
  return {cost: Math.max(Math.ceil(cost - 1e-9), 0), exact: whole === Math.ceil(cost - 1e-9), pick: chosen}
}
