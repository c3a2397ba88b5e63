/**
 * The move model make-room plans with, on numbers instead of the State (which it never changes):
 * what is free on every host's tree and every sharing pool, and the pieces that can move, each
 * what one consumer holds in one host's tree.
 *
 * A move is a live migration, as drain.ts plans it: a piece's amounts, provider by provider, are
 * found again on one provider each in the tree of another enabled host, or as one group where no
 * class is on two providers (drain.ts moveRequests, whose candidates are searched once per shape
 * of tree: headroom/tree-shapes.ts, the first request's first, each place once), and what the
 * consumer holds on sharing providers stays there, so the new host must reach each of them (as
 * drain.ts `associated` says: a pool is among the members of a host's shape exactly when the
 * tree shares an aggregate with it). A move is made and undone on the numbers (apply, undo), so
 * a search walks the cloud without copying it; each host's `version` moves with its usage.
 */
import {moveRequests} from '../drain.js'
import {freeNow, poolFreeNow} from '../headroom/fit-walk.js'
import {candidatesByHost, hostForest, type HostForest, type ShapeCandidates} from '../headroom/tree-shapes.js'
import {isSharing} from '../host.js'
import type {Consumer, State} from '../state/state.js'
import {PieceHashes} from './hashes.js'
import {Piece, merged, type Held, type MoveRequests} from './piece.js'

export {Piece, type Held} from './piece.js'

export interface Move {
  piece: number
  from: number
  to: number
  /** Which of the piece's candidates on `to` (the candidates' order). */
  candidate: number
}

interface Done {
  move: Move
  was: Piece['where']
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
  /** The pieces made so far, by id: a host's when it is first asked of (on), a consumer's all at once. */
  readonly pieces: Piece[] = []
  /** Each consumer's pieces, once made. */
  readonly ofConsumer = new Map<string, number[]>()
  /** Moves with each host's usage (and the pools' with poolVersion). */
  readonly version: Int32Array
  poolVersion = 0
  readonly done: Done[] = []
  private readonly requests: Map<string, MoveRequests>
  /** Each shape's pairs, by member and class. */
  private readonly pairIndex: Array<Array<Map<string, number>>>
  private readonly reach: Array<Set<string> | undefined>
  private readonly grouped: ReadonlySet<string>
  /** The pieces on each host (once the host is made: built). */
  private readonly placed: Array<Set<number>>
  private readonly built: Uint8Array
  /** Each tree member's host and place in it. */
  private readonly place = new Map<string, [number, number]>()
  /** Hashes of where every piece is, and of what each host holds (kept once a search asks: hashing). */
  private sums?: PieceHashes
  /** Each host's rack, row and room (numbers; -1: none), and the hosts of each, in host order: made when first asked. */
  private near?: {of: Int32Array[]; members: number[][][]}

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
    this.placed = Array.from({length: n}, () => new Set<number>())
    this.built = new Uint8Array(n)
    this.version = new Int32Array(n)
    this.pairIndex = forest.shapes.map((shape) => {
      const index: Array<Map<string, number>> = []
      shape.pairs.forEach((p, k) => {
        ;(index[p.member] ??= new Map()).set(p.rc, k)
      })
      return index
    })
    this.reach = new Array(forest.shapes.length)
    // Members of placement groups are told apart (their rules ask where each one is).
    const grouped = new Set<string>()
    for (const g of s.groups.values()) for (const m of g.members) grouped.add(m)
    this.grouped = grouped
    for (let i = 0; i < n; i++) {
      const {treeSize} = forest.shapes[forest.shapeOf[i]]
      for (let k = 0; k < treeSize; k++) this.place.set(forest.members[forest.memberAt[i] + k].uuid, [i, k])
    }
  }

  /** The pieces on host `i` (made when first asked: every consumer holding something in its tree). */
  on(i: number): Set<number> {
    if (!this.built[i]) {
      this.built[i] = 1
      const {forest} = this
      const {treeSize} = forest.shapes[forest.shapeOf[i]]
      for (let k = forest.memberAt[i]; k < forest.memberAt[i] + treeSize; k++)
        for (const uuid of forest.members[k].allocations.keys()) if (!this.ofConsumer.has(uuid)) this.make(uuid)
    }
    return this.placed[i]
  }

  /** Every piece of the cloud (a search looks at all of them). */
  all(): Piece[] {
    for (let i = 0; i < this.n; i++) this.on(i)
    return this.pieces
  }

  /** Makes a consumer's pieces, one a host it holds something on. */
  private make(uuid: string): number[] {
    const ids: number[] = []
    this.ofConsumer.set(uuid, ids)
    const c = this.s.consumers.get(uuid)
    if (!c) return ids
    // Mostly one host: its pieces' raw amounts found without a map.
    let first = -1
    const raw: Array<[number, Map<string, number>]> = []
    let others: Map<number, Array<[number, Map<string, number>]>> | undefined
    let keeps: string[] = NO_KEEPS
    for (const [rp, amounts] of c.allocations) {
      const at = this.place.get(rp)
      if (at === undefined) {
        const p = this.s.providers.get(rp)
        if (p && isSharing(p)) keeps = keeps === NO_KEEPS ? [rp] : [...keeps, rp]
      } else if (first < 0 || at[0] === first) {
        first = at[0]
        raw.push([at[1], amounts])
      } else {
        others ??= new Map()
        const list = others.get(at[0])
        if (list) list.push([at[1], amounts])
        else others.set(at[0], [[at[1], amounts]])
      }
    }
    if (first >= 0) ids.push(this.addPiece(c, first, raw, keeps))
    for (const [host, list] of others ?? []) ids.push(this.addPiece(c, host, list, keeps))
    return ids
  }

  private addPiece(c: Consumer, host: number, raw: Array<[number, Map<string, number>]>, keeps: string[]): number {
    const id = this.pieces.length
    this.pieces.push(new Piece(this, id, c, host, raw, keeps))
    this.placed[host].add(id)
    return id
  }

  /** What `held` (place in the tree, amounts) is on host `i`'s pairs; null when a class is not in the provider's inventories. */
  heldOf(i: number, held: Array<[number, Map<string, number>]>): Held | null {
    const index = this.pairIndex[this.forest.shapeOf[i]]
    const pairs: number[] = []
    const pairAmounts: number[] = []
    for (const [member, amounts] of held)
      for (const [rc, n] of amounts) {
        const k = index[member]?.get(rc)
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

  /** drain.ts's requests for these amounts, one object per amounts asked (so their candidates are searched once per shape). */
  requestOf(amounts: ReadonlyArray<ReadonlyMap<string, number>>): MoveRequests {
    const key = amounts.map((a) => [...a].map(([rc, n]) => `${rc}:${n}`).join(',')).join('|')
    let r = this.requests.get(key)
    if (!r) this.requests.set(key, (r = {requests: moveRequests(this.s, amounts), byShape: []}))
    return r
  }

  /** The candidates of `piece` on host `j`'s tree (its shape's: every request's in turn, each place once). */
  candidates(piece: Piece, j: number): ShapeCandidates {
    const r = piece.request
    const shape = this.forest.shapeOf[j]
    return (r.byShape[shape] ??= merged(r.requests.map((q) => candidatesByHost(this.s, this.forest, q)(j))))
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
    this.sums?.remove(piece)
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
    this.done.push({move, was: piece.where, keeps, pool})
    const raw = [...byMember]
    piece.moveTo(move.to, raw, this.heldOf(move.to, raw)!)
    this.placed[from].delete(piece.id)
    this.placed[move.to].add(piece.id)
    this.version[from]++
    this.version[move.to]++
    if (pool.length) this.poolVersion++
    this.sums?.add(piece, this.grouped.has(piece.consumer.uuid))
  }

  /** Undoes the last move made. */
  undo(): Move {
    const d = this.done.pop()!
    const piece = this.pieces[d.move.piece]
    this.sums?.remove(piece)
    const {forest} = this
    const at = forest.pairAt[piece.host]
    for (let t = 0; t < piece.held.pairs.length; t++) this.free[at + piece.held.pairs[t]] += piece.held.pairAmounts[t]
    for (const [g, n] of d.pool) this.poolFree[g] += n
    if (d.pool.length) this.poolVersion++
    const fromAt = forest.pairAt[d.move.from]
    for (let t = 0; t < d.was.held.pairs.length; t++) this.free[fromAt + d.was.held.pairs[t]] -= d.was.held.pairAmounts[t]
    this.placed[piece.host].delete(piece.id)
    this.placed[d.move.from].add(piece.id)
    this.version[piece.host]++
    this.version[d.move.from]++
    piece.moveTo(d.was.host, d.was.raw, d.was.held)
    if (piece.keeps.length !== d.keeps) piece.keeps = piece.keeps.slice(0, d.keeps)
    this.sums?.add(piece, this.grouped.has(piece.consumer.uuid))
    return d.move
  }

  /** Keeps hashes of where the pieces are from now on (hashes.ts), for a search to tell states apart. */
  hashing(): void {
    if (this.sums) return
    const pieces = this.all()
    this.sums = new PieceHashes(this.n, pieces.length)
    for (const p of pieces) this.sums.add(p, this.grouped.has(p.consumer.uuid))
  }

  /** Where every piece is, as a hash (hashing). */
  stateHash(): string {
    return this.sums!.state()
  }

  /** What host `i` holds (its pieces' holdings, not which pieces they are), as a hash (hashing). */
  hostHash(i: number): string {
    return this.sums!.host(i)
  }

  /** The hosts (uuids) a consumer is on now: its pieces' hosts. */
  hostsOf(consumer: string): string[] {
    const ids = this.ofConsumer.get(consumer) ?? this.make(consumer)
    const out: string[] = []
    for (const id of ids) {
      const uuid = this.forest.hosts[this.pieces[id].host].uuid
      if (!out.includes(uuid)) out.push(uuid)
    }
    return out
  }

  /** How near host `j` is to host `i`: 0 the same rack, 1 row, 2 room, 3 elsewhere (as affinity.ts closeness says it). */
  closeness(i: number, j: number): number {
    const {of} = this.places()
    for (let level = 0; level < 3; level++) if (of[level][i] >= 0 && of[level][i] === of[level][j]) return level
    return 3
  }

  /** Every host, the nearest to `i` first: its rack's, then its row's, its room's, the rest; each in host order. */
  *nearest(i: number): Generator<number> {
    const {of, members} = this.places()
    const seen = new Uint8Array(this.n)
    for (let level = 0; level < 3; level++) {
      if (of[level][i] < 0) continue
      for (const j of members[level][of[level][i]])
        if (!seen[j]) {
          seen[j] = 1
          yield j
        }
    }
    for (let j = 0; j < this.n; j++) if (!seen[j]) yield j
  }

  private places(): NonNullable<World['near']> {
    if (this.near) return this.near
    const of = [new Int32Array(this.n).fill(-1), new Int32Array(this.n).fill(-1), new Int32Array(this.n).fill(-1)]
    const members: number[][][] = [[], [], []]
    const numbers = new Map<string, number>()
    const LEVEL = {rack: 0, row: 1, room: 2} as const
    this.forest.hosts.forEach((h, i) => {
      for (const a of h.aggregates) {
        const node = this.s.topology.get(a)
        if (!node) continue
        const level = LEVEL[node.level]
        let k = numbers.get(a)
        if (k === undefined) {
          numbers.set(a, (k = members[level].length))
          members[level].push([])
        }
        of[level][i] = k
      }
      for (let level = 0; level < 3; level++) if (of[level][i] >= 0) members[level][of[level][i]].push(i)
    })
    this.near = {of, members}
    return this.near
  }

  /** Pieces alike: same host, same amounts on the same pairs, and no placement group (a group tells its members apart). */
  signatureOf(p: Piece): string {
    if (this.grouped.has(p.consumer.uuid)) return `#${p.id}`
    return `${p.host}|${Array.from(p.held.pairs, (k, t) => `${k}:${p.held.pairAmounts[t]}`).join(',')}|${p.keeps.join(',')}`
  }

  /** Host number `i`'s name. */
  name(i: number): string {
    return this.forest.hosts[i].name
  }
}

const requestsOf = new WeakMap<HostForest, Map<string, MoveRequests>>()

/** No sharing provider kept (one array for every piece that keeps none). */
const NO_KEEPS: string[] = []
