/**
 * Headroom: how many more instances of each flavor fit, per host, rack, row, room and the cloud,
 * what is lost to host boundaries, what is stranded, and which flavors can never fit.
 *
 *   fit(host, X)    how many times X's request can be claimed in a row in the host's tree, as a
 *                   claim takes it: the first candidate each time (the allocation-candidates
 *                   engine, with capacity int((total - reserved) * ratio), min/max_unit,
 *                   step_size, group_policy, traits and every sharing provider the host reaches).
 *                   While the first candidate still fits it stays first (usage only grows), so
 *                   it is taken as many times as it fits at once; the candidates are searched
 *                   once per shape of tree (tree-shapes.ts), not once per host.
 *                   A disabled host counts 0; what it would hold is its `disabledFit`.
 *   fit(domain, X)  the sum over its enabled hosts, each sharing pool taken once: hosts draw on a
 *                   pool in host order until it is empty (never summed per host).
 *   pooled          the fit if the domain were one host: for each class X asks, the free amount of
 *                   the hosts that could hold X at all (and the pools they reach) over what X asks.
 *   stranded        on an enabled host where no flavor fits, each class's free amount, with the
 *                   class that blocks (the bottleneck).
 *   lint            flavors that fit nowhere even on an empty cloud, and those that fit only on
 *                   disabled hosts.
 * Pure over a State; nothing is written to it.
 */
import {capacityOf} from './capacity.js'
import {fitInARow, freeNow, hostTrees, keptShapes, namesAggregates, shapeCandidates, type HostTree} from './tree-shapes.js'
import {askedPerClass, type FlavorRequest} from './flavors.js'
import {groupFit} from './group-headroom.js'
import type {Group} from './groups.js'
import {everyHost, isDisabled, isSharing} from './host.js'
import type {Provider, State, TopologyLevel} from './state.js'
import {hostDomains} from './topology.js'

export type HeadroomLevel = 'host' | TopologyLevel | 'cloud'
export const HEADROOM_LEVELS: readonly HeadroomLevel[] = ['host', 'rack', 'row', 'room', 'cloud']

export interface DomainHeadroom {
  level: HeadroomLevel
  name: string
  flavor: string
  fit: number
  pooled: number
  fragmentation_loss: number
  /** What the domain's disabled hosts would hold, apart. */
  disabled_fit: number
}

export interface Stranded {
  host: string
  class: string
  amount: number
  bottleneck: string
}

export interface LintFinding {
  flavor: string
  problem: string
}

export interface Headroom {
  domains: DomainHeadroom[]
  stranded: Stranded[]
  lint: LintFinding[]
}

/**
 * fit(host, X) of every host, each counted alone (a pool's free amount is the same for each), and
 * whether it could ever hold X: its shape's candidates (tree-shapes.ts), searched once per shape,
 * walked with each host's usage. By host number, in arrays (a cloud has many hosts and flavors).
 */
export interface HostFits {
  fit: Float64Array
  /** 1 where the host could ever hold the flavor (on its tree emptied). */
  eligible: Uint8Array
  /** Pool uuid -> class -> amount one instance takes from it (as the host's first candidate takes it); null when none does. */
  pools: Array<ReadonlyMap<string, ReadonlyMap<string, number>> | undefined> | null
}

export function hostFits(s: State, trees: readonly HostTree[], free: readonly Float64Array[], flavor: FlavorRequest): HostFits {
  const withAggregates = namesAggregates(flavor.request)
  const shapes = keptShapes(s, flavor.request)
  const out: HostFits = {fit: new Float64Array(trees.length), eligible: new Uint8Array(trees.length), pools: null}
  trees.forEach((tree, i) => {
    const key = withAggregates ? tree.shapeWithAggregates : tree.shape
    let shape = shapes.get(key)
    if (!shape) shapes.set(key, (shape = shapeCandidates(s, tree, flavor.request)))
    if (!shape.candidates.length) return
    out.eligible[i] = 1
    if (!shape.sharing) {
      out.fit[i] = fitInARow(tree, shape, free[i])
      return
    }
    const pools = new Map<string, Map<string, number>>()
    out.fit[i] = fitInARow(tree, shape, free[i], pools)
    if (pools.size) (out.pools ??= [])[i] = pools
  })
  return out
}

const NO_POOLS: ReadonlyMap<string, ReadonlyMap<string, number>> = new Map()

/** The free amount of each class in a host's tree (sharing providers aside), from its pairs' free amounts (freeNow). */
function treeFree(tree: HostTree, pairsFree: Float64Array): Map<string, number> {
  const free = new Map<string, number>()
  tree.pairs.forEach(({member, rc}, k) => {
    if (!isSharing(tree.members[member])) free.set(rc, (free.get(rc) ?? 0) + Math.max(0, pairsFree[k]))
  })
  return free
}

const poolFree = (s: State, uuid: string, rc: string): number => {
  const p = s.providers.get(uuid)
  const inv = p?.inventories.get(rc)
  return p && inv ? Math.max(0, capacityOf(inv) - (p.usages.get(rc) ?? 0)) : 0
}

export interface HeadroomOptions {
  /** Levels to report (all when absent). */
  levels?: readonly HeadroomLevel[]
  /** Count members of this placement group: `fit` is what its rule still allows (group-headroom.ts). */
  group?: Group
}

/** One host's figures for one flavor, for a domain that draws on sharing pools. */
interface HostCounts {
  disabled: boolean
  /** The free amount of each class in its tree (the same for every flavor). */
  free: Map<string, number>
  fit: number
  pools: ReadonlyMap<string, ReadonlyMap<string, number>>
  /** Whether the host could ever hold the flavor (on its tree emptied). */
  eligible: boolean
}

/** What a domain without pools sums, by host number: fits, and each asked class's free amount and ask. */
interface Summed {
  fits: HostFits
  disabled: Uint8Array
  asks: number[]
  free: Float64Array[]
}

/** Every host, kept while the cloud's shape stands (which providers are hosts moves shapeVersion); never changed by its users. */
function hostsKept(s: State): readonly Provider[] {
  const kept = hostsOf.get(s)
  if (kept && kept.shapeVersion === s.shapeVersion) return kept.hosts
  const hosts = everyHost(s)
  hostsOf.set(s, {shapeVersion: s.shapeVersion, hosts})
  return hosts
}
const hostsOf = new WeakMap<State, {shapeVersion: number; hosts: readonly Provider[]}>()

/** The headroom of `flavors` in `s`, per level (see the module's comment for what is counted). */
export function headroom(s: State, flavors: readonly FlavorRequest[], opts: HeadroomOptions = {}): Headroom {
  const levels = opts.levels ?? HEADROOM_LEVELS
  const hosts = hostsKept(s)
  // What does not depend on the flavor, once: each host's free amounts and the domains' hosts.
  const disabled = Uint8Array.from(hosts, (h) => (isDisabled(h) ? 1 : 0))
  const layout = domainHosts(s, hosts, levels)
  const domains: DomainHeadroom[] = []
  const lint: LintFinding[] = []
  const fitsSomewhere = new Uint8Array(hosts.length) // some flavor fits there now
  const trees = hostTrees(s, hosts)
  const freeOfTrees = trees.map(freeNow)
  const free = trees.map((t, i) => treeFree(t, freeOfTrees[i]))
  // Each host's free amount of a class, by host number, made once per class asked.
  const freeOfClass = new Map<string, Float64Array>()
  const freeByHost = (rc: string): Float64Array => {
    let a = freeOfClass.get(rc)
    if (!a) {
      a = new Float64Array(hosts.length)
      for (let i = 0; i < hosts.length; i++) a[i] = free[i].get(rc) ?? 0
      freeOfClass.set(rc, a)
    }
    return a
  }
  for (const flavor of flavors) {
    const fits = hostFits(s, trees, freeOfTrees, flavor)
    let eligible = false
    let eligibleEnabled = false
    for (let i = 0; i < hosts.length; i++) {
      if (!fits.eligible[i]) continue
      eligible = true
      if (disabled[i]) continue
      eligibleEnabled = true
      if (fits.fit[i] > 0) fitsSomewhere[i] = 1
    }
    if (!eligible) lint.push({flavor: flavor.flavor, problem: whyNowhere(s, flavor)})
    else if (!eligibleEnabled) lint.push({flavor: flavor.flavor, problem: 'fits only on disabled hosts'})
    const asked = askedPerClass(flavor.request)
    const classes = [...asked.keys()]
    const sums: Summed = {fits, disabled, asks: classes.map((rc) => asked.get(rc)!), free: classes.map(freeByHost)}
    const pools = fits.pools
    for (const [level, name, at] of layout) {
      // Most domains draw on no pool: sums of numbers. One that does takes each pool once (domainHeadroom).
      const row =
        pools && at.some((i) => pools[i] !== undefined)
          ? domainHeadroom(
              s,
              level,
              name,
              flavor.flavor,
              asked,
              at.map(
                (i): HostCounts => ({
                  disabled: disabled[i] === 1,
                  free: free[i],
                  fit: fits.fit[i],
                  pools: pools[i] ?? NO_POOLS,
                  eligible: fits.eligible[i] === 1,
                }),
              ),
            )
          : summedHeadroom(level, name, flavor.flavor, sums, at)
      // The group's rule bounds the fit; pooled and the loss stay the flavor's (host boundaries alone).
      if (opts.group)
        row.fit = Math.min(
          row.fit,
          groupFit(s, opts.group, new Map(at.filter((i) => !disabled[i]).map((i) => [hosts[i].uuid, fits.fit[i]]))),
        )
      domains.push(row)
    }
  }
  return {domains, stranded: stranded(hosts, free, disabled, flavors, fitsSomewhere), lint}
}

/** The domains at each level with the numbers of their hosts, in the order a table shows them. */
function domainHosts(s: State, hosts: readonly Provider[], levels: readonly HeadroomLevel[]): Array<[HeadroomLevel, string, number[]]> {
  const out: Array<[HeadroomLevel, string, number[]]> = []
  const where = levels.some((l) => l !== 'host' && l !== 'cloud') ? hosts.map((h) => hostDomains(s, h)) : []
  for (const level of levels) {
    if (level === 'cloud') out.push(['cloud', 'cloud', hosts.map((_, i) => i)])
    else if (level === 'host') {
      // By name: the State's order is the order providers were read in, which differs between backends.
      const byName = hosts.map((_, i) => i).sort((a, b) => compareHosts(hosts[a], hosts[b]))
      for (const i of byName) out.push(['host', hosts[i].name, [i]])
    } else {
      const by = new Map<string, number[]>()
      where.forEach((w, i) => {
        const name = w[level]
        if (name === null) return
        let list = by.get(name)
        if (!list) by.set(name, (list = []))
        list.push(i)
      })
      for (const name of [...by.keys()].sort()) out.push([level, name, by.get(name)!])
    }
  }
  return out
}

const compareHosts = (a: Provider, b: Provider): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0

/** A domain whose hosts draw on no pool: its fits and free amounts summed. */
function summedHeadroom(level: HeadroomLevel, name: string, flavor: string, sums: Summed, at: number[]): DomainHeadroom {
  const {fits, disabled, asks, free} = sums
  let fit = 0
  let disabledFit = 0
  let any = false
  const total = new Float64Array(asks.length)
  for (const i of at) {
    if (disabled[i]) {
      disabledFit += fits.fit[i]
      continue
    }
    fit += fits.fit[i]
    if (!fits.eligible[i]) continue
    any = true
    for (let j = 0; j < asks.length; j++) total[j] += free[j][i]
  }
  let pooled = 0
  if (any && asks.length) {
    pooled = Infinity
    for (let j = 0; j < asks.length; j++) pooled = Math.min(pooled, Math.floor(total[j] / asks[j]))
  }
  return {level, name, flavor, fit, pooled: Math.max(pooled, fit), fragmentation_loss: Math.max(0, pooled - fit), disabled_fit: disabledFit}
}

function domainHeadroom(
  s: State,
  level: HeadroomLevel,
  name: string,
  flavor: string,
  asked: Map<string, number>,
  members: HostCounts[],
): DomainHeadroom {
  // Hosts draw on each pool in host order until it is empty.
  let left: Map<string, number> | null = null // `${pool} ${class}` -> free
  const take = (c: HostCounts): number => {
    let n = c.fit
    if (c.pools.size === 0) return n
    left ??= new Map()
    for (const [pool, amounts] of c.pools) {
      for (const [rc, a] of amounts) {
        const key = `${pool} ${rc}`
        if (!left.has(key)) left.set(key, poolFree(s, pool, rc))
        n = Math.min(n, Math.floor(left.get(key)! / a))
      }
    }
    for (const [pool, amounts] of c.pools) for (const [rc, a] of amounts) left.set(`${pool} ${rc}`, left.get(`${pool} ${rc}`)! - n * a)
    return n
  }
  let fit = 0
  for (const c of members) if (!c.disabled) fit += take(c)
  left = null
  let disabledFit = 0
  for (const c of members) if (c.disabled) disabledFit += take(c)
  const pooled = pooledFit(s, asked, members)
  return {level, name, flavor, fit, pooled: Math.max(pooled, fit), fragmentation_loss: Math.max(0, pooled - fit), disabled_fit: disabledFit}
}

/** The fit if the enabled hosts of `members` that could hold it were one host: each class's free amount (pools once) over what one instance asks. */
function pooledFit(s: State, asked: Map<string, number>, members: HostCounts[]): number {
  if (asked.size === 0) return 0
  const free = new Map<string, number>()
  let pools: Set<string> | null = null
  let any = false
  for (const c of members) {
    if (c.disabled || !c.eligible) continue
    any = true
    for (const rc of asked.keys()) {
      const n = c.free.get(rc)
      if (n) free.set(rc, (free.get(rc) ?? 0) + n)
    }
    for (const pool of c.pools.keys()) (pools ??= new Set()).add(pool)
  }
  if (!any) return 0
  for (const pool of pools ?? []) for (const rc of asked.keys()) free.set(rc, (free.get(rc) ?? 0) + poolFree(s, pool, rc))
  let n = Infinity
  for (const [rc, a] of asked) n = Math.min(n, Math.floor((free.get(rc) ?? 0) / a))
  return n === Infinity ? 0 : n
}

/** Why a flavor fits on no host even with nothing used. */
function whyNowhere(s: State, flavor: FlavorRequest): string {
  const providers = [...s.providers.values()]
  for (const g of flavor.request.groups) {
    for (const [rc, n] of g.resources) {
      const having = providers.filter((p) => p.inventories.has(rc))
      if (having.length === 0) return `no provider has ${rc}`
      if (having.every((p) => n > p.inventories.get(rc)!.max_unit || n > capacityOf(p.inventories.get(rc)!)))
        return `${rc}:${n} is above every provider's max_unit or capacity`
      if (having.every((p) => n < p.inventories.get(rc)!.min_unit)) return `${rc}:${n} is below every provider's min_unit`
      if (having.every((p) => n % p.inventories.get(rc)!.step_size !== 0)) return `${rc}:${n} is off every provider's step_size`
    }
    for (const any of g.requiredTraits)
      if (!providers.some((p) => any.some((t) => p.traits.has(t)))) return `no provider has trait ${any.join(' or ')}`
  }
  return 'no host holds all it asks at once'
}

/**
 * On each enabled host where no flavor fits now, each class's free amount (`free`, by host), with
 * the class that blocks: the one whose free amount is smallest against the least any flavor asks of it.
 */
function stranded(
  hosts: readonly Provider[],
  free: Map<string, number>[],
  disabled: Uint8Array,
  flavors: readonly FlavorRequest[],
  fitsSomewhere: Uint8Array,
): Stranded[] {
  const least = new Map<string, number>()
  for (const f of flavors) for (const [rc, n] of askedPerClass(f.request)) least.set(rc, Math.min(least.get(rc) ?? Infinity, n))
  const out: Stranded[] = []
  if (least.size === 0) return out
  hosts.forEach((host, i) => {
    if (disabled[i] || fitsSomewhere[i]) return
    let bottleneck = ''
    let worst = Infinity
    for (const [rc, n] of least) {
      const r = (free[i].get(rc) ?? 0) / n
      if (r < worst) [worst, bottleneck] = [r, rc]
    }
    for (const [rc, amount] of free[i]) if (amount > 0 && rc !== bottleneck) out.push({host: host.name, class: rc, amount, bottleneck})
  })
  // By host name, as the host rows (few hosts are stranded; sorting them is cheap).
  return out.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
}
