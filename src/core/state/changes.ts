/** What a transaction changed, by entity: the store writes exactly this. */

/**
 * 'generation': only generation and updated_at changed; 'row': any column of the provider row;
 * 'created': the provider was made in this transaction (perhaps after one of its uuid was deleted).
 */
export type ProviderPart = 'row' | 'generation' | 'inventories' | 'traits' | 'aggregates' | 'created'

/** A bit per ProviderPart: a batch of a million providers marks a million small numbers, not sets. */
export const PART: Readonly<Record<ProviderPart, number>> = {row: 1, generation: 2, inventories: 4, traits: 8, aggregates: 16, created: 32}

/** What a transaction changed, by entity; the store writes exactly this. */
export class Changes {
  /** uuid -> the PART bits that changed. */
  providers = new Map<string, number>()
  deletedProviders = new Set<string>()
  consumers = new Set<string>()
  deletedConsumers = new Set<string>()
  classes = new Set<string>()
  deletedClasses = new Set<string>()
  traits = new Set<string>()
  deletedTraits = new Set<string>()
  topologyNodes = new Set<string>()
  deletedTopologyNodes = new Set<string>()
  topologyGeneration = false
  groups = new Set<string>()
  deletedGroups = new Set<string>()
  /** Consumers whose moved record was set or removed (State.moved says which). */
  moved = new Set<string>()
  /** Aggregates whose name was set or removed (State.aggregateNames says which). */
  aggregateNames = new Set<string>()

  /** Adds what a later transaction changed, as if both had been one. */
  absorb(later: Changes): void {
    const follow = <T>(kept: Set<T>, gone: Set<T>, laterKept: Iterable<T>, laterGone: Iterable<T>) => {
      for (const k of laterGone) {
        kept.delete(k)
        gone.add(k)
      }
      // Deleted then made again: the flush deletes first and writes the new rows after.
      for (const k of laterKept) kept.add(k)
    }
    for (const u of later.deletedProviders) {
      this.providers.delete(u)
      this.deletedProviders.add(u)
    }
    for (const [u, parts] of later.providers) this.providers.set(u, (this.providers.get(u) ?? 0) | parts)
    follow(this.consumers, this.deletedConsumers, later.consumers, later.deletedConsumers)
    follow(this.classes, this.deletedClasses, later.classes, later.deletedClasses)
    follow(this.traits, this.deletedTraits, later.traits, later.deletedTraits)
    follow(this.topologyNodes, this.deletedTopologyNodes, later.topologyNodes, later.deletedTopologyNodes)
    follow(this.groups, this.deletedGroups, later.groups, later.deletedGroups)
    for (const k of later.moved) this.moved.add(k)
    for (const k of later.aggregateNames) this.aggregateNames.add(k)
    this.topologyGeneration ||= later.topologyGeneration
  }

  get empty(): boolean {
    return (
      this.providers.size +
        this.deletedProviders.size +
        this.consumers.size +
        this.deletedConsumers.size +
        this.classes.size +
        this.deletedClasses.size +
        this.traits.size +
        this.deletedTraits.size +
        this.topologyNodes.size +
        this.deletedTopologyNodes.size +
        this.groups.size +
        this.deletedGroups.size +
        this.moved.size +
        this.aggregateNames.size ===
        0 && !this.topologyGeneration
    )
  }
}
