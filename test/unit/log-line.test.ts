/** The daemon's own lines in its log's format, and the last error line a failed start left. */
import {describe, expect, it} from 'vitest'
import {lastErrorOf, logLine} from '../../src/daemon/log-line.js'

describe('log lines', () => {
  it("is one JSON line in pino's format", () => {
    const line = logLine('warn', 'a "quoted" word', {event: 'x'})
    expect(line.endsWith('\n')).toBe(true)
    expect(line.slice(0, -1)).not.toContain('\n')
    expect(JSON.parse(line)).toMatchObject({level: 40, pid: process.pid, event: 'x', msg: 'a "quoted" word'})
    expect(JSON.parse(line).time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  it('finds the last line at error or worse, and reads a plain line as one', () => {
    const text = [
      logLine('info', 'listening'),
      logLine('error', 'first'),
      logLine('fatal', 'why it stopped'),
      logLine('info', 'after'),
    ].join('')
    expect(lastErrorOf(text)).toBe('why it stopped')
    expect(lastErrorOf(logLine('info', 'fine'))).toBeUndefined()
    expect(lastErrorOf(`${logLine('info', 'fine')}placemat: plain words\n`)).toBe('plain words')
    expect(lastErrorOf('')).toBeUndefined()
  })
})
