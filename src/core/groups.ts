/**
 * Placement groups (placemat's own): a named set of consumers with a rule on where they may
 * be, kept as data so that the rule is checked again by every change that could break it,
 * not only by the claim that placed a member.
 *
 *   affinity        every placed member in one domain (host, rack, row or room)
 *   anti-affinity   no two members in one domain
 *   max-per N       at most N members in one domain (Nova's max_server_per_host, at any level)
 *   spread S        member counts across every domain of the level that has a host differ by
 *                   at most S (Kubernetes' topologySpreadConstraints maxSkew)
 *
 * A soft group never refuses anything; it orders candidates, and audit reports it.
 *
 * A member's domains are those of its hosts (host.ts: the roots of the trees its own resources
 * come from, never a sharing provider); a member holding nothing is not placed and counts
 * nowhere, and one holding only shared resources (a volume) is hostless: it counts nowhere
 * either, and a group's record lists it as such. A host in no domain of the rule's level
 * (no rack, row or room there: outside the topology) cannot be shown to keep the rule: a
 * member on it is a breach of its own ("outside the topology"), so a hard group refuses to
 * place a member there and a soft one puts such places after those that keep it. Every host
 * is its own domain, so rules by host are never concerned. Everything here is pure: where hosts are
 * comes from a Locator (the State's topology, or the one a layout change would make), and
 * where members are may be overridden by what a write proposes.
 */
import {conflict, AFFINITY_VIOLATION} from './errors.js'
import {consumerHosts, everyHost, holdsOnlyShared, hostsOfProviders} from './host.js'
import type {State, TopologyLevel} from './state/state.js'

export const GROUP_POLICIES = ['affinity', 'anti-affinity', 'max-per', 'spread'] as const
export type GroupPolicy = (typeof GROUP_POLICIES)[number]

/** Domains a rule can speak of, innermost first. */
export const GROUP_LEVELS = ['host', 'rack', 'row', 'room'] as const
export type GroupLevel = (typeof GROUP_LEVELS)[number]

export interface GroupRule {
  policy: GroupPolicy
  level: GroupLevel
  /** max-per: members allowed in one domain. */
  maxPer?: number
  /** spread: the largest difference allowed between the fullest and the emptiest domain. */
  maxSkew?: number
  /** Orders candidates instead of refusing writes. */
  soft: boolean
}

export interface Group extends GroupRule {
  name: string
  /** Consumer uuids, in the order they joined. */
  members: Set<string>
  generation: number
  createdAt: number
  updatedAt: number
}

/** How a rule reads in messages and tables. */
export function ruleText(r: GroupRule): string {
  const plural = r.level === 'host' ? 'hosts' : `${r.level}s`
  const base =
    r.policy === 'affinity'
      ? `affinity by ${r.level}`
      : r.policy === 'anti-affinity'
        ? `anti-affinity by ${r.level}`
        : r.policy === 'max-per'
          ? `at most ${r.maxPer} per ${r.level}`
          : `spread over ${plural}, max skew ${r.maxSkew}`
  return r.soft ? `${base} (soft)` : base
}

/** Members allowed in one domain, or undefined when the rule sets no such limit. */
export const perDomainLimit = (r: GroupRule): number | undefined =>
  r.policy === 'anti-affinity' ? 1 : r.policy === 'max-per' ? r.maxPer : undefined

// ---- where hosts and members are --------------------------------------------------------------

/** Where hosts are: the domains of a host at a level, every domain of a level, and their names. */
export interface Locator {
  domainsOf(host: string, level: GroupLevel): readonly string[]
  /**
   * Every domain of the level that has a host, full or not (what a spread is measured across:
   * a domain with no host can hold no member, as Kubernetes' maxSkew counts only domains with nodes).
   */
  domains(level: GroupLevel): Iterable<string>
  label(domain: string): string
}

/** Hosts by the topology aggregates they carry, as the State has them. */
export function stateLocator(s: State): Locator {
  return topologyLocator(
    s,
    (host) => s.providers.get(host)?.aggregates ?? [],
    (agg) => s.topology.get(agg),
  )
}

/**
 * A Locator over any assignment of hosts to topology nodes: `aggregatesOf` a host (only the
 * topology ones count) and `nodeOf` an aggregate uuid.
 */
export function topologyLocator(
  s: State,
  aggregatesOf: (host: string) => Iterable<string>,
  nodeOf: (agg: string) => {level: TopologyLevel; name: string} | undefined,
  nodes: Iterable<{uuid: string; level: TopologyLevel}> = s.topology.values(),
): Locator {
  const byLevel = new Map<TopologyLevel, string[]>()
  for (const n of nodes) {
    const list = byLevel.get(n.level) ?? []
    list.push(n.uuid)
    byLevel.set(n.level, list)
  }
  // Every host, found once (a spread by host measures across all of them).
  let hosts: string[] | undefined
  const allHosts = () => (hosts ??= everyHost(s).map((p) => p.uuid))
  // The racks, rows and rooms that have a host, by level, found once in one pass over the hosts.
  let withHosts: Map<GroupLevel, string[]> | undefined
  return {
    domainsOf(host, level) {
      if (level === 'host') return [host]
      const out: string[] = []
      for (const a of aggregatesOf(host)) if (nodeOf(a)?.level === level) out.push(a)
      return out
    },
    domains(level) {
      if (level !== 'host') {
        if (!withHosts) {
          const occupied = new Set<string>()
          for (const h of allHosts()) for (const a of aggregatesOf(h)) occupied.add(a)
          withHosts = new Map([...byLevel].map(([l, ds]) => [l, ds.filter((d) => occupied.has(d))]))
        }
        return withHosts.get(level) ?? []
      }
      return allHosts()
    },
    label(domain) {
      const node = nodeOf(domain)
      return node ? node.name : (s.providers.get(domain)?.name ?? domain)
    },
  }
}

// ---- breaches --------------------------------------------------------------------------------

export interface DomainMembers {
  domain: string
  name: string
  members: string[]
}

/** One way a group's rule is broken: the domains and members involved. */
export interface Breach {
  group: string
  rule: string
  soft: boolean
  why: string
  domains: DomainMembers[]
  /** Equal for the same breach seen twice (a write is refused for breaches it makes, not old ones). */
  key: string
}

/** Where each member is: member -> hosts; a member missing or with no hosts is not placed. */
export type MemberHosts = (member: string) => readonly string[]

/**
 * Each placed member's domains at the group's level, and the members in each domain; `outside`:
 * the members on a host in no domain of the level (member -> those hosts).
 */
export function membersByDomain(g: Group, hostsOf: MemberHosts, loc: Locator) {
  const domainsOfMember = new Map<string, Set<string>>()
  const inDomain = new Map<string, string[]>()
  const outside = new Map<string, string[]>()
  for (const m of g.members) {
    const hosts = hostsOf(m)
    if (hosts.length === 0) continue
    const ds = new Set<string>()
    for (const h of hosts) {
      const at = loc.domainsOf(h, g.level)
      if (at.length === 0) outside.set(m, [...(outside.get(m) ?? []), h])
      for (const d of at) ds.add(d)
    }
    domainsOfMember.set(m, ds)
    for (const d of ds) {
      const list = inDomain.get(d) ?? []
      list.push(m)
      inDomain.set(d, list)
    }
  }
  return {domainsOfMember, inDomain, outside}
}

/** The name a breach gives the members placed outside the topology (`group show` and audit list them under it). */
export const OUTSIDE_TOPOLOGY = '(outside the topology)'

/** Emptiest domains named in a spread's breach (a spread by host may have thousands). */
const SHOWN_DOMAINS = 5

const entry = (loc: Locator, domain: string, members: string[]): DomainMembers => ({
  domain,
  name: loc.label(domain),
  members: [...members].sort(),
})

/** How `g`'s rule is broken with members where `hostsOf` says and hosts where `loc` says. */
export function groupBreaches(g: Group, hostsOf: MemberHosts, loc: Locator): Breach[] {
  const {domainsOfMember, inDomain, outside} = membersByDomain(g, hostsOf, loc)
  const rule = ruleText(g)
  const breach = (why: string, domains: DomainMembers[], key: string): Breach => ({
    group: g.name,
    rule,
    soft: g.soft,
    why,
    domains,
    key: `${g.name}|${key}`,
  })
  const out: Breach[] = []
  // One breach per member outside the topology, so that bringing one in never makes a new one.
  for (const [m, hosts] of outside) {
    const names = hosts.map((h) => loc.label(h)).sort()
    const why = `a member is on ${names.length === 1 ? 'host' : 'hosts'} ${names.join(', ')}, in no ${g.level}: outside the topology, where a rule by ${g.level} cannot be kept`
    out.push(breach(why, [{domain: '', name: OUTSIDE_TOPOLOGY, members: [m]}], `outside:${m}`))
  }
  const limit = perDomainLimit(g)
  if (limit !== undefined) {
    for (const [d, members] of inDomain) {
      if (members.length <= limit) continue
      const e = entry(loc, d, members)
      out.push(breach(`${members.length} members in ${g.level} ${e.name} (at most ${limit})`, [e], `${d}:${e.members.join(',')}`))
    }
  } else if (g.policy === 'affinity') {
    // One placed member keeps any affinity; two or more need a domain in common. Members
    // outside the topology are breaches of their own, above: only the domains of the rest count.
    const inside = [...domainsOfMember.values()].filter((ds) => ds.size > 0)
    if (inside.length > 1) {
      let common: Set<string> | undefined
      for (const ds of inside) common = common ? new Set([...common].filter((d) => ds.has(d))) : new Set(ds)
      if (!common || common.size === 0) {
        const domains = [...inDomain].map(([d, members]) => entry(loc, d, members)).sort((a, b) => a.name.localeCompare(b.name))
        const where = domains.map((e) => `${e.members.length} in ${e.name}`).join(', ')
        out.push(
          breach(
            `members are not in one ${g.level}: ${where}`,
            domains,
            domains.map((e) => `${e.domain}:${e.members.join(',')}`).join(';'),
          ),
        )
      }
    }
  } else {
    // spread: across every domain of the level that has a host, those with no member included.
    const counts = new Map<string, number>()
    for (const d of loc.domains(g.level)) counts.set(d, 0)
    for (const [d, members] of inDomain) counts.set(d, members.length)
    if (counts.size > 1) {
      // A loop, not Math.max(...): a spread by host may count across a million hosts.
      let max = 0
      let min = Infinity
      for (const n of counts.values()) {
        if (n > max) max = n
        if (n < min) min = n
      }
      if (max - min > (g.maxSkew ?? 1)) {
        const at = (n: number) => [...counts].filter(([, c]) => c === n).map(([d]) => d)
        const fullest = at(max).map((d) => entry(loc, d, inDomain.get(d) ?? []))
        const emptiest = at(min)
        // The first few of the emptiest, in the level's order (layout order; hosts as created).
        const shown = emptiest.slice(0, SHOWN_DOMAINS).map((d) => entry(loc, d, inDomain.get(d) ?? []))
        const names = (es: DomainMembers[], all: number) =>
          es
            .map((e) => e.name)
            .sort()
            .join(', ') + (all > es.length ? ` and ${all - es.length} more` : '')
        out.push(
          breach(
            `skew ${max - min} (at most ${g.maxSkew}): ${max} in ${names(fullest, fullest.length)}, ${min} in ${names(shown, emptiest.length)}`,
            [...fullest, ...shown],
            // The occupied domains' counts and the least: the empty ones need not be listed.
            `${[...inDomain]
              .map(([d, m]) => `${d}=${m.length}`)
              .sort()
              .join(';')}|min=${min}`,
          ),
        )
      }
    }
  }
  return out
}

/** Every way the hard groups of `s` are broken where their members are now (what an import must not write). */
export function hardGroupBreaches(s: State): Breach[] {
  const loc = stateLocator(s)
  return [...s.groups.values()].filter((g) => !g.soft).flatMap((g) => groupBreaches(g, (m) => consumerHosts(s, m), loc))
}

// ---- what a write would break ------------------------------------------------------------------

/** A change a write proposes: members placed elsewhere, and/or hosts moved in the topology. */
export interface ProposedChange {
  /** consumer -> the providers it would hold (its whole allocation). */
  placements?: Map<string, Iterable<string>>
  /** Where hosts would be (a layout change); the State's topology when absent. */
  locator?: Locator
  /** Members a write adds to groups (a claim naming a group): group -> consumers. */
  joins?: Map<string, string[]>
}

/**
 * The breaches of hard groups that `change` would make and that are not there now (with
 * `soft`, of soft groups too: what a choice between places would rather not make). Only the
 * groups it can touch are looked at: those with a member it places or adds, or every group
 * when hosts move.
 */
export function newBreaches(s: State, change: ProposedChange, opts: {soft?: boolean} = {}): Breach[] {
  const placed = new Map<string, string[]>()
  for (const [c, providers] of change.placements ?? []) placed.set(c, hostsOfProviders(s, providers))
  const affected = (g: Group) =>
    change.locator !== undefined || (change.joins?.has(g.name) ?? false) || [...placed.keys()].some((c) => g.members.has(c))
  const now = stateLocator(s)
  const after = change.locator ?? now
  const storedOf: MemberHosts = (m) => consumerHosts(s, m)
  const proposedOf: MemberHosts = (m) => placed.get(m) ?? consumerHosts(s, m)
  const out: Breach[] = []
  for (const g of s.groups.values()) {
    if ((g.soft && !opts.soft) || !affected(g)) continue
    const joined = change.joins?.get(g.name)
    const future: Group = joined ? {...g, members: new Set([...g.members, ...joined])} : g
    const before = new Set(groupBreaches(g, storedOf, now).map((b) => b.key))
    for (const b of groupBreaches(future, proposedOf, after)) if (!before.has(b.key)) out.push(b)
  }
  return out
}

/** A breach as the API answers it and the command line shows it. */
export interface BreachRecord {
  group: string
  rule: string
  soft: boolean
  why: string
  domains: Array<{name: string; members: string[]}>
}

export const breachRecord = (b: Breach): BreachRecord => ({
  group: b.group,
  rule: b.rule,
  soft: b.soft,
  why: b.why,
  domains: b.domains.map((d) => ({name: d.name, members: d.members})),
})

/** The groups `consumer` is a member of, and `joining` (a group it is about to join), by name. */
export function consumerGroups(s: State, consumer: string, joining?: Group): Group[] {
  const out = [...s.groups.values()].filter((g) => g.members.has(consumer) && g.name !== joining?.name)
  if (joining) out.push(joining)
  return out.sort((a, b) => a.name.localeCompare(b.name))
}

/**
 * For many candidate places of one consumer (a claim's candidates): the breaches each would
 * make in `groups` that are not there now, the consumer counted as a member of each, where the
 * candidate is (its allocations there replace what it holds). What does not depend on the
 * candidate (the breaches now, where every other member is) is found once.
 */
export function placementJudge(
  s: State,
  consumer: string,
  groups: Group[],
  loc: Locator = stateLocator(s),
): (providers: Iterable<string>) => Breach[] {
  const parts = groups.map((g) => {
    const where = new Map([...g.members].map((m) => [m, consumerHosts(s, m)]))
    const before = new Set(groupBreaches(g, (m) => where.get(m) ?? [], loc).map((b) => b.key))
    const future: Group = g.members.has(consumer) ? g : {...g, members: new Set([...g.members, consumer])}
    return {where, before, future}
  })
  return (providers) => {
    const hosts = hostsOfProviders(s, providers)
    return parts.flatMap(({where, before, future}) =>
      groupBreaches(future, (m) => (m === consumer ? hosts : (where.get(m) ?? [])), loc).filter((b) => !before.has(b.key)),
    )
  }
}

/** placementJudge for a newcomer to `g`: a consumer that holds nothing yet and is in no group. */
export const newcomerJudge = (s: State, g: Group, loc: Locator = stateLocator(s)) => placementJudge(s, NEWCOMER, [g], loc)

/** Stands for a consumer being placed: it holds nothing yet, and is in no group. */
export const NEWCOMER = '(newcomer)'

/** What a write refused for its breaches says: each group, its rule and the members involved. */
export function breachText(b: BreachRecord): string {
  const where = b.domains.map((d) => `${d.name}: ${d.members.join(', ')}`).join('; ')
  return `group ${b.group} (${b.rule}): ${b.why} [${where}]`
}

/** 409 placemat.affinity_violation naming every group broken, its rule and its members. */
export const violationError = (breaches: BreachRecord[]) =>
  conflict(`Placement group rule violated: ${breaches.map(breachText).join('; ')}`, AFFINITY_VIOLATION)

/** Refuses a write that would break hard groups, unless allowed. */
export function refuseBreaches(breaches: BreachRecord[], allow = false): void {
  if (breaches.length && !allow) throw violationError(breaches)
}

/** Refuses a write whose `change` would break hard groups; allowed, the breaches are not even looked for. */
export function refuseNewBreaches(s: State, change: ProposedChange, allow = false): void {
  if (!allow) refuseBreaches(newBreaches(s, change))
}

// ---- what the API shows ------------------------------------------------------------------------

/** Where a member is: its hosts and their racks, rows and rooms, by name. */
export interface MemberPlacement {
  consumer: string
  hosts: string[]
  rack: string[]
  row: string[]
  room: string[]
  /** It holds only shared resources (a volume): placed, but on no host, so the rule skips it. */
  hostless: boolean
}

export interface GroupRecord {
  name: string
  policy: GroupPolicy
  level: GroupLevel
  max_per?: number
  max_skew?: number
  soft: boolean
  rule: string
  generation: number
  members: string[]
  created_at: string
  updated_at: string
  /** Every way the rule is broken now (soft groups included). */
  violations: BreachRecord[]
  /** Members that hold only shared resources (volumes): on no host, skipped by the rule. */
  hostless: string[]
  /** With `placements`: where each member is. */
  placements?: MemberPlacement[]
}

export function memberPlacement(s: State, consumer: string, loc: Locator = stateLocator(s)): MemberPlacement {
  const hosts = consumerHosts(s, consumer)
  const names = (level: GroupLevel) => [...new Set(hosts.flatMap((h) => loc.domainsOf(h, level)))].map((d) => loc.label(d)).sort()
  return {
    consumer,
    hosts: hosts.map((h) => s.providers.get(h)?.name ?? h).sort(),
    rack: names('rack'),
    row: names('row'),
    room: names('room'),
    hostless: holdsOnlyShared(s, consumer),
  }
}

export function groupRecord(s: State, g: Group, opts: {placements?: boolean} = {}): GroupRecord {
  const loc = stateLocator(s)
  const r: GroupRecord = {
    name: g.name,
    policy: g.policy,
    level: g.level,
    soft: g.soft,
    rule: ruleText(g),
    generation: g.generation,
    members: [...g.members],
    created_at: new Date(g.createdAt).toISOString(),
    updated_at: new Date(g.updatedAt).toISOString(),
    violations: groupBreaches(g, (m) => consumerHosts(s, m), loc).map(breachRecord),
    hostless: [...g.members].filter((m) => holdsOnlyShared(s, m)),
  }
  if (g.maxPer !== undefined) r.max_per = g.maxPer
  if (g.maxSkew !== undefined) r.max_skew = g.maxSkew
  if (opts.placements) r.placements = [...g.members].map((m) => memberPlacement(s, m, loc))
  return r
}
