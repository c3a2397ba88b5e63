/**
 * Placement groups' rules over the move model: what a move would break that is not broken now,
 * as the write of the move will judge it (groups.ts newBreaches: a hard group's new breach refuses
 * it; a soft one's is counted, to choose between places), with every member where the moves made
 * so far on the World put it.
 */
import {groupBreaches, stateLocator, type Breach, type Group, type Locator} from '../groups.js'
import type {Piece, World} from './world.js'

export interface Judgement {
  /** The hard groups' new breaches (none: the move may be made). */
  hard: Breach[]
  /** The soft groups' new breaches (counted, to choose between places). */
  soft: Breach[]
}

const NONE: Judgement = {hard: [], soft: []}

export class Rules {
  private readonly loc: Locator
  private readonly groupsOf = new Map<string, Group[]>()
  /** Each group's breach keys where its members are, by where they are. */
  private readonly before = new Map<Group, {where: string; keys: Set<string>}>()

  constructor(private readonly w: World) {
    this.loc = stateLocator(w.s)
    for (const g of w.s.groups.values())
      for (const m of g.members) {
        const list = this.groupsOf.get(m)
        if (list) list.push(g)
        else this.groupsOf.set(m, [g])
      }
  }

  /** The groups `consumer` is a member of. */
  groups(consumer: string): readonly Group[] {
    return this.groupsOf.get(consumer) ?? []
  }

  /** What moving `piece` to host `j` would newly break. */
  judge(piece: Piece, j: number): Judgement {
    const groups = this.groupsOf.get(piece.consumer.uuid)
    if (!groups) return NONE
    const {w} = this
    const consumer = piece.consumer.uuid
    // The consumer's hosts after the move: its other pieces' and j.
    const after: string[] = [w.forest.hosts[j].uuid]
    for (const id of w.ofConsumer.get(consumer)!) {
      if (id === piece.id) continue
      const uuid = w.forest.hosts[w.pieces[id].host].uuid
      if (!after.includes(uuid)) after.push(uuid)
    }
    const out: Judgement = {hard: [], soft: []}
    for (const g of groups) {
      const before = this.keysNow(g)
      for (const b of groupBreaches(g, (m) => (m === consumer ? after : w.hostsOf(m)), this.loc)) {
        if (before.has(b.key)) continue
        ;(g.soft ? out.soft : out.hard).push(b)
      }
    }
    return out
  }

  private keysNow(g: Group): Set<string> {
    let where = ''
    for (const m of g.members) where += `${this.w.hostsOf(m).join(',')};`
    const kept = this.before.get(g)
    if (kept?.where === where) return kept.keys
    const keys = new Set(groupBreaches(g, (m) => this.w.hostsOf(m), this.loc).map((b) => b.key))
    this.before.set(g, {where, keys})
    return keys
  }
}
