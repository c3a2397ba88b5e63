/**
 * Python set emulation: the slot layout of a CPython 3.11 set of int tuples (tuple hash, open
 * addressing with perturbed probing, resizes), enough to know the order in which Python
 * iterates such a set. Placement's candidate order depends on it (see sole-anchor.ts).
 */

const M64 = (1n << 64n) - 1n
const XX1 = 11400714785074694791n
const XX2 = 14029467366897019727n
const XX5 = 2870177450012600261n

/** CPython 3.11 hash() of a tuple of small non-negative ints. */
function pyTupleHash(items: number[]): bigint {
  let acc = XX5
  for (const x of items) {
    acc = (acc + BigInt(x) * XX2) & M64
    acc = ((acc << 31n) | (acc >> 33n)) & M64
    acc = (acc * XX1) & M64
  }
  acc = (acc + (BigInt(items.length) ^ (XX5 ^ 3527539n))) & M64
  return acc === M64 ? 1546275796n : acc
}

interface PyEntry {
  t: number[]
  k: string
  h: bigint
}

/** The slot layout of a CPython 3.11 set (no deletions), enough to know its iteration order. */
export class PySet {
  mask = 7
  table: (PyEntry | null)[] = new Array(8).fill(null)
  fill = 0
  used = 0

  static of(tuples: Iterable<number[]>): PySet {
    const s = new PySet()
    for (const t of tuples) s.add(t)
    return s
  }

  add(t: number[]): void {
    this.addEntry({t, k: t.join(','), h: pyTupleHash(t)})
  }

  *[Symbol.iterator](): IterableIterator<number[]> {
    for (const e of this.table) if (e) yield e.t
  }

  private insertClean(e: PyEntry): void {
    const mask = this.mask
    let perturb = e.h
    let i = Number(e.h & BigInt(mask))
    for (;;) {
      if (this.table[i] === null) {
        this.table[i] = e
        return
      }
      if (i + 9 <= mask) {
        for (let j = 0; j < 9; j++) {
          i++
          if (this.table[i] === null) {
            this.table[i] = e
            return
          }
        }
      }
      perturb >>= 5n
      i = Number((BigInt(i) * 5n + 1n + perturb) & BigInt(mask))
    }
  }

  private resize(minused: number): void {
    let size = 8
    while (size <= minused) size <<= 1
    const old = this.table
    this.mask = size - 1
    this.table = new Array(size).fill(null)
    for (const e of old) if (e) this.insertClean(e)
  }

  private addEntry(e: PyEntry): void {
    const mask = this.mask
    let i = Number(e.h & BigInt(mask))
    let perturb = e.h
    for (;;) {
      let probes = i + 9 <= mask ? 9 : 0
      let j = i
      for (;;) {
        const x = this.table[j]
        if (x === null) {
          this.table[j] = e
          this.fill++
          this.used++
          if (this.fill * 5 >= mask * 3) this.resize(this.used > 50000 ? this.used * 2 : this.used * 4)
          return
        }
        if (x.h === e.h && x.k === e.k) return
        if (probes-- === 0) break
        j++
      }
      perturb >>= 5n
      i = Number((BigInt(i) * 5n + 1n + perturb) & BigInt(mask))
    }
  }

  /** this |= other (set_merge). */
  merge(other: PySet): void {
    if (other === this || other.used === 0) return
    if ((this.fill + other.used) * 5 >= this.mask * 3) this.resize((this.used + other.used) * 2)
    if (this.fill === 0 && this.mask === other.mask) {
      this.table = other.table.slice()
      this.fill = other.fill
      this.used = other.used
      return
    }
    if (this.fill === 0) {
      this.fill = other.used
      this.used = other.used
      for (const e of other.table) if (e) this.insertClean(e)
      return
    }
    for (const e of other.table) if (e) this.addEntry(e)
  }
}
