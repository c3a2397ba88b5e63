/**
 * Collections many providers share: the empty ones every new provider starts with, and, once
 * loaded, one copy of each distinct inventory set, trait set and aggregate set (a million
 * providers have a handful of distinct ones). They refuse to change in place; the State's
 * mutators replace a provider's collection with its own copy before changing it.
 */
import type {Inventory} from './state.js'

const refuse = (): never => {
  throw new Error('a shared collection is never changed in place')
}

export class SharedSet<T> extends Set<T> {
  private sealed = false
  constructor(items: Iterable<T> = []) {
    super()
    for (const x of items) super.add(x)
    this.sealed = true
  }
  override add(x: T): this {
    return this.sealed ? refuse() : super.add(x)
  }
  override delete(): boolean {
    return refuse()
  }
  override clear(): void {
    refuse()
  }
}

export class SharedMap<K, V> extends Map<K, V> {
  private sealed = false
  constructor(entries: Iterable<readonly [K, V]> = []) {
    super()
    for (const [k, v] of entries) super.set(k, v)
    this.sealed = true
  }
  override set(k: K, v: V): this {
    return this.sealed ? refuse() : super.set(k, v)
  }
  override delete(): boolean {
    return refuse()
  }
  override clear(): void {
    refuse()
  }
}

/** The empty set and map every new provider starts with. */
export const emptySet = <T>(): Set<T> => EMPTY_SET as Set<T>
export const emptyMap = <K, V>(): Map<K, V> => EMPTY_MAP as Map<K, V>
const EMPTY_SET = new SharedSet<never>()
const EMPTY_MAP = new SharedMap<never, never>()

/** `s` itself if it may be changed in place, else a copy of it that may. */
export const ownSet = <T>(s: Set<T>): Set<T> => (s instanceof SharedSet ? new Set(s) : s)
export const ownMap = <K, V>(m: Map<K, V>): Map<K, V> => (m instanceof SharedMap ? new Map(m) : m)

/**
 * One shared copy per distinct sequence of keys (strings, numbers or interned objects), found by
 * walking a trie one key at a time: no key string is built, so interning a million providers'
 * collections costs a few map lookups each.
 */
export class Interner<T> {
  private readonly root: TrieNode<T> = {next: null, value: undefined}
  of(keys: readonly unknown[], make: () => T): T {
    let node = this.root
    for (const k of keys) {
      const next = (node.next ??= new Map())
      let child = next.get(k)
      if (!child) next.set(k, (child = {next: null, value: undefined}))
      node = child
    }
    if (node.value === undefined) node.value = make()
    return node.value
  }
}

interface TrieNode<T> {
  next: Map<unknown, TrieNode<T>> | null
  value: T | undefined
}

/**
 * The State's one copy of each distinct inventory record, inventory set, trait set and
 * aggregate set, given to every provider that has it (at load and on each write that sets
 * them): a million providers made alike hold a handful of collections, not millions.
 */
export class SharedValues {
  private readonly records = new Interner<Inventory>()
  private readonly inventorySets = new Interner<Map<string, Inventory>>()
  private readonly traitSets = new Interner<Set<string>>()
  private readonly aggregateSets = new Interner<Set<string>>()

  record(v: Inventory): Inventory {
    return this.recordOf(v.total, v.reserved, v.min_unit, v.max_unit, v.step_size, v.allocation_ratio)
  }

  recordOf(total: number, reserved: number, min_unit: number, max_unit: number, step_size: number, allocation_ratio: number): Inventory {
    return this.records.of([total, reserved, min_unit, max_unit, step_size, allocation_ratio], () => ({
      total,
      reserved,
      min_unit,
      max_unit,
      step_size,
      allocation_ratio,
    }))
  }

  /** The shared inventory set with these classes and records, in this order. */
  inventories(entries: Iterable<readonly [string, Inventory]>): Map<string, Inventory> {
    const keys: Array<string | Inventory> = []
    for (const [rc, v] of entries) keys.push(rc, this.record(v))
    return this.inventorySet(keys)
  }

  /** The same, from class, shared record, class, shared record... */
  inventorySet(keys: ReadonlyArray<string | Inventory>): Map<string, Inventory> {
    return this.inventorySets.of(keys, () => {
      const m: [string, Inventory][] = []
      for (let k = 0; k < keys.length; k += 2) m.push([keys[k] as string, keys[k + 1] as Inventory])
      return new SharedMap(m)
    })
  }

  traits(names: readonly string[]): Set<string> {
    return this.traitSets.of(names, () => new SharedSet(names))
  }

  aggregates(uuids: readonly string[]): Set<string> {
    return this.aggregateSets.of(uuids, () => new SharedSet(uuids))
  }
}
