/**
 * A piece: what one consumer holds in one host's tree, the unit a move takes elsewhere (world.ts);
 * and drain.ts's requests for it, their candidates merged by shape of tree.
 */
import type {CandidateRequest} from '../candidates/request.js'
import type {ShapeCandidates} from '../headroom/tree-shapes.js'
import type {Consumer} from '../state/state.js'
import type {World} from './world.js'

/** What a piece holds in its host's tree: per provider (its place among the tree's members), and per pair of the shape. */
export interface Held {
  members: number[]
  amounts: Array<Map<string, number>>
  pairs: Int32Array
  pairAmounts: Float64Array
}

/**
 * What one consumer holds in one host's tree: what a move takes elsewhere. What it holds on the
 * host's pairs, the request that finds it a place and its signature are worked out when first
 * asked (most of a large cloud's pieces are never looked at).
 */
export class Piece {
  private _held?: Held | null
  private _request?: MoveRequests
  private _signature?: string

  constructor(
    private readonly w: World,
    readonly id: number,
    readonly consumer: Consumer,
    public host: number,
    /** What it holds, provider by provider: the provider's place in the host's tree, and the amounts. */
    private raw: Array<[number, Map<string, number>]>,
    /** The sharing providers (uuids) the consumer keeps allocations on: where it goes must reach each. */
    public keeps: string[],
  ) {}

  get held(): Held {
    if (this._held === undefined) this._held = this.w.heldOf(this.host, this.raw)
    return this._held ?? NOTHING
  }

  /** False when what it holds is not all in its providers' inventories: it is left where it is. */
  get movable(): boolean {
    return this.held !== NOTHING
  }

  /** drain.ts's requests for what it holds, and their candidates by shape of tree. */
  get request(): MoveRequests {
    return (this._request ??= this.w.requestOf(this.raw.map(([, a]) => a)))
  }

  /** Pieces alike (same host, same holdings, no placement group): a search moves the first of them only. */
  get signature(): string {
    return (this._signature ??= this.w.signatureOf(this))
  }

  /** It holds `held` on `host` now (raw: the same, provider by provider). */
  moveTo(host: number, raw: Array<[number, Map<string, number>]>, held?: Held): void {
    this.host = host
    this.raw = raw
    this._held = held
    this._request = undefined
    this._signature = undefined
  }

  /** What it holds, provider by provider (to put it back where it was). */
  get where(): {host: number; raw: Array<[number, Map<string, number>]>; held: Held} {
    return {host: this.host, raw: this.raw, held: this.held}
  }
}

const NOTHING: Held = {members: [], amounts: [], pairs: new Int32Array(0), pairAmounts: new Float64Array(0)}

/** drain.ts's requests for what a piece holds, and their candidates merged, by shape of tree. */
export interface MoveRequests {
  requests: CandidateRequest[]
  byShape: Array<ShapeCandidates | undefined>
}

/** The candidates of several requests, one after another, each place once. */
export function merged(all: ShapeCandidates[]): ShapeCandidates {
  if (all.length === 1) return all[0]
  const seen = new Set<string>()
  const start = [0]
  const pair: number[] = []
  const amount: number[] = []
  let sharing = false
  for (const cs of all)
    for (let c = 0; c + 1 < cs.start.length; c++) {
      const parts: string[] = []
      for (let t = cs.start[c]; t < cs.start[c + 1]; t++) parts.push(`${cs.pair[t]}:${cs.amount[t]}`)
      const key = parts.sort().join()
      if (seen.has(key)) continue
      seen.add(key)
      for (let t = cs.start[c]; t < cs.start[c + 1]; t++) {
        pair.push(cs.pair[t])
        amount.push(cs.amount[t])
      }
      start.push(pair.length)
      sharing ||= cs.sharing
    }
  return {start: Int32Array.from(start), pair: Int32Array.from(pair), amount: Float64Array.from(amount), sharing}
}
