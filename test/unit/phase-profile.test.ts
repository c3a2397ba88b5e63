import {afterEach, describe, expect, it, vi} from 'vitest'
import {mark, P, PHASES, takeTraces, traceEnd, traceStart} from '../../src/store/phase-profile.js'

afterEach(() => vi.useRealTimers())

describe('phase profile', () => {
  it('gives each traced request its phases as durations, in order, and forgets them once read', () => {
    vi.useFakeTimers({toFake: ['performance']})
    const after = (ms: number) => vi.advanceTimersByTime(ms)
    traceStart()
    after(2)
    mark(P['http in'])
    after(3)
    mark(P.parse)
    after(5) // validate and to write are not marked: decide's time covers them
    mark(P.decide)
    after(1)
    traceEnd()
    const {phases, traces} = takeTraces()
    expect(phases).toEqual(PHASES)
    expect(traces).toHaveLength(1)
    const expected: (number | null)[] = PHASES.map(() => null)
    expected[P['http in'] - 1] = 2
    expected[P.parse - 1] = 3
    expected[P.decide - 1] = 5
    expected[P['http out'] - 1] = 1
    expect(traces[0]).toEqual(expected)
    expect(takeTraces().traces).toEqual([])
  })

  it('drops marks made outside a trace', () => {
    mark(P.decide)
    traceEnd()
    expect(takeTraces().traces).toEqual([])
  })

  it('keeps the statements each trace ran, with copies of their parameters and their times, only when asked to', async () => {
    const load = async (value: string) => {
      vi.stubEnv('PLACEMAT_PROFILE', value)
      vi.resetModules()
      return import('../../src/store/phase-profile.js')
    }
    const run = (p: Awaited<ReturnType<typeof load>>) => {
      p.ranStatement('begin immediate', [], 0.01) // outside a trace: dropped
      p.traceStart()
      const params: unknown[] = ['c1', 2]
      p.ranStatement('insert into t values (?, ?)', params, 0.02)
      params.push('changed after')
      p.ranStatement('commit', [], 0.07)
      p.traceEnd()
      p.traceStart()
      p.traceEnd()
      return p.takeTraces()
    }
    try {
      const kept = await load('statements')
      const {traces, statements} = run(kept)
      expect(traces).toHaveLength(2)
      expect(statements).toEqual([
        [
          ['insert into t values (?, ?)', ['c1', 2], 0.02],
          ['commit', [], 0.07],
        ],
        [],
      ])
      expect(kept.takeTraces().statements).toEqual([])
      // Phases only: the parameters (request data) are never kept.
      expect(run(await load('1')).statements).toEqual([[], []])
    } finally {
      vi.unstubAllEnvs()
      vi.resetModules()
    }
  })
})
