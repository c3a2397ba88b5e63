import {Lru} from './lru.js'

/**
 * Exact memo of serialized read answers: keyed by the State version (bumped by every
 * committed write, ours or another process's), the microversion and the query, so a
 * hit is byte for byte what recomputing would give. Schedulers ask the same question
 * many times between writes; a hit skips the search and the JSON encoding. The bytes kept
 * are bounded too: a few large answers must not hold the daemon's memory.
 */
export class ResponseCache<T extends {length: number} | {body: {length: number}} = Buffer> {
  private readonly entries: Lru<string, T>
  private version = -1

  constructor(capacity = 64, maxBytes = 64 * 1024 * 1024) {
    this.entries = new Lru(capacity, maxBytes, (v) => ('body' in v ? v.body.length : v.length))
  }

  get(version: number, key: string): T | undefined {
    if (version !== this.version) {
      this.entries.clear()
      this.version = version
      return undefined
    }
    return this.entries.get(key)
  }

  set(version: number, key: string, value: T): void {
    if (version !== this.version) {
      this.entries.clear()
      this.version = version
    }
    this.entries.set(key, value)
  }
}
