import {describe, expect, it} from 'vitest'
import {SyncChoice, type SyncMethod} from '../../src/store/sync-choice.js'

/** `n` commits alone with each method costing `cost[method]` ms: the methods chosen. */
function run(choice: SyncChoice, n: number, cost: Record<SyncMethod, number>): SyncMethod[] {
  const chosen: SyncMethod[] = []
  for (let i = 0; i < n; i++) {
    const m = choice.forCommitAlone()
    choice.timed(m, cost[m])
    chosen.push(m)
  }
  return chosen
}

describe('the sync of a commit alone', () => {
  it('times both methods first, then takes the cheaper', () => {
    const choice = new SyncChoice()
    const chosen = run(choice, 40, {inline: 0.3, pool: 0.45})
    expect(chosen.slice(0, 8).filter((m) => m === 'inline')).toHaveLength(4)
    expect(chosen.slice(8, 30).every((m) => m === 'inline')).toBe(true)
    expect(choice.figures().inline.ms).toBeCloseTo(0.3)
  })

  it('tries the other now and then, and follows the machine when its costs change', () => {
    const choice = new SyncChoice()
    run(choice, 40, {inline: 0.3, pool: 0.45})
    // The disk's flush grows slow and the pool hides it no better, but the pool got cheaper.
    const chosen = run(choice, 400, {inline: 0.6, pool: 0.35})
    expect(chosen.slice(-50).filter((m) => m === 'pool').length).toBeGreaterThan(45)
    expect(chosen.slice(-50)).toContain('inline') // still probed
  })
})
