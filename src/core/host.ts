/**
 * What a host is, in one place: every rule and view that speaks of hosts (placement groups at
 * every level, --same/--different/--near/--far, claim --spread, drain, consumers' hosts, the
 * rack/row/room views and their metrics, why nothing fits) asks these functions.
 *
 * A host is the root of a provider tree that holds inventory, on itself (a bare-metal node) or
 * on its descendants (a compute node whose VCPU sits on NUMA children). A provider that shares
 * its inventory through its aggregates (MISC_SHARES_VIA_AGGREGATE, shared storage) is never a
 * host, nor is the root of its tree made one by it: what a consumer takes from it is shared, and
 * places the consumer nowhere. A consumer's hosts are the roots of the providers its own
 * resources come from; one that holds only shared resources (a volume) has no host, and so no
 * rack, row or room.
 *
 * A leaf: it imports nothing but the State's types. The functions of one provider's host read
 * providers through ProviderLookup, which a State is and which the command line makes of what
 * plain Placement lists (roots, and which providers share), so both decide with the same code.
 */
import type {Provider, State} from './state/state.js'

/** What deciding a provider's host needs of it. */
export interface HostFacts {
  uuid: string
  root: string
  traits: {has(trait: string): boolean}
}

/** Providers by uuid: a State, or what a client read. */
export interface ProviderLookup<P extends HostFacts = HostFacts> {
  providers: {get(uuid: string): P | undefined}
}

/** The trait of a provider that shares its inventory with the members of its aggregates. */
export const SHARES_VIA_AGGREGATE = 'MISC_SHARES_VIA_AGGREGATE'

/** The trait nova's compute service sets on a host it disables: a host out of service. */
export const DISABLED_TRAIT = 'COMPUTE_STATUS_DISABLED'

/** Whether a provider shares its inventory through its aggregates. */
export const isSharing = (p: Pick<HostFacts, 'traits'>): boolean => p.traits.has(SHARES_VIA_AGGREGATE)

/** Whether a host (root provider) is out of service. */
export const isDisabled = (p: Pick<HostFacts, 'traits'>): boolean => p.traits.has(DISABLED_TRAIT)

/** Whether `p` is a host: a root that does not share, with inventory somewhere in its tree (sharing providers' aside). */
export function isHost(s: State, p: Provider): boolean {
  if (p.parent !== null || isSharing(p)) return false
  const stack = [p]
  for (let depth = 0; stack.length && depth <= s.providers.size; depth++) {
    const q = stack.pop()!
    if (q.inventories.size > 0 && !isSharing(q)) return true
    for (const c of q.children) {
      const child = s.providers.get(c)
      if (child) stack.push(child)
    }
  }
  return false
}

/**
 * The host whose resources `p` gives: its root, unless `p` shares (then it gives shared resources,
 * of no host) or its root does (a sharing tree is no host). Undefined for those and for an unknown provider.
 */
export function hostOfProvider<P extends HostFacts>(s: ProviderLookup<P>, p: P | undefined): P | undefined {
  if (!p || isSharing(p)) return undefined
  const root = p.root === p.uuid ? p : s.providers.get(p.root)
  return root && !isSharing(root) ? root : undefined
}

/** The hosts (uuids) of a set of providers: what an allocation on them occupies, shared resources aside. */
export function hostsOfProviders(s: ProviderLookup, providers: Iterable<string>): string[] {
  const hosts = new Set<string>()
  for (const rp of providers) {
    const h = hostOfProvider(s, s.providers.get(rp))
    if (h) hosts.add(h.uuid)
  }
  return [...hosts]
}

/** The hosts a consumer's allocations are on, as stored (none for a consumer that holds only shared resources). */
export function consumerHosts(s: State, consumer: string): string[] {
  const c = s.consumers.get(consumer)
  return c ? hostsOfProviders(s, c.allocations.keys()) : []
}

/** Whether a consumer holds resources, and every one of them shared: placed, but on no host. */
export function holdsOnlyShared(s: State, consumer: string): boolean {
  const c = s.consumers.get(consumer)
  return c !== undefined && c.allocations.size > 0 && hostsOfProviders(s, c.allocations.keys()).length === 0
}

/** Every host of the State, in its order (one pass over the providers, not a walk per root). */
export function everyHost(s: State): Provider[] {
  const holding = new Set<string>()
  for (const p of s.providers.values()) if (p.inventories.size > 0 && !isSharing(p)) holding.add(p.root)
  const out: Provider[] = []
  for (const p of s.providers.values()) if (p.parent === null && holding.has(p.uuid) && !isSharing(p)) out.push(p)
  return out
}

/** The hosts among an aggregate's members (a rack's hosts: its sharing providers and child providers are not). */
export function hostMembers(s: State, aggregate: string): Provider[] {
  const out: Provider[] = []
  for (const u of s.aggregateMembers.get(aggregate) ?? []) {
    const p = s.providers.get(u)
    if (p && isHost(s, p)) out.push(p)
  }
  return out
}
