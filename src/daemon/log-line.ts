/**
 * One line in the daemon's log format (pino's: the level's number, an ISO 8601 time, pid,
 * hostname, msg), for what a detached daemon says outside its logger: its stdout and stderr are
 * its log file, and every line there is a JSON line.
 */
import os from 'node:os'

const LEVELS = {info: 30, warn: 40, error: 50, fatal: 60} as const
export type LineLevel = keyof typeof LEVELS

/** The serialized line, newline included. */
export function logLine(level: LineLevel, msg: string, fields: Record<string, unknown> = {}): string {
  return (
    JSON.stringify({level: LEVELS[level], time: new Date().toISOString(), pid: process.pid, hostname: os.hostname(), ...fields, msg}) + '\n'
  )
}

/**
 * The message of the last line at error or worse in `text` (lines of a log): what a daemon that
 * exited said last of why. A line that is not JSON (a log from before every line was) counts as
 * an error line, without its "placemat: ".
 */
export function lastErrorOf(text: string): string | undefined {
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  for (let i = lines.length - 1; i >= 0; i--) {
    let line: {level?: unknown; msg?: unknown} | undefined
    try {
      line = JSON.parse(lines[i]) as {level?: unknown; msg?: unknown}
    } catch {
      return lines[i].replace(/^placemat: /, '')
    }
    if (typeof line?.level === 'number' && line.level >= LEVELS.error && typeof line.msg === 'string') return line.msg
  }
  return undefined
}
