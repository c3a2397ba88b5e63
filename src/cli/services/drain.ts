/**
 * `placemat drain HOST`: every consumer on a host moved to other hosts, each in one write that
 * keeps its resources, project, user and type, and its placement groups' rules. The plan is
 * the core's (core/drain.ts), made on a copy of the cloud; this carries it out:
 *
 *  1. read the cloud and plan; a plan that cannot move every consumer changes nothing (unless
 *     --partial), and a dry run stops here;
 *  2. take the host out of service (COMPUTE_STATUS_DISABLED), unless it is already or
 *     --keep-enabled, so that nothing new lands on it, then read and plan again (what landed
 *     before that is planned too; a plan that no longer moves everyone brings the host back and
 *     changes nothing else);
 *  3. move each consumer in one write of its whole allocations with its consumer generation
 *     (the backend's: placemat checks its groups' rules in the write). A move refused with 409
 *     (someone took the room, the consumer changed) is planned once more on the cloud as it is
 *     then and tried again; one that still cannot move keeps its allocations and is reported
 *     with why.
 */
import {ApiError} from '../../client/client.js'
import {isMove, planDrain, planMove, type DrainMove, type DrainPlan, type ProviderAmounts} from '../../core/drain.js'
import type {BreachRecord} from '../../core/groups.js'
import {isDisabled} from '../../core/host.js'
import type {State} from '../../core/state/state.js'
import type {Backend} from '../backend/backend.js'
import {withContext} from '../failure.js'
import {resolveHost} from './hosts.js'
import {isConflict, writeMove} from './move-write.js'

export interface DrainFlags {
  dryRun?: boolean
  /** Move what can move even when not everyone can. */
  partial?: boolean
  /** Leave the host in service while it is drained. */
  keepEnabled?: boolean
  /** Why, kept with the host when the drain disables it. */
  reason?: string
  /** Plain Placement: the groups file and the layout file. */
  groups?: string
  layout?: string
  onProgress?: (done: number, total: number, label: string) => void
  /** Called once, after the host is disabled and the last plan made, before the first move (tests race it). */
  beforeFirstWrite?: (plan: DrainPlan) => Promise<void> | void
}

export const DEFAULT_REASON = 'drained by placemat drain'

export type EntryStatus = 'would move' | 'moved' | 'cannot move' | 'not moved' | 'left'

/** One consumer of the host: where it goes (or went), or why not. */
export interface DrainEntry {
  consumer_uuid: string
  groups: string[]
  /** What it holds (held) in the host's tree. */
  from: ProviderAmounts
  status: EntryStatus
  /** Where it goes: the host, and what it takes on which of its providers. */
  to_host?: {uuid: string; name: string}
  to?: Array<{uuid: string; name: string; resources: Record<string, number>}>
  /** Its whole allocations after the move (what it keeps outside the host included). */
  allocations?: ProviderAmounts
  /** Soft rules the move breaks (there was no better place). */
  soft_breaches?: BreachRecord[]
  /** Why it cannot (or did not) move. */
  why?: string
  /** Writes tried (1, or 2 when the first was refused and it was planned again). */
  attempts?: number
}

export interface DrainReport {
  transport: Backend['kind']
  host: {uuid: string; name: string}
  dry_run: boolean
  /** What the drain did to the host's status: disabled it now, found it disabled, left it in service, would disable it. */
  host_status: 'disabled' | 'already disabled' | 'left enabled' | 'would disable'
  /** The reason kept with the host when the drain disabled it. */
  reason?: string
  /** Every consumer moved (or, in a dry run, would). */
  complete: boolean
  /** Whether anything was written. */
  changed: boolean
  consumers: DrainEntry[]
}

/** The cloud as a State with its placement groups and topology, to plan on (a copy: planning changes it). */
function cloudState(backend: Backend, flags: DrainFlags): Promise<State> {
  // Each consumer's project, user and generation are read too: the move writes them.
  return backend.stateWithGroups({groups: flags.groups, layout: flags.layout}, {consumers: true, consumerOwners: true})
}

function movedEntry(s: State, m: DrainMove, status: EntryStatus, attempts?: number): DrainEntry {
  const name = (uuid: string) => s.providers.get(uuid)?.name ?? uuid
  const e: DrainEntry = {
    consumer_uuid: m.consumer,
    groups: m.groups,
    from: m.from,
    status,
    to_host: {uuid: m.host, name: name(m.host)},
    to: Object.entries(m.to).map(([uuid, resources]) => ({uuid, name: name(uuid), resources})),
    allocations: m.allocations,
    soft_breaches: m.soft,
  }
  if (attempts !== undefined) e.attempts = attempts
  return e
}

const stuckEntries = (plan: DrainPlan, status: EntryStatus): DrainEntry[] =>
  plan.stuck.map((x) => ({consumer_uuid: x.consumer, groups: x.groups, from: x.from, status, why: x.why}))

/** The plan as a report that changed nothing (a dry run, or a drain that cannot complete). */
function unchanged(
  backend: Backend,
  host: {uuid: string; name: string},
  s: State,
  plan: DrainPlan,
  dryRun: boolean,
  hostStatus: DrainReport['host_status'],
): DrainReport {
  const complete = plan.stuck.length === 0
  return {
    transport: backend.kind,
    host,
    dry_run: dryRun,
    host_status: hostStatus,
    complete,
    changed: false,
    consumers: [...plan.moves.map((m) => movedEntry(s, m, 'would move')), ...stuckEntries(plan, 'cannot move')],
  }
}

export async function drain(backend: Backend, hostRef: string, flags: DrainFlags = {}): Promise<DrainReport> {
  const host = await resolveHost(backend.client, hostRef)
  let s = await cloudState(backend, flags)
  const already = isDisabled(s.providers.get(host.uuid)!)
  let plan = planDrain(s, Date.now(), host.uuid)
  const dryStatus = already ? 'already disabled' : flags.keepEnabled ? 'left enabled' : 'would disable'
  if (flags.dryRun) return unchanged(backend, host, s, plan, true, dryStatus)
  if (plan.stuck.length && !flags.partial) return unchanged(backend, host, s, plan, false, already ? 'already disabled' : 'left enabled')

  let hostStatus: DrainReport['host_status'] = already ? 'already disabled' : 'left enabled'
  const reason = flags.reason ?? DEFAULT_REASON
  if (!already && !flags.keepEnabled) {
    await backend.setHostStatus(host.uuid, true, reason)
    hostStatus = 'disabled'
    // Nothing new lands on it now; what landed since the first read is planned with the rest.
    s = await cloudState(backend, flags)
    plan = planDrain(s, Date.now(), host.uuid)
    if (plan.stuck.length && !flags.partial) {
      await backend.setHostStatus(host.uuid, false)
      return unchanged(backend, host, s, plan, false, 'left enabled')
    }
  }

  await flags.beforeFirstWrite?.(plan)
  const consumers: DrainEntry[] = []
  const total = plan.moves.length
  flags.onProgress?.(0, total, `moving ${total} consumers off ${host.name}`)
  for (const [k, move] of plan.moves.entries()) {
    try {
      await writeMove(backend, move)
      consumers.push(movedEntry(s, move, 'moved', 1))
    } catch (err) {
      if (!isConflict(err)) {
        const done = consumers.filter((e) => e.status === 'moved').length
        throw err instanceof ApiError
          ? withContext(
              err,
              `moving consumer ${move.consumer}: `,
              ` (${done} of ${total} consumers were moved before this; drain again to finish)`,
            )
          : err
      }
      consumers.push(await tryAgain(backend, flags, host, move, (err as ApiError).detail))
    }
    flags.onProgress?.(k + 1, total, `moved ${k + 1} of ${total} consumers off ${host.name}`)
  }
  consumers.push(...stuckEntries(plan, 'cannot move'))
  // A host found disabled and every move refused (or none to make) leave the cloud as it was.
  const changed = hostStatus === 'disabled' || consumers.some((e) => e.status === 'moved')
  return {
    transport: backend.kind,
    host,
    dry_run: false,
    host_status: hostStatus,
    ...(hostStatus === 'disabled' ? {reason} : {}),
    complete: consumers.every((e) => e.status === 'moved' || e.status === 'left'),
    changed,
    consumers,
  }
}

/** A move refused with 409: planned once more on the cloud as it is now, and tried once more. */
async function tryAgain(
  backend: Backend,
  flags: DrainFlags,
  host: {uuid: string; name: string},
  move: DrainMove,
  refused: string,
): Promise<DrainEntry> {
  const fresh = await cloudState(backend, flags)
  const tree = new Set(fresh.subtree(host.uuid).map((p) => p.uuid))
  const c = fresh.consumers.get(move.consumer)
  if (!c || ![...c.allocations.keys()].some((rp) => tree.has(rp))) {
    // It left the host by other means meanwhile (deleted, or moved by someone else).
    return {
      consumer_uuid: move.consumer,
      groups: move.groups,
      from: move.from,
      status: 'left',
      why: `it no longer holds anything on ${host.name}`,
      attempts: 1,
    }
  }
  const again = planMove(fresh, host.uuid, move.consumer)
  if (!isMove(again))
    return {
      consumer_uuid: move.consumer,
      groups: again.groups,
      from: again.from,
      status: 'not moved',
      why: `${again.why} (first refused: ${refused})`,
      attempts: 1,
    }
  try {
    await writeMove(backend, again)
    return movedEntry(fresh, again, 'moved', 2)
  } catch (err) {
    if (!isConflict(err)) throw err
    return {
      consumer_uuid: move.consumer,
      groups: again.groups,
      from: again.from,
      status: 'not moved',
      why: (err as ApiError).detail,
      attempts: 2,
    }
  }
}
