/**
 * A Map bounded to `capacity` entries, and optionally to a total weight (`weigh` of each
 * value), that drops the least recently used ones. A value heavier than the whole budget is
 * not kept.
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, V>()
  private weight = 0

  constructor(
    private readonly capacity: number,
    private readonly maxWeight = Infinity,
    private readonly weigh: (value: V) => number = () => 0,
  ) {}

  get(key: K): V | undefined {
    const hit = this.entries.get(key)
    if (hit !== undefined) {
      // Most recently used last.
      this.entries.delete(key)
      this.entries.set(key, hit)
    }
    return hit
  }

  set(key: K, value: V): void {
    this.delete(key)
    const w = this.weigh(value)
    if (w > this.maxWeight) return
    this.entries.set(key, value)
    this.weight += w
    while (this.entries.size > this.capacity || this.weight > this.maxWeight) this.delete(this.entries.keys().next().value!)
  }

  clear(): void {
    this.entries.clear()
    this.weight = 0
  }

  private delete(key: K): void {
    const old = this.entries.get(key)
    if (old === undefined) return
    this.entries.delete(key)
    this.weight -= this.weigh(old)
  }
}
