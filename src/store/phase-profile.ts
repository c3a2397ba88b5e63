/**
 * Where one write request's time goes, phase by phase, for the benchmark (`npm run bench --
 * --claim-profile`). Only with PLACEMAT_PROFILE=1 (or =statements) in the daemon's environment:
 * PROFILING is read once at load, and every mark is behind `if (PROFILING)`, so without it nothing
 * is measured.
 *
 * One request is traced at a time (the benchmark claims one after another): the one that
 * `traceStart` began; each mark is the end of the phase it names. Marks outside a trace are
 * dropped. The traces are read (and cleared) with `takeTraces`.
 */
export const PROFILING = process.env.PLACEMAT_PROFILE === '1' || process.env.PLACEMAT_PROFILE === 'statements'
/**
 * PLACEMAT_PROFILE=statements: each trace also keeps the statements it ran with their parameters
 * (consumers', projects' and providers' ids: request data, which the unauthenticated profile
 * answer then holds, so never by default).
 */
const KEEP_STATEMENTS = process.env.PLACEMAT_PROFILE === 'statements'

/** The phases, in order: each ends at its mark. */
export const PHASES = [
  'http in', // request event to handler: routing, pipeline steps, the body read
  'parse', // JSON.parse of the body
  'validate', // the body against its schema
  'to write', // the body as the core's write, queued
  'queue', // the tick the queue waits for others to join, the turn
  'lock', // BEGIN IMMEDIATE, catching up under the lock
  'decide', // the write against the State (the core)
  'statements', // the rows: built and run
  'journal+image', // the journal's records and the image: built and run
  'commit', // COMMIT (the WAL frames written; SQLite syncs them here only where the daemon does not)
  'index patch', // publish: the new version, the candidates index follows
  'fdatasync', // the WAL on disk (thread pool), shared with the commits made meanwhile
  'settle', // the write's promise back in the handler
  'reply', // the handler's answer to fastify's onSend
  'http out', // onSend to the response finished
] as const

export type Phase = number
export const P = Object.fromEntries(PHASES.map((name, i) => [name, i + 1])) as Record<(typeof PHASES)[number], Phase>

let current: Float64Array | null = null
const done: Float64Array[] = []
/**
 * The statements each trace ran (SQLite; KEEP_STATEMENTS), as [text, parameters, ms SQLite took]:
 * the bench runs them again alone, and sets SQLite's time inside the daemon beside it.
 */
type RanStatement = [string, unknown[], number]
let currentStatements: RanStatement[] = []
const doneStatements: RanStatement[][] = []
/** Traces kept at most (a benchmark reads them between rounds). */
const KEEP = 100_000

/** A request to trace begins now. */
export function traceStart(): void {
  current = new Float64Array(PHASES.length + 1).fill(NaN)
  currentStatements = []
  current[0] = performance.now()
}

/** The traced request ran statement `text` with `params` (a copy is kept) in `ms`. */
export function ranStatement(text: string, params: readonly unknown[], ms: number): void {
  if (current && KEEP_STATEMENTS) currentStatements.push([text, [...params], ms])
}

/** Phase `p` of the traced request ends now. */
export function mark(p: Phase): void {
  if (current) current[p] = performance.now()
}

/** The traced request is answered. */
export function traceEnd(): void {
  if (!current) return
  current[PHASES.length] = performance.now()
  if (done.length < KEEP) {
    done.push(current)
    doneStatements.push(currentStatements)
  }
  current = null
  currentStatements = []
}

/**
 * Each finished trace as its phases' durations in ms (a phase not seen: null), with the
 * statements it ran, and forgets them.
 */
export function takeTraces(): {phases: readonly string[]; traces: (number | null)[][]; statements: RanStatement[][]} {
  const statements = doneStatements.splice(0)
  const traces = done.splice(0).map((t) => {
    const out: (number | null)[] = []
    let last = t[0]
    for (let p = 1; p <= PHASES.length; p++) {
      if (Number.isNaN(t[p])) {
        out.push(null)
        continue
      }
      out.push(t[p] - last)
      last = t[p]
    }
    return out
  })
  return {phases: PHASES, traces, statements}
}
