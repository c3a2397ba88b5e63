/**
 * Typed arrays that grow: the provider index keeps one entry per provider and per inventory,
 * and a write adds providers and inventories without rebuilding it.
 */
type Typed = Int32Array | Float64Array | Uint8Array

/** `a` itself when it holds `size` entries, else a copy at least twice as big (new entries: `fill`). */
export function ensure<T extends Typed>(a: T, size: number, fill = 0): T {
  if (a.length >= size) return a
  const b = new (a.constructor as new (n: number) => T)(Math.max(size, a.length * 2, 16))
  b.set(a)
  if (fill !== 0) b.fill(fill, a.length)
  return b
}

/**
 * The inventories of one resource class: providers in index order, each with its inventory
 * slot. `provs` and `slots` are views of the live entries (valid until the next change).
 */
export class ClassInventories {
  provs: Int32Array
  slots: Int32Array
  /** provider -> slot, or -1; built on first use, kept through changes. */
  slotOf: Int32Array | null = null
  private provBuf: Int32Array
  private slotBuf: Int32Array
  private size: number

  constructor(provs: Int32Array, slots: Int32Array) {
    this.provBuf = provs
    this.slotBuf = slots
    this.size = provs.length
    this.provs = provs
    this.slots = slots
  }

  /** Provider p's inventory of this class is at slot s (p may already have one). */
  put(p: number, s: number): void {
    const at = this.find(p)
    if (at < this.size && this.provBuf[at] === p) this.slotBuf[at] = s
    else {
      this.provBuf = ensure(this.provBuf, this.size + 1)
      this.slotBuf = ensure(this.slotBuf, this.size + 1)
      // Providers are added with the highest index: the common case moves nothing.
      this.provBuf.copyWithin(at + 1, at, this.size)
      this.slotBuf.copyWithin(at + 1, at, this.size)
      this.provBuf[at] = p
      this.slotBuf[at] = s
      this.size++
      this.views()
    }
    if (this.slotOf) this.slotOf[p] = s
  }

  /** Provider p no longer has an inventory of this class. */
  remove(p: number): void {
    const at = this.find(p)
    if (at >= this.size || this.provBuf[at] !== p) return
    this.provBuf.copyWithin(at, at + 1, this.size)
    this.slotBuf.copyWithin(at, at + 1, this.size)
    this.size--
    this.views()
    if (this.slotOf) this.slotOf[p] = -1
  }

  /** The slot map, for `providers` index positions. */
  slotMap(providers: number): Int32Array {
    if (!this.slotOf || this.slotOf.length < providers) {
      // Room for providers still to come, so that adding one does not rebuild the map.
      const a = new Int32Array(providers + (providers >> 2) + 16).fill(-1)
      for (let k = 0; k < this.size; k++) a[this.provBuf[k]] = this.slotBuf[k]
      this.slotOf = a
    }
    return this.slotOf
  }

  /** First entry whose provider is >= p. */
  private find(p: number): number {
    let lo = 0
    let hi = this.size
    if (hi > 0 && this.provBuf[hi - 1] < p) return hi
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.provBuf[mid] < p) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  private views(): void {
    this.provs = this.provBuf.subarray(0, this.size)
    this.slots = this.slotBuf.subarray(0, this.size)
  }
}
