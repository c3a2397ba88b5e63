/**
 * Collections many providers share: the empty ones every new provider starts with, and, once
 * loaded, one copy of each distinct inventory set, trait set and aggregate set (a million
 * providers have a handful of distinct ones). They refuse to change in place; the State's
 * mutators replace a provider's collection with its own copy before changing it.
 */
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
