/**
 * Hashes of where pieces are, for the exact search to tell states apart: cyrb53 of a piece's place
 * (host, holdings, pools kept; a placement group's member by its own id), summed over pieces so
 * that pieces alike count alike and a move changes two terms; 2 x 52 bits for the cloud, and for
 * each host a hash of what it holds (whichever pieces hold it).
 */
import type {Piece} from './piece.js'

const TWO52 = 2 ** 52

export class PieceHashes {
  private readonly all = new Float64Array(2)
  private readonly hosts: Float64Array
  /** Each piece's terms: [where (2), what it holds (2)]. */
  private readonly pieces: Float64Array

  constructor(hosts: number, pieces: number) {
    this.hosts = new Float64Array(2 * hosts)
    this.pieces = new Float64Array(4 * pieces)
  }

  /** Counts piece `p` where it is now (`alone`: told apart from pieces alike, a group's member). */
  add(p: Piece, alone: boolean): void {
    const holding = `${p.movable ? '' : '!'}${p.held.pairs.join(',')}=${p.held.pairAmounts.join(',')}`
    const where = alone ? `#${p.id}@${p.host}:${holding}:${p.keeps.join(',')}` : `${p.host}|${holding}|${p.keeps.join(',')}`
    for (let k = 0; k < 2; k++) {
      const a = hash52(where, k + 1)
      const h = hash52(holding, k + 3)
      this.pieces[4 * p.id + k] = a
      this.pieces[4 * p.id + 2 + k] = h
      this.all[k] = (this.all[k] + a) % TWO52
      this.hosts[2 * p.host + k] = (this.hosts[2 * p.host + k] + h) % TWO52
    }
  }

  /** Takes piece `p` out (before it moves), as it was counted. */
  remove(p: Piece): void {
    for (let k = 0; k < 2; k++) {
      this.all[k] = (this.all[k] - this.pieces[4 * p.id + k] + TWO52) % TWO52
      this.hosts[2 * p.host + k] = (this.hosts[2 * p.host + k] - this.pieces[4 * p.id + 2 + k] + TWO52) % TWO52
    }
  }

  state(): string {
    return `${this.all[0]}.${this.all[1]}`
  }

  host(i: number): string {
    return `${this.hosts[2 * i]}.${this.hosts[2 * i + 1]}`
  }
}

/** cyrb53 (a string's 53-bit hash), kept to 52 bits so that two add up exactly. */
function hash52(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed
  let h2 = 0x41c6ce57 ^ seed
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (1048575 & h2) + (h1 >>> 0)
}
