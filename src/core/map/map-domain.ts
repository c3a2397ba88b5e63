/**
 * One domain of the map, as the page shows it when it is hovered or selected (GET
 * /placemat/v1/map/domain?level=LEVEL&name=NAME): what its hosts' trees hold and use of every
 * class, its hosts (the disabled ones named), the consumers on them, the pools they reach, and
 * the placement groups with a member on them, each with its rule and every member (where it is,
 * and whether it is here). Long lists are cut (the counts say how many there are).
 */
import {PlacementError} from '../errors.js'
import {groupBreaches, ruleText, stateLocator} from '../groups.js'
import {consumerHosts, everyHost, isDisabled, isSharing} from '../host.js'
import {capacityOf} from '../inventory-capacity.js'
import type {Provider, State} from '../state/state.js'
import {hostDomains, nodeUuid} from '../topology.js'
import type {DomainName} from './map-layout.js'

/** At most this many of a list are named (hosts, consumers, members of a group). */
export const LISTED = 200

export interface DomainGroupMember {
  consumer: string
  /** Its hosts, by name. */
  hosts: string[]
  /** One of its hosts is in the domain. */
  here: boolean
}

export interface DomainGroup {
  name: string
  rule: string
  soft: boolean
  /** How many ways its rule is broken now. */
  violations: number
  member_count: number
  members: DomainGroupMember[]
}

export interface MapDomain extends DomainName {
  host_count: number
  /** Its hosts by name (at most LISTED). */
  hosts: string[]
  /** Those of its hosts out of service. */
  disabled: string[]
  /** Per class: what its hosts' trees hold (Placement's capacity) and use, sharing pools aside. */
  usage: Record<string, {capacity: number; used: number}>
  consumer_count: number
  /** The consumers on its hosts (at most LISTED). */
  consumers: string[]
  /** The sharing pools its hosts reach, by name. */
  pools: string[]
  /** Placement groups with a member on its hosts. */
  groups: DomainGroup[]
}

const LEVELS = ['host', 'rack', 'row', 'room', 'cloud'] as const

/** The domain's hosts: 404 for a domain the cloud does not have. */
function domainHosts(s: State, d: DomainName): Provider[] {
  if (!LEVELS.includes(d.level)) throw new PlacementError(400, `Invalid level ${d.level}: one of ${LEVELS.join(', ')}.`)
  if (d.level === 'cloud') return everyHost(s)
  if (d.level === 'host') {
    const p = s.providerByName.get(d.name)
    const host = p && everyHost(s).find((h) => h === p)
    if (!host) throw new PlacementError(404, `No host named ${d.name}.`)
    return [host]
  }
  if (!s.topology.has(nodeUuid(d.level, d.name))) throw new PlacementError(404, `No ${d.level} named ${d.name}.`)
  const level = d.level
  return everyHost(s).filter((h) => hostDomains(s, h)[level] === d.name)
}

/** The domain `d` of `s` (see the module's comment). */
export function mapDomain(s: State, d: DomainName): MapDomain {
  const hosts = domainHosts(s, d).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const here = new Set(hosts.map((h) => h.uuid))
  const usage: MapDomain['usage'] = {}
  const consumers = new Set<string>()
  const pools = new Set<string>()
  const sharing = [...s.providers.values()].filter(isSharing)
  for (const h of hosts) {
    const aggregates = new Set<string>()
    for (const p of s.subtree(h.uuid)) {
      for (const a of p.aggregates) aggregates.add(a)
      for (const c of p.allocations.keys()) consumers.add(c)
      if (isSharing(p)) continue
      for (const [rc, inv] of p.inventories) {
        const u = (usage[rc] ??= {capacity: 0, used: 0})
        u.capacity += capacityOf(inv)
        u.used += p.usages.get(rc) ?? 0
      }
    }
    for (const q of sharing) if (q.root !== h.uuid && [...q.aggregates].some((a) => aggregates.has(a))) pools.add(q.name)
  }
  const loc = stateLocator(s)
  const groups: DomainGroup[] = []
  for (const g of [...s.groups.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const members = [...g.members].map((m) => {
      const at = consumerHosts(s, m)
      return {consumer: m, hosts: at.map((u) => s.providers.get(u)?.name ?? u).sort(), here: at.some((u) => here.has(u))}
    })
    if (!members.some((m) => m.here)) continue
    groups.push({
      name: g.name,
      rule: ruleText(g),
      soft: g.soft,
      violations: groupBreaches(g, (m) => consumerHosts(s, m), loc).length,
      member_count: members.length,
      // Those here first.
      members: [...members.filter((m) => m.here), ...members.filter((m) => !m.here)].slice(0, LISTED),
    })
  }
  return {
    level: d.level,
    name: d.name,
    host_count: hosts.length,
    hosts: hosts.slice(0, LISTED).map((h) => h.name),
    disabled: hosts.filter(isDisabled).map((h) => h.name),
    usage: Object.fromEntries(Object.entries(usage).sort(([a], [b]) => (a < b ? -1 : 1))),
    consumer_count: consumers.size,
    consumers: [...consumers].sort().slice(0, LISTED),
    pools: [...pools].sort(),
    groups,
  }
}
