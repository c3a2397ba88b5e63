/** The progress bar of one unmeasurable step (an apply in one transaction) moves; it never sits at 0%. */
import {describe, expect, it} from 'vitest'
import {blockAt, isIndeterminate} from '../../src/cli/components/Progress.js'

describe('progress of one transaction', () => {
  it('is indeterminate while the one step runs, measured otherwise', () => {
    expect(isIndeterminate(0, 1)).toBe(true)
    expect(isIndeterminate(1, 1)).toBe(false)
    expect(isIndeterminate(3, 10)).toBe(false)
  })
  it('moves its block back and forth within the bar', () => {
    const at = Array.from({length: 80}, (_, t) => blockAt(t, 40, 6))
    expect(new Set(at).size).toBe(35)
    expect(Math.min(...at)).toBe(0)
    expect(Math.max(...at)).toBe(34)
    expect(at.slice(0, 3)).toEqual([0, 1, 2])
    expect(at[35]).toBe(33)
  })
})
