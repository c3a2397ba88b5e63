/**
 * A plan's moves as the writes that make them (drain.ts DrainMove: what the consumer holds in the
 * host it leaves, the host it goes to, what it takes there, all it holds after, the soft rules it
 * breaks), and the plan replayed on a copy of the cloud as the writes would go: each move's host
 * enabled, no hard rule newly broken (groups.ts newBreaches), and the write itself (drain.ts
 * applyMove), which refuses to overfill any provider. What the copy then counts is the answer.
 */
import {PlacementError} from '../errors.js'
import {applyMove, type DrainMove, type ProviderAmounts} from '../drain.js'
import {breachRecord, breachText, newBreaches} from '../groups.js'
import {copyState} from '../headroom/what-if.js'
import {isDisabled} from '../host.js'
import type {State} from '../state/state.js'
import {Changes} from '../state/changes.js'
import {heldOf} from './place.js'
import type {Rules} from './rules.js'
import type {Move, World} from './world.js'

export interface PlannedMove extends DrainMove {
  /** The host it leaves (uuid); `host` is the one it goes to. */
  fromHost: string
  fromName: string
  toName: string
}

/**
 * The moves as writes, in order: each made on the World in turn (and all undone after), so that
 * each says what the consumer holds when it runs. A consumer moved twice is written with the
 * generation its first write leaves.
 */
export function plannedMoves(w: World, rules: Rules, moves: readonly Move[]): PlannedMove[] {
  const start = w.done.length
  const holding = new Map<string, Map<string, Record<string, number>>>()
  const writes = new Map<string, number>()
  const out: PlannedMove[] = []
  for (const m of moves) {
    const piece = w.pieces[m.piece]
    const c = piece.consumer
    let now = holding.get(c.uuid)
    if (!now) holding.set(c.uuid, (now = new Map([...c.allocations].map(([rp, a]) => [rp, Object.fromEntries(a)]))))
    const from = heldOf(w, piece)
    const cs = w.candidates(piece, m.to)
    const {pairs} = w.forest.shapes[w.forest.shapeOf[m.to]]
    const to: ProviderAmounts = {}
    for (let t = cs.start[m.candidate]; t < cs.start[m.candidate + 1]; t++) {
      const {member, rc} = pairs[cs.pair[t]]
      const uuid = w.forest.members[w.forest.memberAt[m.to] + member].uuid
      ;(to[uuid] ??= {})[rc] = (to[uuid]?.[rc] ?? 0) + cs.amount[t]
    }
    const soft = rules.judge(piece, m.to).soft.map(breachRecord)
    for (const rp of Object.keys(from)) now.delete(rp)
    for (const [rp, amounts] of Object.entries(to)) {
      const sum = {...(now.get(rp) ?? {})}
      for (const [rc, n] of Object.entries(amounts)) sum[rc] = (sum[rc] ?? 0) + n
      now.set(rp, sum)
    }
    const written = writes.get(c.uuid) ?? 0
    writes.set(c.uuid, written + 1)
    out.push({
      consumer: c.uuid,
      project: c.project,
      user: c.user,
      type: c.type,
      generation: c.generation + written,
      groups: [...rules.groups(c.uuid)].sort((a, b) => Number(a.soft) - Number(b.soft) || a.name.localeCompare(b.name)).map((g) => g.name),
      from,
      fromHost: w.forest.hosts[m.from].uuid,
      fromName: w.name(m.from),
      host: w.forest.hosts[m.to].uuid,
      toName: w.name(m.to),
      to,
      allocations: Object.fromEntries([...now].map(([rp, a]) => [rp, {...a}])),
      soft,
    })
    w.apply(m)
  }
  while (w.done.length > start) w.undo()
  return out
}

/**
 * `moves` written one after another on a copy of `s`, each checked as its write would be; the copy
 * after them. A move that would not be written is the planner's own error, and is thrown.
 */
export function replay(s: State, moves: readonly PlannedMove[]): State {
  const copy = copyState(s)
  copy.changes = new Changes()
  try {
    moves.forEach((m, k) => {
      const where = `make-room: move ${k + 1} (consumer ${m.consumer} to ${m.toName})`
      const target = copy.providers.get(m.host)
      if (!target || isDisabled(target)) throw new PlacementError(500, `${where}: the host is not an enabled host`)
      const hard = newBreaches(copy, {placements: new Map([[m.consumer, Object.keys(m.allocations)]])})
      if (hard.length) throw new PlacementError(500, `${where} would break ${breachText(breachRecord(hard[0]))}`)
      try {
        applyMove(copy, 0, m)
      } catch (err) {
        throw new PlacementError(500, `${where} would be refused: ${(err as Error).message}`)
      }
    })
  } finally {
    copy.changes = null
  }
  return copy
}
