import type {Inventory, Provider} from './state.js'

/**
 * What follows the State's changes as they are made (the metrics' rollups, core/rollups.ts): told
 * by the mutation methods. The State knows this interface, not what implements it.
 */
export interface StateListener {
  /** Everything is to be worked out again (a load, a class renamed). */
  forgetAll(): void
  /** `p`'s inventory of `rc` goes from `before` to `after` (undefined: none). */
  inventory(p: Provider, rc: string, before: Inventory | undefined, after: Inventory | undefined): void
  /** `p`'s usage of `rc` moves by `d`. */
  usage(p: Provider, rc: string, d: number): void
  /** A consumer's allocations went from `before` to `after` providers. */
  holding(before: number, after: number): void
  /** `p` joins (1) or leaves (-1) the cloud with what it has. */
  provider(p: Provider, sign: 1 | -1): void
  /** `p` moves in its tree, or its aggregates change (told before and after). */
  reshaped(p: Provider): void
  /** A rack, row or room made, changed or removed. */
  topologyNode(uuid: string): void
  /** Whether a provider shares its inventory changed. */
  sharingChanged(): void
}

/** Listens to nothing: a State no one asked rollups of. */
export const NOBODY: StateListener = {
  forgetAll() {},
  inventory() {},
  usage() {},
  holding() {},
  provider() {},
  reshaped() {},
  topologyNode() {},
  sharingChanged() {},
}
