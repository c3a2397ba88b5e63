import {Args, Flags} from '@oclif/core'
import type {Column} from '../src/cli/placemat-command.js'
import {PlanCommand} from '../src/cli/plan-command.js'
import {conflictError, usageError} from '../src/cli/failure.js'
import {groupFileFlags} from '../src/cli/groups/flags.js'
import {formatResources} from '../src/cli/render/resources.js'
import {DEFAULT_REASON, drain, type DrainEntry, type DrainReport} from '../src/cli/services/drain.js'
import {makeRoom} from '../src/cli/services/make-room.js'
import {lostDomainOf} from '../src/core/headroom/what-if-headroom.js'
import {breachText} from '../src/core/groups.js'

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`

/** What a consumer holds in the host's tree, summed over its providers. */
function held(e: DrainEntry): Record<string, number> {
  const out: Record<string, number> = {}
  for (const a of Object.values(e.from)) for (const [rc, n] of Object.entries(a)) out[rc] = (out[rc] ?? 0) + n
  return out
}

const COLUMNS: Column<DrainEntry>[] = [
  {key: 'consumer_uuid', header: 'consumer'},
  {key: 'resources', get: (e) => formatResources(held(e))},
  {key: 'groups', get: (e) => e.groups.join(',')},
  {key: 'status'},
  {key: 'to', get: (e) => e.to_host?.name ?? ''},
  {key: 'providers', get: (e) => (e.to ?? []).map((p) => p.name).join(',')},
  {key: 'why', get: (e) => e.why ?? (e.soft_breaches ?? []).map((b) => `breaks ${breachText(b)}`).join('; ')},
]

export default class Drain extends PlanCommand {
  static summary = 'Move every consumer off a host, each in one atomic write, keeping its resources, owner, type and groups’ rules.'
  static description = `Every consumer holding allocations in HOST's tree (a root provider, by name
or uuid) goes to another enabled host: what it holds on each provider of the
tree (root, NUMA nodes, devices) is found again on one provider each of one
other host, what it holds outside the tree (shared storage) stays, and its
placement groups' hard rules still hold after the move (soft ones are kept
where there is room to); the nearest host (same rack, row, room) is taken
first. Consumers are planned one after another, each against the cloud as
the moves before it leave it.

First the plan: when some consumer cannot move, the drain changes nothing
(exit 4) unless --partial, which moves those that can. Then the host is
taken out of service (COMPUTE_STATUS_DISABLED, with --reason; not with
--keep-enabled, nor when it already is), so that nothing new lands on it,
and each consumer is moved in one write of its whole allocations with its
project, user, type and consumer generation (placemat: POST
/placemat/v1/allocations, which checks its groups' rules in the write;
plain Placement: POST /allocations). A move refused with 409 (the room was
taken, the consumer changed) is planned once more and tried again; a
consumer that still cannot move keeps what it holds and is reported with
why. --dry-run prints where each would go, or why it cannot, and exits as
the drain would.

A rack, row or room (rack:NAME, row:NAME, room:NAME) is drained as one plan
(placemat make-room's): every consumer of its hosts placed outside it under
the rules, the fewest moves, in an order where each is valid when it runs,
or why it cannot be (then nothing is changed). Its hosts are taken out of
service first (not with --keep-enabled); a move refused with 409 has the rest
planned again from the cloud as it is then.

Exit 0 when every consumer moved (or would), 4 when some cannot (the table
says which and why).`

  static examples = [
    '<%= config.bin %> drain cn-0001 --dry-run',
    "<%= config.bin %> drain cn-0001 --reason 'PSU failure, ticket 4711'",
    '<%= config.bin %> drain cn-0001 --partial --json',
    '<%= config.bin %> drain rack:r7 --dry-run',
  ]

  static printed = {columns: COLUMNS}
  static args = {host: Args.string({description: 'host (root provider) name or uuid; or rack:NAME, row:NAME, room:NAME', required: true})}
  static flags = {
    'dry-run': Flags.boolean({description: 'print where each consumer would go, or why it cannot; change nothing'}),
    partial: Flags.boolean({description: 'move the consumers that can move even when some cannot (exit 4 still)'}),
    'keep-enabled': Flags.boolean({description: 'leave the host in service (do not set COMPUTE_STATUS_DISABLED)'}),
    reason: Flags.string({description: `why, kept with the host when the drain disables it (default: "${DEFAULT_REASON}")`}),
    ...groupFileFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Drain)
    const backend = await this.backend()
    const domain = lostDomainOf(args.host)
    if (domain && domain.level !== 'host') {
      if (flags.partial) throw usageError('--partial drains a host; a rack, row or room is drained whole or not at all')
      const plan = await this.withProgress(!flags['dry-run'], (onProgress) =>
        makeRoom(backend, {goal: 'drain', in: domain}, undefined, {
          apply: !flags['dry-run'],
          keepEnabled: flags['keep-enabled'],
          reason: flags.reason,
          groups: flags.groups,
          layout: flags.layout,
          onProgress,
        }),
      )
      return this.printPlan(plan)
    }
    const report = await this.withProgress(true, (onProgress) =>
      drain(backend, args.host, {
        dryRun: flags['dry-run'],
        partial: flags.partial,
        keepEnabled: flags['keep-enabled'],
        reason: flags.reason,
        groups: flags.groups,
        layout: flags.layout,
        onProgress,
      }),
    )
    if (!this.textOutput) this.outputRecord(report as unknown as Record<string, unknown>)
    else {
      this.log(summary(report))
      if (report.consumers.length) this.output(undefined, report.consumers, COLUMNS)
    }
    if (!report.complete) throw conflictError(refusal(report))
  }
}

/** Some consumer cannot move and nothing was changed: the drain went no further than its plan. */
const stoppedAtPlan = (r: DrainReport) => !r.changed && r.consumers.some((e) => e.status === 'cannot move')

function summary(r: DrainReport): string {
  const n = r.consumers.length
  const count = (status: DrainEntry['status']) => r.consumers.filter((e) => e.status === status).length
  const host = r.host.name
  if (r.dry_run) {
    const status =
      r.host_status === 'would disable' ? 'the host would be disabled first' : `the host is ${r.host_status.replace('left ', '')}`
    const moves = `${count('would move')} would move${count('cannot move') ? `, ${count('cannot move')} cannot` : ''}`
    return `Dry run: drain ${host} (${plural(n, 'consumer')}): ${moves}; ${status}. Nothing was changed.`
  }
  if (stoppedAtPlan(r))
    return `Drain ${host} (${plural(n, 'consumer')}): ${count('cannot move')} cannot move, so none was moved. Nothing was changed.`
  const status = r.host_status === 'disabled' ? `host disabled (${r.reason})` : `host ${r.host_status}`
  const left = count('left') ? `, ${count('left')} left by other means` : ''
  return `Drained ${host}: ${count('moved')} of ${plural(n, 'consumer')} moved${left}; ${status}.`
}

function refusal(r: DrainReport): string {
  const stuck = r.consumers.filter((e) => e.status === 'cannot move' || e.status === 'not moved').length
  const what = `${plural(stuck, 'consumer')} cannot move off ${r.host.name}`
  if (r.dry_run) return `dry run: the drain would not complete: ${what} (nothing was changed)`
  if (stoppedAtPlan(r)) return `the drain cannot complete: ${what}; nothing was changed (--partial moves those that can)`
  return `the drain did not complete: ${what}; they keep what they hold`
}
