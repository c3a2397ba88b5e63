/**
 * The move model make-room plans with, on numbers instead of the State (which it never changes):
 * what is free on every host's tree and every sharing pool, and the pieces that can move, each
 * what one consumer holds in one host's tree.
 *
 * A move is a live migration, as drain.ts plans it: a piece's amounts, provider by provider, are
 * found again on one provider each in the tree of another enabled host (drain.ts moveRequest,
 * whose candidates are searched once per shape of tree: headroom/tree-shapes.ts), and what the
 * consumer holds on sharing providers stays there, so the new host must reach each of them (as
 * drain.ts `associated` says: a pool is among the members of a host's shape exactly when the
 * tree shares an aggregate with it). A move is made and undone on the numbers (apply, undo), so
 * a search walks the cloud without copying it; each host's `version` moves with its usage.
 */
import {closeness, placementOf, type Placement} from '../affinity.js'
import type {CandidateRequest} from '../candidates/request.js'
import {moveRequest} from '../drain.js'
import {freeNow, poolFreeNow} from '../headroom/fit-walk.js'
import {candidatesByHost, hostForest, type HostForest, type ShapeCandidates} from '../headroom/tree-shapes.js'
import {isSharing} from '../host.js'
import type {Consumer, State} from '../state/state.js'

/** What a piece holds in its host's tree: per provider (its place among the tree's members), and per pair of the shape. */
export interface Held {
  members: number[]
  amounts: Array<Map<string, number>>
  pairs: Int32Array
  pairAmounts: Float64Array
}

/** What one consumer holds in one host's tree: what a move takes elsewhere. */
export interface Piece {
  id: number
  consumer: Consumer
  host: number
  held: Held
  /** The sharing providers (uuids) the consumer keeps allocations on: where it goes must reach each. */
  keeps: string[]
  request: CandidateRequest
  /** Pieces alike (same host, same holdings, no placement group): a search moves the first of them only. */
  signature: string
  /** False when what it holds is not all in its providers' inventories: it is left where it is. */
  movable: boolean
}

export interface Move {
  piece: number
  from: number
  to: number
  /** Which of the piece's candidates on `to` (the candidates' order). */
  candidate: number
}

interface Done {
  move: Move
  held: Held
  request: CandidateRequest
  signature: string
  keeps: number
  pool: Array<[number, number]>
}

export class World {
  readonly forest: HostForest
  readonly n: number
  /** Free amount of every host's own pairs (HostForest.pairAt); a pool pair's entry is not read (poolFree is). */
  readonly free: Float64Array
  readonly poolFree: Float64Array
  readonly enabled: Uint8Array
  readonly hostNumber: Map<string, number>
  readonly pieces: Piece[] = []
  /** The pieces on each host, by id. */
  readonly on: Array<Set<number>>
  readonly ofConsumer = new Map<string, number[]>()
  /** Moves with each host's usage (and the pools' with poolVersion). */
  readonly version: Int32Array
  poolVersion = 0
  readonly done: Done[] = []
  private readonly requests: Map<string, CandidateRequest>
  private readonly pairIndex: Array<Map<string, number>>
  private readonly reach: Array<Set<string> | undefined>
  private readonly grouped: ReadonlySet<string>
  private readonly placements: Array<Placement | undefined>

  constructor(readonly s: State) {
    const forest = (this.forest = hostForest(s))
    // One request object per amounts asked, kept with the host trees: its candidates are searched once per shape.
    let requests = requestsOf.get(forest)
    if (!requests) requestsOf.set(forest, (requests = new Map()))
    this.requests = requests
    const n = (this.n = forest.hosts.length)
    this.free = freeNow(forest)
    this.poolFree = poolFreeNow(forest)
    this.enabled = Uint8Array.from(forest.disabled, (d) => 1 - d)
    this.hostNumber = new Map(forest.hosts.map((h, i) => [h.uuid, i]))
    this.on = Array.from({length: n}, () => new Set<number>())
    this.version = new Int32Array(n)
    this.pairIndex = forest.shapes.map((shape) => new Map(shape.pairs.map((p, k) => [`${p.member} ${p.rc}`, k])))
    this.reach = new Array(forest.shapes.length)
    this.placements = new Array(n)
    // Members of placement groups are told apart (their rules ask where each one is).
    const grouped = new Set<string>()
    for (const g of s.groups.values()) for (const m of g.members) grouped.add(m)
    this.grouped = grouped
    // Each tree member's host and place in it.
    const place = new Map<string, [number, number]>()
    for (let i = 0; i < n; i++) {
      const {treeSize} = forest.shapes[forest.shapeOf[i]]
      for (let k = 0; k < treeSize; k++) place.set(forest.members[forest.memberAt[i] + k].uuid, [i, k])
    }
    for (const c of s.consumers.values()) {
      const byHost = new Map<number, Array<[number, Map<string, number>]>>()
      const keeps: string[] = []
      for (const [rp, amounts] of c.allocations) {
        const at = place.get(rp)
        if (at) {
          const list = byHost.get(at[0])
          if (list) list.push([at[1], amounts])
          else byHost.set(at[0], [[at[1], amounts]])
        } else {
          const p = s.providers.get(rp)
          if (p && isSharing(p)) keeps.push(rp)
        }
      }
      for (const [host, held] of byHost) {
        const h = this.heldOf(host, held)
        const id = this.pieces.length
        const piece: Piece = {
          id,
          consumer: c,
          host,
          held: h ?? {members: [], amounts: [], pairs: new Int32Array(0), pairAmounts: new Float64Array(0)},
          keeps,
          request: this.requestOf(held.map(([, a]) => a)),
          signature: '',
          movable: h !== null,
        }
        piece.signature = signatureOf(piece, grouped)
        this.pieces.push(piece)
        this.on[host].add(id)
        const list = this.ofConsumer.get(c.uuid)
        if (list) list.push(id)
        else this.ofConsumer.set(c.uuid, [id])
      }
    }
  }

  /** What `held` (place in the tree, amounts) is on host `i`'s pairs; null when a class is not in the provider's inventories. */
  private heldOf(i: number, held: Array<[number, Map<string, number>]>): Held | null {
    const index = this.pairIndex[this.forest.shapeOf[i]]
    const pairs: number[] = []
    const pairAmounts: number[] = []
    for (const [member, amounts] of held)
      for (const [rc, n] of amounts) {
        const k = index.get(`${member} ${rc}`)
        if (k === undefined) return null
        pairs.push(k)
        pairAmounts.push(n)
      }
    return {
      members: held.map(([m]) => m),
      amounts: held.map(([, a]) => a),
      pairs: Int32Array.from(pairs),
      pairAmounts: Float64Array.from(pairAmounts),
    }
  }

  /** drain.ts's request for these amounts, one object per amounts asked (so its candidates are searched once per shape). */
  private requestOf(amounts: ReadonlyArray<ReadonlyMap<string, number>>): CandidateRequest {
    const key = amounts.map((a) => [...a].map(([rc, n]) => `${rc}:${n}`).join(',')).join('|')
    let r = this.requests.get(key)
    if (!r) this.requests.set(key, (r = moveRequest(this.s, amounts)))
    return r
  }

  /** The candidates of `piece` on host `j`'s tree (its shape's, in the engine's order). */
  candidates(piece: Piece, j: number): ShapeCandidates {
    return candidatesByHost(this.s, this.forest, piece.request)(j)
  }

  /** Whether candidate `c` of `cs` fits what host `j` and the pools have free now. */
  fits(cs: ShapeCandidates, c: number, j: number): boolean {
    const shape = this.forest.shapes[this.forest.shapeOf[j]]
    const at = this.forest.pairAt[j]
    for (let t = cs.start[c]; t < cs.start[c + 1]; t++) {
      const k = cs.pair[t]
      if ((shape.pairSharing[k] ? this.poolFree[shape.poolPair[k]] : this.free[at + k]) < cs.amount[t]) return false
    }
    return true
  }

  /** Whether host `j` reaches every sharing provider `piece` keeps allocations on. */
  reaches(piece: Piece, j: number): boolean {
    if (piece.keeps.length === 0) return true
    const shape = this.forest.shapeOf[j]
    let pools = this.reach[shape]
    if (!pools) {
      const {treeSize} = this.forest.shapes[shape]
      pools = this.reach[shape] = new Set<string>()
      for (let k = this.forest.memberAt[j] + treeSize; k < this.forest.memberAt[j + 1]; k++) pools.add(this.forest.members[k].uuid)
    }
    for (const p of piece.keeps) if (!pools.has(p)) return false
    return true
  }

  /**
   * The candidates of `piece` on host `j` that a move may take now, capacity-wise: `j` enabled and
   * not its own host, reaching what it keeps on sharing providers, and the candidate fitting.
   */
  fitting(piece: Piece, j: number): number[] {
    if (!piece.movable || j === piece.host || !this.enabled[j] || !this.reaches(piece, j)) return []
    const cs = this.candidates(piece, j)
    const out: number[] = []
    for (let c = 0; c + 1 < cs.start.length; c++) if (this.fits(cs, c, j)) out.push(c)
    return out
  }

  /** Makes `move` on the numbers (the caller found it fits: fitting). */
  apply(move: Move): void {
    const piece = this.pieces[move.piece]
    const {forest} = this
    const from = piece.host
    const fromAt = forest.pairAt[from]
    const {pairs, pairAmounts} = piece.held
    for (let t = 0; t < pairs.length; t++) this.free[fromAt + pairs[t]] += pairAmounts[t]
    const cs = this.candidates(piece, move.to)
    const shape = forest.shapes[forest.shapeOf[move.to]]
    const at = forest.pairAt[move.to]
    const pool: Array<[number, number]> = []
    const byMember = new Map<number, Map<string, number>>()
    const keeps = piece.keeps.length
    for (let t = cs.start[move.candidate]; t < cs.start[move.candidate + 1]; t++) {
      const k = cs.pair[t]
      const n = cs.amount[t]
      if (shape.pairSharing[k]) {
        const g = shape.poolPair[k]
        this.poolFree[g] -= n
        pool.push([g, n])
        const uuid = forest.poolPairs[g].provider.uuid
        if (!piece.keeps.includes(uuid)) piece.keeps = [...piece.keeps, uuid]
        continue
      }
      this.free[at + k] -= n
      const {member, rc} = shape.pairs[k]
      let amounts = byMember.get(member)
      if (!amounts) byMember.set(member, (amounts = new Map()))
      amounts.set(rc, (amounts.get(rc) ?? 0) + n)
    }
    this.done.push({move, held: piece.held, request: piece.request, signature: piece.signature, keeps, pool})
    const held = [...byMember]
    piece.held = this.heldOf(move.to, held)!
    piece.request = this.requestOf(held.map(([, a]) => a))
    piece.host = move.to
    piece.signature = signatureOf(piece, this.grouped)
    this.on[from].delete(piece.id)
    this.on[move.to].add(piece.id)
    this.version[from]++
    this.version[move.to]++
    if (pool.length) this.poolVersion++
  }

  /** Undoes the last move made. */
  undo(): Move {
    const d = this.done.pop()!
    const piece = this.pieces[d.move.piece]
    const {forest} = this
    const at = forest.pairAt[piece.host]
    for (let t = 0; t < piece.held.pairs.length; t++) this.free[at + piece.held.pairs[t]] += piece.held.pairAmounts[t]
    for (const [g, n] of d.pool) this.poolFree[g] += n
    if (d.pool.length) this.poolVersion++
    const fromAt = forest.pairAt[d.move.from]
    for (let t = 0; t < d.held.pairs.length; t++) this.free[fromAt + d.held.pairs[t]] -= d.held.pairAmounts[t]
    this.on[piece.host].delete(piece.id)
    this.on[d.move.from].add(piece.id)
    this.version[piece.host]++
    this.version[d.move.from]++
    piece.host = d.move.from
    piece.held = d.held
    piece.request = d.request
    piece.signature = d.signature
    if (piece.keeps.length !== d.keeps) piece.keeps = piece.keeps.slice(0, d.keeps)
    return d.move
  }

  /** The hosts (uuids) a consumer is on now: its pieces' hosts. */
  hostsOf(consumer: string): string[] {
    const ids = this.ofConsumer.get(consumer)
    if (!ids) return []
    const out: string[] = []
    for (const id of ids) {
      const uuid = this.forest.hosts[this.pieces[id].host].uuid
      if (!out.includes(uuid)) out.push(uuid)
    }
    return out
  }

  /** How near host `j` is to host `i`: 0 the same rack, 1 row, 2 room, 3 elsewhere (affinity.ts closeness). */
  closeness(i: number, j: number): number {
    const at = (k: number) => (this.placements[k] ??= placementOf(this.s, [this.forest.hosts[k].uuid]))
    return closeness(at(j), at(i))
  }

  /** Host number `i`'s name. */
  name(i: number): string {
    return this.forest.hosts[i].name
  }
}

const requestsOf = new WeakMap<HostForest, Map<string, CandidateRequest>>()

/** Pieces alike: same host, same amounts on the same pairs, and no placement group (a group tells its members apart). */
function signatureOf(p: Piece, grouped: ReadonlySet<string>): string {
  if (grouped.has(p.consumer.uuid)) return `#${p.id}`
  return `${p.host}|${Array.from(p.held.pairs, (k, t) => `${k}:${p.held.pairAmounts[t]}`).join(',')}|${p.keeps.join(',')}`
}
