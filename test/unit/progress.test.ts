/** The progress bar of one unmeasurable step (an apply in one transaction) moves; it never sits at 0%. */
import {describe, expect, it} from 'vitest'
import {blockAt, isIndeterminate, plainProgress, startProgress} from '../../src/cli/components/Progress.js'

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

describe('progress on a terminal with no width', () => {
  it('writes plain lines, one a second at most, and the last, never a cursor movement', () => {
    let t = 0
    const out: string[] = []
    const stream = {columns: 0, write: (x: string) => out.push(x)} as unknown as NodeJS.WriteStream
    const bar = plainProgress(stream, () => t)
    for (let done = 0; done <= 100; done++) {
      t = done * 50 // 5 s in all
      bar.update(done, 100, 'applying')
    }
    bar.stop()
    expect(out.length).toBeLessThanOrEqual(7)
    expect(out[0]).toBe('  0% applying 0.0s\n')
    expect(out.at(-1)).toBe('100% applying 5.0s\n')
    expect(out.join('')).not.toMatch(/\x1b/)
  })

  it('is what startProgress draws where the terminal says it has 0 columns', () => {
    const out: string[] = []
    const stream = {columns: 0, write: (x: string) => out.push(x)} as unknown as NodeJS.WriteStream
    const bar = startProgress(stream)
    bar.update(1, 2, 'half')
    bar.stop()
    expect(out).toEqual([expect.stringMatching(/^ 50% half \d+\.\ds\n$/)])
  })
})
