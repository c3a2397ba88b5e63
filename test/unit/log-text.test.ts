/** The daemon's log as text on a terminal, JSON elsewhere. */
import {describe, expect, it} from 'vitest'
import {logsAsText, textLine, textSink} from '../../src/daemon/log-text.js'

describe('the log on a terminal', () => {
  it('writes a line as time, level, message and the other fields', () => {
    const line = JSON.stringify({
      level: 30,
      time: '2026-12-02T12:04:05.123Z',
      pid: 7,
      hostname: 'h',
      reqId: 'r1',
      msg: 'request answered',
      ms: 0.4,
    })
    expect(textLine(line)).toBe('12:04:05.123 INFO  request answered reqId=r1 ms=0.4')
    expect(textLine(JSON.stringify({level: 50, time: 0, msg: 'database away', err: {message: 'gone away'}}))).toBe(
      '00:00:00.000 ERROR database away err={"message":"gone away"}',
    )
    expect(textLine('not json')).toBe('not json')
  })

  it('turns each line of a batch, and only where a person reads it', () => {
    const out: string[] = []
    textSink({write: (t: string) => out.push(t)}).write(
      `${JSON.stringify({level: 40, time: 0, msg: 'a'})}\n${JSON.stringify({level: 30, time: 0, msg: 'b'})}\n`,
    )
    expect(out).toEqual(['00:00:00.000 WARN  a\n00:00:00.000 INFO  b\n'])
    const tty = {isTTY: true} as NodeJS.WriteStream
    expect([
      logsAsText(tty, {}),
      logsAsText(tty, {PLACEMAT_LOG_FORMAT: 'json'}),
      logsAsText({isTTY: false} as NodeJS.WriteStream, {}),
    ]).toEqual([true, false, false])
  })
})
