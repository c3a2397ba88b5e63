/**
 * Generated clouds against placement groups: random trees (flat computes, NUMA children, GPU
 * grandchildren), bare-metal roots, zero to three sharing providers in one or two aggregates
 * (some inside racks, some outside the topology), computes outside the topology; random hard
 * groups at every level and random claims through the core (candidates kept by the groups, then
 * the claim). After each claim, checks written here, apart from the core's functions:
 *  - every hard rule holds over the hosts as defined (the root of a tree that holds inventory,
 *    never a sharing provider; a consumer's hosts are the roots its own resources come from);
 *  - no sharing provider is ever counted as a host (the consumers', the groups', the views');
 *  - a claim is refused only when a brute-force search finds no place that keeps every rule.
 */
import {describe, expect, it} from 'vitest'
import {findCandidates} from '../../src/core/candidates/engine.js'
import {fitToGroups} from '../../src/core/candidates/group-fit.js'
import {parseCandidateRequest} from '../../src/core/candidates/request.js'
import {claimAllocations} from '../../src/core/claims.js'
import {consumerListing} from '../../src/core/consumer-list.js'
import {createGroup} from '../../src/core/group-writes.js'
import {groupRecord, type GroupLevel, type GroupPolicy} from '../../src/core/groups.js'
import {consumerHosts, everyHost} from '../../src/core/host.js'
import {PlacementError} from '../../src/core/errors.js'
import {stateFromSnapshot} from '../../src/core/snapshot.js'
import type {Provider, State, TopologyLevel} from '../../src/core/state/state.js'
import {Changes} from '../../src/core/state/changes.js'
import {nodeUuid} from '../../src/core/topology.js'
import {topologyView, type TopologyView} from '../../src/core/topology-view.js'
import {rng} from '../helpers/rng.js'

const SHARES = 'MISC_SHARES_VIA_AGGREGATE'
const P = (i: number) => `aaaaaaaa-0000-4000-8000-${String(i).padStart(12, '0')}`
const C = (i: number) => `cccccccc-0000-4000-8000-${String(i).padStart(12, '0')}`
const STORAGE = (i: number) => `5707a9e0-0000-4000-8000-${String(i).padStart(12, '0')}`

interface Gen {
  next: () => number
  int: (n: number) => number
  pick: <T>(xs: readonly T[]) => T
  chance: (p: number) => boolean
}
const gen = (seed: number): Gen => {
  const next = rng(seed)
  const int = (n: number) => Math.floor(next() * n)
  return {next, int, pick: (xs) => xs[int(xs.length)], chance: (p) => next() < p}
}

// ---- the cloud ---------------------------------------------------------------------------------

function generateCloud(g: Gen): State {
  const topology: Array<{uuid: string; name: string; level: TopologyLevel; parent: string | null}> = []
  const racks: Array<{rack: string; row: string; room: string}> = []
  for (let m = 1, rooms = 1 + g.int(2); m <= rooms; m++) {
    const room = nodeUuid('room', `m${m}`)
    topology.push({uuid: room, name: `m${m}`, level: 'room', parent: null})
    for (let r = 1, rows = 1 + g.int(2); r <= rows; r++) {
      const row = nodeUuid('row', `m${m}r${r}`)
      topology.push({uuid: row, name: `m${m}r${r}`, level: 'row', parent: room})
      for (let k = 1, n = 1 + g.int(2); k <= n; k++) {
        const rack = nodeUuid('rack', `m${m}r${r}k${k}`)
        topology.push({uuid: rack, name: `m${m}r${r}k${k}`, level: 'rack', parent: row})
        racks.push({rack, row, room})
      }
    }
  }
  const storageAggs = Array.from({length: 1 + g.int(2)}, (_, i) => STORAGE(i + 1))
  const providers: any[] = []
  let n = 0
  const add = (name: string, parent: any | null, inventories: Record<string, number>, traits: string[] = [], aggregates: string[] = []) => {
    const uuid = P(++n)
    const p = {
      uuid,
      name,
      generation: 1,
      parent_provider_uuid: parent?.uuid ?? null,
      root_provider_uuid: parent?.root_provider_uuid ?? uuid,
      inventories: Object.fromEntries(
        Object.entries(inventories).map(([rc, total]) => [
          rc,
          {total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1},
        ]),
      ),
      traits,
      aggregates,
    }
    providers.push(p)
    return p
  }
  const place = () => (g.chance(0.8) ? Object.values(g.pick(racks)) : [])
  const storage = () => (g.chance(0.7) ? [g.pick(storageAggs)] : [])
  for (let h = 1, hosts = 6 + g.int(9); h <= hosts; h++) {
    const kind = g.pick(['flat', 'numa', 'numa', 'baremetal'] as const)
    const aggregates = [...place(), ...(kind === 'baremetal' ? [] : storage())]
    if (kind === 'flat') {
      add(
        `cn${h}`,
        null,
        {VCPU: 4 + g.int(13), MEMORY_MB: 4096 * (1 + g.int(4)), ...(g.chance(0.3) ? {DISK_GB: 100 + g.int(200)} : {})},
        [],
        aggregates,
      )
    } else if (kind === 'numa') {
      const root = add(`cn${h}`, null, {}, [], aggregates)
      for (const k of [0, 1]) {
        const numa = add(`cn${h}_numa${k}`, root, {VCPU: 2 + g.int(7), MEMORY_MB: 2048 * (1 + g.int(3))}, ['HW_NUMA_ROOT'])
        if (g.chance(0.25)) add(`cn${h}_numa${k}_gpu`, numa, {VGPU: 1 + g.int(4)})
      }
    } else {
      add(`bm${h}`, null, {CUSTOM_BAREMETAL: 1}, [], aggregates)
    }
  }
  for (let i = 1, sharing = g.int(4); i <= sharing; i++) {
    const aggs = g.chance(0.3) ? storageAggs : [g.pick(storageAggs)]
    // Some sit inside a rack's aggregates (as an operator may file the storage there), some outside the topology.
    add(`ceph${i}`, null, {DISK_GB: 200 + g.int(800)}, [SHARES], [...aggs, ...(g.chance(0.5) ? Object.values(g.pick(racks)) : [])])
  }
  const s = stateFromSnapshot({
    classes: ['VCPU', 'MEMORY_MB', 'DISK_GB', 'VGPU', 'CUSTOM_BAREMETAL'],
    traits: [SHARES, 'HW_NUMA_ROOT'],
    topology,
    providers,
  })
  s.changes = null
  return s
}

// ---- hosts, as defined, written here ------------------------------------------------------------

const rootOf = (s: State, p: Provider): Provider => {
  let q = p
  while (q.parent !== null) q = s.providers.get(q.parent)!
  return q
}
const treeOf = (s: State, root: Provider): Provider[] => [...s.providers.values()].filter((p) => rootOf(s, p) === root)

/** Roots that do not share and hold inventory (on a provider that does not share) in their tree. */
function hostsOfCloud(s: State): Set<string> {
  const out = new Set<string>()
  for (const p of s.providers.values()) {
    if (p.parent !== null || p.traits.has(SHARES)) continue
    if (treeOf(s, p).some((q) => !q.traits.has(SHARES) && q.inventories.size > 0)) out.add(p.uuid)
  }
  return out
}

/** The roots a set of providers' own (not shared) resources come from. */
function hostsOf(s: State, providers: Iterable<string>): string[] {
  const out = new Set<string>()
  for (const u of providers) {
    const p = s.providers.get(u)!
    if (p.traits.has(SHARES)) continue
    const root = rootOf(s, p)
    if (!root.traits.has(SHARES)) out.add(root.uuid)
  }
  return [...out]
}

function domainsOf(s: State, host: string, level: GroupLevel): string[] {
  if (level === 'host') return [host]
  return [...s.providers.get(host)!.aggregates].filter((a) => s.topology.get(a)?.level === level)
}

interface Rule {
  name: string
  policy: GroupPolicy
  level: GroupLevel
  maxPer?: number
  maxSkew?: number
}

/** Whether `rule` holds with members at `where` (member -> hosts; hostless members skipped). */
function holds(s: State, rule: Rule, where: Map<string, string[]>, hosts: Set<string>): boolean {
  const perDomain = new Map<string, number>()
  const memberDomains: Array<Set<string>> = []
  for (const hs of where.values()) {
    if (hs.length === 0) continue
    const ds = new Set<string>()
    for (const h of hs) {
      const at = domainsOf(s, h, rule.level)
      if (at.length === 0) return false // outside the topology at that level: a hard rule cannot be shown kept
      for (const d of at) ds.add(d)
    }
    memberDomains.push(ds)
    for (const d of ds) perDomain.set(d, (perDomain.get(d) ?? 0) + 1)
  }
  const counts = [...perDomain.values()]
  if (rule.policy === 'anti-affinity') return counts.every((c) => c <= 1)
  if (rule.policy === 'max-per') return counts.every((c) => c <= rule.maxPer!)
  if (rule.policy === 'affinity') {
    if (memberDomains.length < 2) return true
    return [...memberDomains[0]].some((d) => memberDomains.every((ds) => ds.has(d)))
  }
  // spread: across every domain of the level that has a host
  const domains = new Set<string>()
  for (const h of hosts) for (const d of domainsOf(s, h, rule.level)) domains.add(d)
  if (domains.size < 2) return true
  const all = [...domains].map((d) => perDomain.get(d) ?? 0)
  return Math.max(...all) - Math.min(...all) <= rule.maxSkew!
}

// ---- brute force -------------------------------------------------------------------------------

const free = (p: Provider, rc: string) => {
  const inv = p.inventories.get(rc)
  return inv ? inv.total - inv.reserved - (p.usages.get(rc) ?? 0) : 0
}

/** Sharing providers with `amount` of `rc` free that share an aggregate with a provider of `host`'s tree (or any, for no host). */
function sharingFor(s: State, host: Provider | null, rc: string, amount: number): boolean {
  for (const q of s.providers.values()) {
    if (!q.traits.has(SHARES) || free(q, rc) < amount) continue
    if (!host) return true
    if (treeOf(s, host).some((t) => [...t.aggregates].some((a) => q.aggregates.has(a)))) return true
  }
  return false
}

/** Every place a request could go (a host's uuid, or null: shared resources alone). */
function feasiblePlaces(s: State, hosts: Set<string>, request: Record<string, number>): Array<string | null> {
  const out: Array<string | null> = []
  for (const h of hosts) {
    const root = s.providers.get(h)!
    const tree = treeOf(s, root).filter((p) => !p.traits.has(SHARES))
    const ok = Object.entries(request).every(([rc, n]) => tree.some((p) => free(p, rc) >= n) || sharingFor(s, root, rc, n))
    if (ok) out.push(h)
  }
  if (Object.entries(request).every(([rc, n]) => sharingFor(s, null, rc, n))) out.push(null)
  return out
}

// ---- the run -----------------------------------------------------------------------------------

const POLICIES: GroupPolicy[] = ['affinity', 'anti-affinity', 'max-per', 'spread']
const LEVELS: GroupLevel[] = ['host', 'rack', 'row', 'room']

function randomRequest(g: Gen): Record<string, number> {
  const kind = g.pick(['instance', 'instance', 'instance', 'volume', 'baremetal'] as const)
  if (kind === 'volume') return {DISK_GB: 10 + g.int(150)}
  if (kind === 'baremetal') return {CUSTOM_BAREMETAL: 1}
  return {VCPU: 1 + g.int(4), MEMORY_MB: 1024 * (1 + g.int(2)), ...(g.chance(0.6) ? {DISK_GB: 10 + g.int(60)} : {})}
}

function viewHosts(views: TopologyView[]): string[] {
  return views.flatMap((v) => [...(v.hosts ?? []).map((h) => h.uuid), ...viewHosts(v.children ?? [])])
}

describe('generated clouds: rules by host, rack, row and room over hosts as defined', () => {
  it('keep every hard rule, never count a sharing provider as a host, and refuse only what a brute force cannot place', () => {
    const counted = {
      seeds: 0,
      clouds: 0,
      sharing: 0,
      claims: 0,
      accepted: 0,
      refused: 0,
      refusedConfirmed: 0,
      hostless: 0,
      ruleChecks: 0,
      hostChecks: 0,
    }
    for (let seed = 1; seed <= 60; seed++) {
      const g = gen(seed)
      const s = generateCloud(g)
      counted.seeds++
      counted.clouds++
      const sharing = [...s.providers.values()].filter((p) => p.traits.has(SHARES))
      counted.sharing += sharing.length
      const hosts = hostsOfCloud(s)
      const tx = <T>(fn: () => T): T => {
        s.changes = new Changes()
        try {
          return fn()
        } finally {
          // As the store does after a commit: the candidates' index follows the new version.
          s.changes = null
          s.version += 1
        }
      }
      const rules: Rule[] = []
      for (let i = 1, n = 1 + g.int(3); i <= n; i++) {
        const policy = g.pick(POLICIES)
        const rule: Rule = {name: `g${i}`, policy, level: g.pick(LEVELS)}
        if (policy === 'max-per') rule.maxPer = 1 + g.int(3)
        if (policy === 'spread') rule.maxSkew = 1 + g.int(2)
        tx(() =>
          createGroup(s, 0, {
            name: rule.name,
            policy: rule.policy,
            level: rule.level,
            maxPer: rule.maxPer,
            maxSkew: rule.maxSkew,
            soft: false,
          }),
        )
        rules.push(rule)
      }
      const members = new Map<string, string[]>(rules.map((r) => [r.name, []]))
      for (let c = 1, claims = 15 + g.int(16); c <= claims; c++) {
        const consumer = C(seed * 1000 + c)
        const rule = g.chance(0.85) ? g.pick(rules) : undefined
        const request = randomRequest(g)
        const context = `seed ${seed}, claim ${c}: ${JSON.stringify(request)}${rule ? ` in ${rule.name} (${rule.policy} by ${rule.level})` : ''}`
        counted.claims++
        const req = parseCandidateRequest(
          new Map([
            [
              'resources',
              [
                Object.entries(request)
                  .map(([rc, n]) => `${rc}:${n}`)
                  .join(','),
              ],
            ],
          ]),
          [1, 39],
        )
        const result = findCandidates(s, req, {maxCandidates: 100000})
        const kept = fitToGroups(s, result, {group: rule?.name}, undefined, true).allocationRequests
        const where = (r: Rule, extra?: [string, string[]]) => {
          const m = new Map(members.get(r.name)!.map((x) => [x, hostsOf(s, s.consumers.get(x)?.allocations.keys() ?? [])]))
          if (extra) m.set(extra[0], extra[1])
          return m
        }
        if (kept.length === 0) {
          counted.refused++
          // The brute force: no place the request fits keeps the rule.
          const places = feasiblePlaces(s, hosts, request)
          const keeping = places.filter((h) => !rule || holds(s, rule, where(rule, [consumer, h === null ? [] : [h]]), hosts))
          expect(
            keeping.map((h) => (h === null ? '(shared only)' : s.providers.get(h)!.name)),
            context,
          ).toEqual([])
          counted.refusedConfirmed++
          continue
        }
        const ar = g.pick(kept)
        try {
          tx(() =>
            claimAllocations(s, 1, [
              {
                write: {
                  uuid: consumer,
                  allocations: new Map([...ar.allocations].map(([rp, a]) => [rp, new Map(a)])),
                  project: 'p',
                  user: 'u',
                  generation: null,
                },
                affinity: [],
                group: rule?.name,
              },
            ]),
          )
        } catch (err) {
          throw new Error(`${context}: a kept candidate was refused: ${err instanceof PlacementError ? err.detail : err}`)
        }
        counted.accepted++
        if (rule) members.get(rule.name)!.push(consumer)
        const own = hostsOf(s, s.consumers.get(consumer)!.allocations.keys())
        if (own.length === 0) counted.hostless++
        // Every hard rule holds, over hosts as defined here.
        for (const r of rules) {
          expect(holds(s, r, where(r), hosts), `${context}: group ${r.name} (${r.policy} by ${r.level}) broken`).toBe(true)
          counted.ruleChecks++
        }
        // No sharing provider is ever a host: the core's hosts are the ones defined here.
        expect(consumerHosts(s, consumer).sort(), context).toEqual(own.sort())
        counted.hostChecks++
      }
      const names = new Set(sharing.map((p) => p.name))
      const uuids = new Set(sharing.map((p) => p.uuid))
      expect(new Set(everyHost(s).map((p) => p.uuid)), `seed ${seed}`).toEqual(hosts)
      for (const listing of consumerListing(s))
        for (const h of listing.hosts) expect(names.has(h), `seed ${seed}: consumer ${listing.uuid} on ${h}`).toBe(false)
      for (const r of rules) {
        const record = groupRecord(s, s.groups.get(r.name)!, {placements: true})
        expect(record.violations, `seed ${seed}: ${r.name}`).toEqual([])
        for (const p of record.placements!) for (const h of p.hosts) expect(names.has(h), `seed ${seed}: ${r.name}`).toBe(false)
      }
      for (const h of viewHosts(topologyView(s))) {
        expect(uuids.has(h), `seed ${seed}: a rack view lists a sharing provider`).toBe(false)
        expect(hosts.has(h), `seed ${seed}: a rack view lists ${s.providers.get(h)?.name}, no host`).toBe(true)
      }
      counted.hostChecks += s.consumers.size
    }
    console.log(`generated clouds: ${JSON.stringify(counted)}`)
    expect(counted.sharing).toBeGreaterThan(0)
    expect(counted.refused).toBeGreaterThan(0)
    expect(counted.hostless).toBeGreaterThan(0)
  })
})
