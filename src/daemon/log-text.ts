/**
 * The daemon's log as a person reads it on a terminal: a foreground daemon whose stdout is one
 * writes `12:04:05.123 INFO  request answered method=GET url=/ status=200 ms=0.4` instead of
 * pino's JSON lines (PLACEMAT_LOG_FORMAT=json keeps JSON; a file or a pipe always gets JSON).
 */
import type {LogSink} from './log-buffer.js'

const NAMES: Record<number, string> = {10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL'}
/** What every line has, and is said otherwise (or not at all) on a terminal. */
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg'])

/** One JSON log line as text; a line that is not JSON as it was. */
export function textLine(line: string): string {
  let o: Record<string, unknown>
  try {
    o = JSON.parse(line)
  } catch {
    return line
  }
  const time =
    typeof o.time === 'string' ? o.time.slice(11, 23) : typeof o.time === 'number' ? new Date(o.time).toISOString().slice(11, 23) : ''
  const level = NAMES[o.level as number] ?? String(o.level)
  const fields = Object.entries(o)
    .filter(([k, v]) => !OMITTED.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
  return [time, level, o.msg ?? '', ...fields].join(' ').replace(/\s+$/, '')
}

/** A sink that writes each JSON line of what it is given as text to `out`. */
export function textSink(out: LogSink): LogSink {
  return {
    write: (text: string) =>
      out.write(
        text
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => `${textLine(l)}\n`)
          .join(''),
      ),
  }
}

/** Whether the daemon's log goes to a person: its stdout a terminal, JSON not asked for. */
export const logsAsText = (stdout: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean =>
  Boolean(stdout.isTTY) && env.PLACEMAT_LOG_FORMAT !== 'json'
