import {describe, expect, it} from 'vitest'
import {mark, P, PHASES, takeTraces, traceEnd, traceStart} from '../../src/store/phase-profile.js'

describe('phase profile', () => {
  it('gives each traced request its phases as durations, in order, and forgets them once read', () => {
    traceStart()
    mark(P['http in'])
    mark(P.parse)
    mark(P.decide)
    traceEnd()
    const {phases, traces} = takeTraces()
    expect(phases).toEqual(PHASES)
    expect(traces).toHaveLength(1)
    const t = traces[0]
    expect(t).toHaveLength(PHASES.length)
    expect(t[P['http in'] - 1]).toBeGreaterThanOrEqual(0)
    expect(t[P.parse - 1]).toBeGreaterThanOrEqual(0)
    // A phase not marked is not seen; the next one seen covers the time since the last mark.
    expect(t[P.validate - 1]).toBeNull()
    expect(t[P.decide - 1]).toBeGreaterThanOrEqual(0)
    expect(t[P['http out'] - 1]).toBeGreaterThanOrEqual(0)
    expect(takeTraces().traces).toEqual([])
  })

  it('drops marks made outside a trace', () => {
    mark(P.decide)
    traceEnd()
    expect(takeTraces().traces).toEqual([])
  })
})
