/**
 * Exact memo of serialized read answers: keyed by the State version (bumped by every
 * committed write, ours or another process's), the microversion and the query, so a
 * hit is byte for byte what recomputing would give. Schedulers ask the same question
 * many times between writes; a hit skips the search and the JSON encoding.
 */
export class ResponseCache {
  private entries = new Map<string, Buffer>()
  private version = -1

  constructor(private readonly capacity = 64) {}

  get(version: number, key: string): Buffer | undefined {
    if (version !== this.version) {
      this.entries.clear()
      this.version = version
      return undefined
    }
    const hit = this.entries.get(key)
    if (hit !== undefined) {
      // Most recently used last.
      this.entries.delete(key)
      this.entries.set(key, hit)
    }
    return hit
  }

  set(version: number, key: string, text: Buffer): void {
    if (version !== this.version) {
      this.entries.clear()
      this.version = version
    }
    this.entries.set(key, text)
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!)
  }
}
