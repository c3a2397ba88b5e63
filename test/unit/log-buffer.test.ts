import {afterEach, describe, expect, it, vi} from 'vitest'
import {LogBuffer} from '../../src/daemon/log-buffer.js'

const line = (level: number, msg: string) => `{"level":${level},"time":"2026-11-27T00:00:00.000Z","msg":"${msg}"}\n`

describe('the daemon log buffer', () => {
  afterEach(() => vi.useRealTimers())

  it('writes routine lines together, once a moment has passed', () => {
    vi.useFakeTimers()
    const writes: string[] = []
    const buffer = new LogBuffer({write: (t: string) => writes.push(t)})
    buffer.write(line(30, 'a'))
    buffer.write(line(20, 'b'))
    buffer.write(line(10, 'c'))
    expect(writes).toEqual([])
    vi.advanceTimersByTime(100)
    expect(writes).toEqual([line(30, 'a') + line(20, 'b') + line(10, 'c')])
  })

  it('writes a warning or worse at once, with what waited before it, in order', () => {
    vi.useFakeTimers()
    const writes: string[] = []
    const buffer = new LogBuffer({write: (t: string) => writes.push(t)})
    buffer.write(line(30, 'a'))
    buffer.write(line(40, 'warn'))
    expect(writes).toEqual([line(30, 'a') + line(40, 'warn')])
    buffer.write(line(50, 'error'))
    buffer.write(line(60, 'fatal'))
    expect(writes.slice(1)).toEqual([line(50, 'error'), line(60, 'fatal')])
    vi.advanceTimersByTime(1000)
    expect(writes).toHaveLength(3)
  })

  it('does not let a busy moment grow without bound, and flush() empties it', () => {
    const writes: string[] = []
    const buffer = new LogBuffer({write: (t: string) => writes.push(t)})
    for (let i = 0; i < 400; i++) buffer.write(line(30, `request ${i}`))
    expect(writes.length).toBeGreaterThan(0)
    expect(writes.every((w) => w.length < 17 * 1024)).toBe(true)
    buffer.flush()
    const all = writes.join('')
    expect(all.split('\n').filter(Boolean)).toHaveLength(400)
    expect(all.endsWith(line(30, 'request 399'))).toBe(true)
    buffer.flush()
    expect(writes.join('')).toBe(all)
  })

  it('writes a line it cannot read the level of at once', () => {
    const writes: string[] = []
    const buffer = new LogBuffer({write: (t: string) => writes.push(t)})
    buffer.write('not json\n')
    expect(writes).toEqual(['not json\n'])
  })
})
