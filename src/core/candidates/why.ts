/**
 * Why a request has no allocation candidates: which of its parts empties them. The request is
 * taken apart — the resources of each group; then group_policy=isolate, in_tree, each required
 * and forbidden trait, each member_of, same_subtree, each root trait, the disabled hosts left out;
 * then the rules of the consumer's placement groups — and built up again one part at a time, the
 * hosts (tree roots) with a candidate counted after each (the engine's own search, so every
 * quirk of Placement's counts). The first part that leaves no host is the answer; it is then left
 * out and the rest added on, so a second part that would also empty them is named too.
 *
 * When not even the resources alone find a host, each class is looked at on its own:
 * "no provider has 64 VCPU free (the most free: cn-07 with 48)", and when a host has it only across
 * its children (NUMA nodes), the granular groups that would take it.
 */
import {PlacementError} from '../errors.js'
import {ruleText, placementJudge, OUTSIDE_TOPOLOGY, NEWCOMER, type Group} from '../groups.js'
import {DISABLED_TRAIT, everyHost, hostsOfProviders, isDisabled, isSharing} from '../host.js'
import type {Provider, State} from '../state/state.js'
import {capacityOf} from '../inventory-capacity.js'
import {findCandidates} from './engine.js'
import {groupsToKeep, type GroupFit} from './group-fit.js'
import type {CandidateRequest, RequestGroup} from './request.js'
import type {AllocationRequest} from './types.js'

export interface WhyStep {
  /** What the step adds to the request, e.g. "required HW_CPU_X86_AVX2", "group web (anti-affinity by rack)". */
  part: string
  /** Hosts with a candidate once it is added to the steps kept before it. */
  hosts: number
}

export interface NoCandidates {
  /** One line: which part emptied the candidates, and how many hosts it left out. */
  why: string
  /** Every step tried, in order (the first is the resources alone). */
  steps: WhyStep[]
}

/** One part of a request: how to add it, and what it does to the `n` hosts that fit without it. */
interface Part {
  text: string
  add(req: CandidateRequest): CandidateRequest
  clause(n: number): string
}

// ---- words -------------------------------------------------------------------------------------

const hosts = (n: number) => `${n} host${n === 1 ? '' : 's'}`
const lacks = (n: number, what: string) => (n === 1 ? `it has no ${what}` : `none has ${what}`)
const notIn = (n: number, where: string) => (n === 1 ? `it is not in ${where}` : `none is in ${where}`)
const allAre = (n: number, what: string) => (n === 1 ? `it is ${what}` : `all are ${what}`)
const allHave = (n: number, what: string) => (n === 1 ? `it has ${what}` : `all have ${what}`)
const anyOf = (items: string[]) => (items.length === 1 ? items[0] : `any of ${items.join(', ')}`)

/** A granular group named in a clause; the unsuffixed one only when there are others. */
const groupNote = (req: CandidateRequest, g: RequestGroup) =>
  g.suffix ? ` (group ${g.suffix})` : req.groups.length > 1 ? ' (the unsuffixed group)' : ''

/** An aggregate by what placemat calls it: "rack r12", else its uuid. */
function aggregateLabel(s: State, agg: string): string {
  const node = s.topology.get(agg)
  return node ? `${node.level} ${node.name}` : `aggregate ${agg}`
}

/** "the anti-affinity rule of group web (by rack)". */
function ruleOfGroup(g: Group): string {
  const by = g.policy === 'affinity' || g.policy === 'anti-affinity' ? `by ${g.level}` : ruleText({...g, soft: false})
  return `the ${g.policy} rule of group ${g.name} (${by})`
}

// ---- taking a request apart --------------------------------------------------------------------

const withGroup = (req: CandidateRequest, suffix: string, change: (g: RequestGroup) => RequestGroup): CandidateRequest => ({
  ...req,
  groups: req.groups.map((g) => (g.suffix === suffix ? change(g) : g)),
})

const bare = (g: RequestGroup): RequestGroup => ({
  suffix: g.suffix,
  resources: g.resources,
  requiredTraits: [],
  forbiddenTraits: new Set(),
  memberOf: [],
  forbiddenAggs: new Set(),
})

/** The resources of the groups that ask for some, and nothing else. */
function resourcesOnly(req: CandidateRequest): CandidateRequest {
  return {
    groups: req.groups.filter((g) => g.resources.size > 0).map(bare),
    groupPolicy: req.groupPolicy === 'isolate' ? undefined : req.groupPolicy,
    sameSubtree: [],
    rootRequired: [],
    rootForbidden: new Set(),
    nestedAware: req.nestedAware,
  }
}

/** The parts of `req` beyond its resources, in the order they are added back. */
function partsOf(s: State, req: CandidateRequest): Part[] {
  const parts: Part[] = []
  if (req.groupPolicy === 'isolate') {
    parts.push({
      text: 'group_policy=isolate',
      add: (r) => ({...r, groupPolicy: 'isolate'}),
      clause: (n) => (n === 1 ? 'it cannot' : 'none can') + ' give each granular group a provider of its own (group_policy=isolate)',
    })
  }
  const resourced = req.groups.filter((g) => g.resources.size > 0)
  for (const g of resourced) {
    if (g.inTree === undefined) continue
    const tree = g.inTree
    const name = s.providers.get(tree)?.name ?? tree
    parts.push({
      text: `in_tree${g.suffix} ${name}`,
      add: (r) => withGroup(r, g.suffix, (x) => ({...x, inTree: tree})),
      clause: (n) => `${notIn(n, `the tree of ${name}`)}${groupNote(req, g)}`,
    })
  }
  for (const g of resourced) {
    for (const set of g.requiredTraits) {
      parts.push({
        text: `required${g.suffix} ${set.length === 1 ? set[0] : `in:${set.join(',')}`}`,
        add: (r) => withGroup(r, g.suffix, (x) => ({...x, requiredTraits: [...x.requiredTraits, set]})),
        clause: (n) => `${lacks(n, anyOf(set))}${groupNote(req, g)}`,
      })
    }
    for (const t of g.forbiddenTraits) {
      parts.push({
        text: `required${g.suffix} !${t}`,
        add: (r) => withGroup(r, g.suffix, (x) => ({...x, forbiddenTraits: new Set([...x.forbiddenTraits, t])})),
        clause: (n) => `${allHave(n, t)}, which the request forbids${groupNote(req, g)}`,
      })
    }
  }
  for (const g of resourced) {
    for (const set of g.memberOf) {
      const where = set.map((a) => aggregateLabel(s, a))
      parts.push({
        text: `member_of${g.suffix} ${where.join(', ')}`,
        add: (r) => withGroup(r, g.suffix, (x) => ({...x, memberOf: [...x.memberOf, set]})),
        clause: (n) => `${notIn(n, anyOf(where))}${groupNote(req, g)}`,
      })
    }
    if (g.forbiddenAggs.size) {
      const aggs = g.forbiddenAggs
      const where = [...aggs].map((a) => aggregateLabel(s, a))
      parts.push({
        text: `member_of${g.suffix} !${where.join(', ')}`,
        add: (r) => withGroup(r, g.suffix, (x) => ({...x, forbiddenAggs: aggs})),
        clause: (n) => `${allAre(n, `in ${where.join(' or ')}`)}, which the request excludes${groupNote(req, g)}`,
      })
    }
  }
  if (req.sameSubtree.length) {
    // Resourceless groups only mean something there: they come back with it.
    const resourceless = req.groups.filter((g) => g.resources.size === 0)
    const subtrees = req.sameSubtree.map((x) => x.join(',')).join('; ')
    parts.push({
      text: `same_subtree ${subtrees}`,
      add: (r) => ({...r, groups: [...r.groups, ...resourceless], sameSubtree: req.sameSubtree}),
      clause: (n) => `${n === 1 ? 'it does not have' : 'none has'} the groups ${subtrees} in one subtree (same_subtree)`,
    })
  }
  for (const [t] of req.rootRequired) {
    parts.push({
      text: `root_required ${t}`,
      add: (r) => ({...r, rootRequired: [...r.rootRequired, [t]]}),
      clause: (n) => `${lacks(n, t)} on its root provider`,
    })
  }
  for (const t of req.rootForbidden) {
    if (t === DISABLED_TRAIT) continue
    parts.push({
      text: `root_required !${t}`,
      add: (r) => ({...r, rootForbidden: new Set([...r.rootForbidden, t])}),
      clause: (n) => `${allHave(n, t)} on the root provider, which the request forbids`,
    })
  }
  if (req.rootForbidden.has(DISABLED_TRAIT)) {
    parts.push({
      text: 'disabled hosts left out',
      add: (r) => ({...r, rootForbidden: new Set([...r.rootForbidden, DISABLED_TRAIT])}),
      clause: (n) => `${allAre(n, 'disabled')} (--include-disabled to use ${n === 1 ? 'it' : 'them'})`,
    })
  }
  return parts
}

// ---- counting hosts ----------------------------------------------------------------------------

interface Found {
  items: AllocationRequest[]
  hosts: Set<string>
}

/**
 * Where a candidate is, to count them: its hosts (host.ts); a candidate of shared resources
 * alone (a volume) has none, and counts at the sharing providers it takes from.
 */
function hostsOf(s: State, ar: AllocationRequest, into: Set<string>): void {
  const hosts = hostsOfProviders(s, ar.allocations.keys())
  for (const h of hosts.length ? hosts : ar.allocations.keys()) into.add(h)
}

function search(s: State, req: CandidateRequest): Found {
  // Trees take turns, one candidate each, so a cap of one per provider reaches every tree that has one.
  const items = findCandidates(
    s,
    {...req, limit: undefined},
    {strategy: 'breadth-first', maxCandidates: Math.max(1, s.providers.size)},
  ).allocationRequests
  const found = new Set<string>()
  for (const ar of items) hostsOf(s, ar, found)
  return {items, hosts: found}
}

// ---- when the resources alone find nothing ------------------------------------------------------

/** The disabled host whose tree `p` is in (the host out of service itself, or one of its providers'), if any. */
const disabledHostOf = (s: State, p: Provider): Provider | undefined => {
  const root = p.root === p.uuid ? p : s.providers.get(p.root)
  return root !== undefined && isDisabled(root) ? root : undefined
}

/**
 * The provider with the most of `rc` free, and how much. With `enabledFirst` (a request that
 * leaves disabled hosts out) one of a disabled host is named only when no other has any of `rc`,
 * and then said to be (`disabled`).
 */
function mostFree(
  s: State,
  rc: string,
  enabledFirst: boolean,
): {name: string; free: number; maxUnit: number; disabled: string | undefined} | undefined {
  let best: {name: string; free: number; maxUnit: number; disabled: string | undefined} | undefined
  for (const p of s.providers.values()) {
    const inv = p.inventories.get(rc)
    if (!inv) continue
    const free = capacityOf(inv) - (p.usages.get(rc) ?? 0)
    const disabled = disabledHostOf(s, p)?.name
    const better = !best || (enabledFirst && !best.disabled !== !disabled ? !disabled : free > best.free)
    if (better) best = {name: p.name, free, maxUnit: inv.max_unit, disabled}
  }
  return best
}

/**
 * The host with the most of `rc` free across the providers of its tree (its own, not shared),
 * with those providers by free amount, most first.
 */
function mostFreeAcross(
  s: State,
  rc: string,
  enabledOnly: boolean,
): {host: string; free: number; providers: Array<{name: string; free: number}>} | undefined {
  let best: {host: string; free: number; providers: Array<{name: string; free: number}>} | undefined
  for (const h of everyHost(s)) {
    if (enabledOnly && isDisabled(h)) continue
    const providers: Array<{name: string; free: number}> = []
    let sum = 0
    for (const p of s.subtree(h.uuid)) {
      const inv = p.inventories.get(rc)
      if (!inv || isSharing(p)) continue
      const free = capacityOf(inv) - (p.usages.get(rc) ?? 0)
      if (free <= 0) continue
      providers.push({name: p.name, free})
      sum += free
    }
    if (!best || sum > best.free) best = {host: h.name, free: sum, providers: providers.sort((a, b) => b.free - a.free)}
  }
  return best
}

/**
 * When `amount` of `rc` is free on one host only across several of its providers (a compute's
 * NUMA children): says so, and the granular groups that would take it, one provider each.
 */
function acrossChildren(s: State, rc: string, amount: number, enabledOnly: boolean): string {
  const across = mostFreeAcross(s, rc, enabledOnly)
  if (!across || across.free < amount || across.providers.length < 2) return ''
  const parts: number[] = []
  let left = amount
  for (const p of across.providers) {
    if (left <= 0) break
    const take = Math.min(p.free, left)
    parts.push(take)
    left -= take
  }
  const shown = across.providers.map((p) => `${p.name} ${p.free}`).join(', ')
  const granular = parts.map((n, i) => `resources${i + 1}=${rc}:${n}`).join('&')
  return (
    `; ${across.host} has ${across.free} free across its providers (${shown}), but one request group takes each class from one provider:` +
    ` ask in granular groups, one provider each (${granular}&group_policy=none)`
  )
}

function resourcesWhy(s: State, req: CandidateRequest, base: CandidateRequest): string {
  const single = (g: RequestGroup, resources: Map<string, number>): CandidateRequest => ({
    ...base,
    groups: [{...bare(g), resources}],
    groupPolicy: undefined,
  })
  const counts: string[] = []
  for (const g of base.groups) {
    for (const [rc, amount] of g.resources) {
      const n = search(s, single(g, new Map([[rc, amount]]))).hosts.size
      counts.push(`${amount} ${rc}: ${hosts(n)}`)
      if (n > 0) continue
      // A host out of service is not named as where to look when the request leaves it out.
      const enabledOnly = req.rootForbidden.has(DISABLED_TRAIT)
      const best = mostFree(s, rc, enabledOnly)
      const note = groupNote(req, g)
      if (!best) return `no provider has any ${rc}${note}`
      const off =
        !enabledOnly || !best.disabled ? '' : best.disabled === best.name ? ', a disabled host' : `, of disabled host ${best.disabled}`
      if (best.free < amount)
        return `no provider has ${amount} ${rc} free${note} (the most free: ${best.name} with ${Math.max(0, best.free)}${off})${acrossChildren(s, rc, amount, enabledOnly)}`
      return `no provider takes ${amount} ${rc} in one allocation${note} (${best.name} has ${best.free} free${off}, at most ${best.maxUnit} at once; or min_unit, step_size)`
    }
  }
  for (const g of base.groups) {
    if (g.resources.size < 2) continue
    if (search(s, single(g, g.resources)).hosts.size === 0) {
      return `no host has ${[...g.resources].map(([rc, n]) => `${n} ${rc}`).join(' and ')} free together${groupNote(req, g)} (${counts.join(', ')})`
    }
  }
  const each = base.groups.map((g) => `${g.suffix || 'unsuffixed'}: ${hosts(search(s, single(g, g.resources)).hosts.size)}`)
  return `no host gives every group its resources at once (${each.join(', ')})`
}

// ---- the answer --------------------------------------------------------------------------------

interface Blocker {
  /** Hosts that fit before the part. */
  before: number
  /** Whether only the resources were asked for before it. */
  resourcesOnly: boolean
  clause: string
}

const blockerText = (b: Blocker) =>
  `${hosts(b.before)} ${b.resourcesOnly ? (b.before === 1 ? 'has' : 'have') + ' the resources' : b.before === 1 ? 'fits' : 'fit'}; ${b.clause}`

/**
 * Why `req` (with the rules of `fit`'s groups) has no candidate in `s`; null when it has some.
 * Throws Placement's 400s as a search of the whole request would.
 */
export function whyNoCandidates(s: State, req: CandidateRequest, fit: GroupFit = {}): NoCandidates | null {
  const groups = groupsToKeep(s, fit).filter((g) => !g.soft)
  // The whole request first: its 400s are Placement's to give.
  const whole = search(s, req)
  if (whole.items.length && !groups.length) return null
  const steps: WhyStep[] = []
  try {
    const base = resourcesOnly(req)
    let found = search(s, base)
    steps.push({
      part: `resources ${base.groups.map((g) => [...g.resources].map(([rc, n]) => `${rc}:${n}`).join(',') + (g.suffix ? ` (${g.suffix})` : '')).join('; ')}`,
      hosts: found.hosts.size,
    })
    if (found.hosts.size === 0) return {why: resourcesWhy(s, req, base), steps}
    const blockers: Blocker[] = []
    let current = base
    let onlyResources = true
    for (const part of partsOf(s, req)) {
      const next = part.add(current)
      const after = search(s, next)
      steps.push({part: part.text, hosts: after.hosts.size})
      if (after.hosts.size === 0) {
        blockers.push({before: found.hosts.size, resourcesOnly: onlyResources, clause: part.clause(found.hosts.size)})
        continue // left out: what the rest does is still worth knowing
      }
      current = next
      found = after
      onlyResources = false
    }
    let items = found.items
    for (const g of groups) {
      const judge = placementJudge(s, fit.consumer ?? NEWCOMER, [g])
      const left: AllocationRequest[] = []
      const outside = new Set<string>()
      const excluded = new Set<string>()
      for (const ar of items) {
        const breaches = judge(ar.allocations.keys())
        if (breaches.length === 0) {
          left.push(ar)
          continue
        }
        const at = new Set<string>()
        hostsOf(s, ar, at)
        for (const h of at) {
          excluded.add(h)
          if (breaches.some((b) => b.domains.some((d) => d.name === OUTSIDE_TOPOLOGY))) outside.add(h)
        }
      }
      const leftHosts = new Set<string>()
      for (const ar of left) hostsOf(s, ar, leftHosts)
      steps.push({part: `group ${g.name} (${ruleText(g)})`, hosts: leftHosts.size})
      if (leftHosts.size > 0) {
        items = left
        found = {items, hosts: leftHosts}
        continue
      }
      const n = found.hosts.size
      const them = n === 1 ? 'it' : 'them'
      const out =
        outside.size === 0
          ? ''
          : outside.size === excluded.size
            ? `: ${n === 1 ? 'it is' : 'they are'} outside the topology (in no ${g.level})`
            : ` (${outside.size} of them outside the topology, in no ${g.level})`
      blockers.push({before: n, resourcesOnly: false, clause: `${ruleOfGroup(g)} excludes ${them}${out}`})
    }
    if (!blockers.length) return null
    const [first, second] = blockers
    return {why: blockerText(first) + (second ? `. Without that: ${blockerText(second)}` : ''), steps}
  } catch (err) {
    // A part taken alone can meet an unknown name the whole request never reached.
    if (err instanceof PlacementError && err.status === 400) return {why: err.detail, steps}
    throw err
  }
}
