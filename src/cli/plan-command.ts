/**
 * The commands that answer a make-room plan (make-room; drain of a rack, row or room): the report
 * printed one way for both. JSON/YAML: the whole record; -f value and csv: the moves alone, in the
 * order they run, consumer, from and to first so the lines read straight into a migration loop
 * (`while read consumer from to _`); a table: a line that says what was asked, how many moves, how
 * far from the fewest and what the goal counts before and after, then the moves, then the
 * flavor's fit per domain. A goal that cannot be reached, or was not, exits 4 after it is printed.
 */
import {breachText} from '../core/groups.js'
import type {DomainFit} from '../core/make-room/domain-fits.js'
import type {MoveRecord, PlanGoal} from '../core/make-room/record.js'
import {conflictError} from './failure.js'
import type {Column} from './output.js'
import {PlacematCommand} from './placemat-command.js'
import {formatResources} from './render/resources.js'
import type {MakeRoomReport} from './services/make-room.js'

/** What a long run reports its progress to. */
type Progress = (done: number, total: number, label: string) => void

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`

/** What a move takes off its host, summed over the host's providers. */
function held(m: MoveRecord): Record<string, number> {
  const out: Record<string, number> = {}
  for (const a of Object.values(m.resources)) for (const [rc, n] of Object.entries(a)) out[rc] = (out[rc] ?? 0) + n
  return out
}

export const MOVE_COLUMNS: Column<MoveRecord>[] = [
  {key: 'consumer'},
  {key: 'from'},
  {key: 'to'},
  {key: 'resources', get: (m) => formatResources(held(m))},
  {key: 'groups', get: (m) => m.groups.join(',')},
  {key: 'status'},
  {key: 'why', get: (m) => m.why ?? m.soft_breaches.map((b) => `breaks ${breachText(b)}`).join('; ')},
]

export const DOMAIN_COLUMNS: Column<DomainFit>[] = [
  {key: 'level'},
  {key: 'name'},
  {key: 'before', align: 'right'},
  {key: 'after', align: 'right'},
]

const where = (goal: PlanGoal) => (goal.in ? `${goal.in.level} ${goal.in.name}` : 'the cloud')

/** What was asked, in words. */
export function goalText(goal: PlanGoal): string {
  if (goal.goal === 'flavor') return `${goal.count} more ${goal.flavor} in ${where(goal)}`
  if (goal.goal === 'free_hosts') return `${plural(goal.count, 'host')} empty in ${where(goal)}`
  return `every consumer out of ${where(goal)}`
}

/** What the goal counts, in words, for a number. */
function countText(r: MakeRoomReport, n: number): string {
  if (r.goal === 'flavor') return `${n} ${r.flavor} fit`
  if (r.goal === 'free_hosts') return `${plural(n, 'host')} empty`
  return `${plural(n, 'consumer')} in it`
}

/** How far the plan is from the fewest, and what found it: proved, or the best bound known. */
function fewestText(r: MakeRoomReport): string {
  const method = r.method === 'exact' ? 'exact search' : 'heuristic'
  if (r.proof === 'bound') return `the fewest, as the lower bound shows (${method})`
  if (r.proof === 'search') return `the fewest, as the exact search proved`
  return r.lower_bound === null ? `found by the ${method}` : `at least ${r.lower_bound} are needed (${method})`
}

export function makeRoomSummary(r: MakeRoomReport): string {
  const asked = goalText(r)
  if (!r.possible) return `${asked}: not possible. ${r.why ?? ''}`.trim()
  const moves = r.moves.filter((m) => m.status !== 'not moved').length
  if (r.moves.length === 0 && !r.applied) return `${asked}: already so (${countText(r, r.fit_before)}); no move is needed.`
  if (!r.applied) {
    const hosts = r.disabled_hosts?.length ? `; ${plural(r.disabled_hosts.length, 'host')} would be taken out of service first` : ''
    return `Dry run: ${asked}: ${plural(r.moves.length, 'move')}, ${fewestText(r)}: ${countText(r, r.fit_before)} now, ${countText(r, r.fit_after)} after${hosts}. Nothing was changed (--apply carries it out).`
  }
  const out = r.disabled_hosts?.length ? `; ${r.disabled_hosts.join(', ')} taken out of service` : ''
  const now = `${r.fit_now === undefined ? '' : `; ${countText(r, r.fit_now)} now`}${out}`
  const again = r.replans ? `, planned again ${plural(r.replans, 'time')} after refused moves` : ''
  if (r.complete) return `${asked}: done in ${plural(moves, 'move')}${again}${now}.`
  const notMoved = r.moves.length - moves
  return `${asked}: NOT reached: ${plural(moves, 'move')} made${notMoved ? `, ${notMoved} not` : ''}${again}${now}. ${r.why ?? ''}`.trim()
}

export abstract class PlanCommand extends PlacematCommand {
  /** Runs `work` with a progress bar when `wanted` and printing text on a terminal (ink), handing it what to report to. */
  protected async withProgress<T>(wanted: boolean, work: (onProgress?: Progress) => Promise<T>): Promise<T> {
    const bar = wanted && process.stdout.isTTY && this.textOutput ? (await import('./components/Progress.js')).startProgress() : undefined
    try {
      return await work(bar ? (done, total, label) => bar.update(done, total, label) : undefined)
    } finally {
      bar?.stop()
    }
  }

  printPlan(report: MakeRoomReport): void {
    if (!this.textOutput) this.outputRecord(report as unknown as Record<string, unknown>)
    else {
      const people = this.format === 'table'
      if (people) this.log(makeRoomSummary(report))
      if (report.moves.length) this.output(undefined, report.moves, MOVE_COLUMNS)
      if (people && report.possible && report.domains?.length) {
        this.log('')
        this.output(undefined, report.domains, DOMAIN_COLUMNS)
      }
    }
    if (!report.possible) throw conflictError(`${report.why ?? 'the goal cannot be reached'} (nothing was changed)`)
    if (report.applied && !report.complete) throw conflictError(`the goal was not reached: ${makeRoomSummary(report)}`)
  }
}
