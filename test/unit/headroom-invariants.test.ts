/**
 * What a planner relies on, held on every generated cloud (test/helpers/headroom-clouds.ts: rack
 * pools whose hosts keep disk of their own, a pool across rooms, hosts in two pools, NUMA, GPU,
 * bare metal, disabled hosts): counts move the right way when the cloud changes.
 *   - lowering an allocation ratio never raises a fit;
 *   - removing hosts (--without) never raises any domain's fit;
 *   - adding a host never lowers one;
 *   - a domain's fit is at most the sum of its children's.
 * (Each count itself is held to claims one after another in headroom.test.ts.) A what-if that
 * places displaced consumers again can raise a fit (docs/cli/capacity.md says why); these clouds'
 * usage has no consumers, so what is held here is the count's own behaviour.
 */
import {describe, expect, it} from 'vitest'
import {parseApplyFile} from '../../src/cli/apply/apply-file.js'
import {addedHosts} from '../../src/cli/services/capacity.js'
import {flavorRequest, type FlavorRequest} from '../../src/core/headroom/flavors.js'
import {headroom, type DomainHeadroom} from '../../src/core/headroom/headroom.js'
import {capacityOf} from '../../src/core/inventory-capacity.js'
import {everyHost, isSharing} from '../../src/core/host.js'
import {stateFromSnapshot} from '../../src/core/snapshot.js'
import {nodeUuid} from '../../src/core/topology.js'
import type {State} from '../../src/core/state/state.js'
import {hostDomains} from '../../src/core/topology.js'
import {whatIf, type WhatIfChange} from '../../src/core/headroom/what-if.js'
import {depth} from '../helpers/depth.js'
import {generate} from '../helpers/headroom-clouds.js'
import {plannerCloud, plannerState} from '../helpers/planner-cloud.js'
import {rng} from '../helpers/rng.js'

const CLOUDS = depth(80, 12)

const key = (d: DomainHeadroom) => `${d.flavor} on ${d.level} ${d.name}`
const fits = (s: State, flavors: FlavorRequest[]) => new Map(headroom(s, flavors).domains.map((d) => [key(d), d.fit]))

/** A copy of `s` with an empty host (64 VCPU, 256 GiB, 1,800 GB of disk of its own) named new-host in `rack`, added as --add adds it. */
const withNewHost = (s: State, rack: string): State =>
  whatIf(s, {
    add: addedHosts(
      parseApplyFile(
        {
          providers: [{name: 'new-host', inventories: {VCPU: 64, MEMORY_MB: 262144, DISK_GB: 1800}}],
          racks: [{name: rack, hosts: ['new-host']}],
        },
        'add.yaml',
      ),
      'add.yaml',
    ),
  }).after

/** Every domain both have whose fit moved the wrong way: `after` should be at most (or, `up`, at least) `before`. */
function wrongWay(before: Map<string, number>, after: Map<string, number>, up: boolean): string[] {
  const out: string[] = []
  for (const [k, b] of before) {
    const a = after.get(k)
    if (a !== undefined && (up ? a < b : a > b)) out.push(`${k}: ${b} -> ${a}`)
  }
  return out
}

const clouds = () =>
  Array.from({length: CLOUDS}, (_, k) => {
    const seed = 1000 + k
    const {snapshot, flavors} = generate(seed)
    return {seed, s: stateFromSnapshot(structuredClone(snapshot)), flavors: flavors.map(flavorRequest), r: rng(seed)}
  })

describe('headroom moves the right way', () => {
  it('lowering an allocation ratio never raises a fit', () => {
    let compared = 0
    for (const {seed, s, flavors} of clouds()) {
      const before = fits(s, flavors)
      for (const rc of ['VCPU', 'MEMORY_MB', 'DISK_GB', 'PCPU']) {
        const ratios = [...s.providers.values()].flatMap((p) => (p.inventories.has(rc) ? [p.inventories.get(rc)!.allocation_ratio] : []))
        if (!ratios.length) continue
        // Below every inventory's ratio of the class: each one is lowered.
        const after = fits(whatIf(s, {ratios: new Map([[rc, Math.min(...ratios) * 0.7]])}).after, flavors)
        expect(wrongWay(before, after, false), `seed ${seed}, ${rc} ratio lowered`).toEqual([])
        compared += before.size
      }
    }
    console.log(`ratio lowered: ${compared} counts compared`)
  })

  it('removing a host, a rack or a row never raises any domain’s fit', () => {
    let compared = 0
    for (const {seed, s, flavors, r} of clouds()) {
      const before = fits(s, flavors)
      const hosts = everyHost(s)
      const host = hosts[Math.floor(r() * hosts.length)]
      const {rack, row} = hostDomains(s, host)
      const changes: WhatIfChange[] = [
        {without: [{level: 'host', name: host.name}]},
        {without: [{level: 'rack', name: rack!}]},
        {without: [{level: 'row', name: row!}]},
      ]
      for (const change of changes) {
        const w = whatIf(s, change)
        expect(w.displaced).toEqual([]) // usage without consumers: nothing is placed again
        expect(wrongWay(before, fits(w.after, flavors), false), `seed ${seed}, without ${JSON.stringify(change.without)}`).toEqual([])
        compared += before.size
      }
    }
    console.log(`hosts removed: ${compared} counts compared`)
  })

  it('adding a host never lowers a fit, and an empty host with disk of its own adds what it holds', () => {
    let compared = 0
    let grew = 0
    for (const {seed, s, flavors, r} of clouds()) {
      const before = fits(s, flavors)
      const hosts = everyHost(s)
      const {rack} = hostDomains(s, hosts[Math.floor(r() * hosts.length)])
      const after = fits(withNewHost(s, rack!), flavors)
      expect(wrongWay(before, after, true), `seed ${seed}, a host added to ${rack}`).toEqual([])
      for (const f of flavors) {
        const alone = after.get(`${f.flavor} on host new-host`) ?? 0
        if (!alone) continue
        // An empty host that holds some alone, its own disk taken first, adds to its rack.
        const rackFit = (m: Map<string, number>) => m.get(`${f.flavor} on rack ${rack}`) ?? 0
        expect(rackFit(after), `seed ${seed}, ${f.flavor}: new-host holds ${alone} alone`).toBeGreaterThan(rackFit(before))
        grew++
      }
      compared += before.size
    }
    console.log(`a host added: ${compared} counts compared, ${grew} rack counts grew`)
    expect(grew).toBeGreaterThan(CLOUDS / 5)
  })

  it("a domain's fit is at most the sum of its children's", () => {
    let compared = 0
    const parentOf = {host: 'rack', rack: 'row', row: 'room', room: 'cloud'} as const
    for (const {seed, s, flavors} of clouds()) {
      const rows = headroom(s, flavors).domains
      const byKey = new Map(rows.map((d) => [key(d), d]))
      const sums = new Map<string, number>()
      for (const h of everyHost(s)) {
        const at = hostDomains(s, h)
        for (const f of flavors) {
          for (const level of ['host', 'rack', 'row', 'room'] as const) {
            const child = level === 'host' ? h.name : at[level]
            if (child === null) continue
            const parent = parentOf[level] === 'cloud' ? 'cloud' : at[parentOf[level] as 'rack']
            const k = `${f.flavor} on ${parentOf[level]} ${parent}`
            // Each child once: a host's fit into its rack, a rack's into its row, ...
            const childKey = `${k} <- ${level} ${child}`
            if (sums.has(childKey)) continue
            sums.set(childKey, 0)
            sums.set(k, (sums.get(k) ?? 0) + byKey.get(`${f.flavor} on ${level} ${child}`)!.fit)
          }
        }
      }
      for (const d of rows) {
        if (d.level === 'host') continue
        const sum = sums.get(key(d)) ?? 0
        expect(d.fit, `seed ${seed}, ${key(d)}: its children add up to ${sum}`).toBeLessThanOrEqual(sum)
        compared++
      }
    }
    console.log(`domains against their children: ${compared} compared`)
  })

  it("hold on a planner's cloud too, but where a lost rack's pooled disk is placed again on hosts' own", () => {
    let compared = 0
    let raised = 0
    for (const seed of depth([4242, 7, 99], [4242])) {
      const cloud = plannerCloud(seed)
      const s = plannerState(cloud)
      const flavors = cloud.flavors.map(flavorRequest)
      const before = fits(s, flavors)
      for (const rc of ['VCPU', 'MEMORY_MB', 'DISK_GB']) {
        const after = fits(whatIf(s, {ratios: new Map([[rc, 0.9]])}).after, flavors)
        expect(wrongWay(before, after, false), `seed ${seed}, ${rc} ratio 0.9`).toEqual([])
        compared += before.size
      }
      // An empty host with disk of its own, added to each rack in turn: no fit lower, its rack's higher.
      for (const rack of new Set(everyHost(s).map((h) => hostDomains(s, h).rack!))) {
        const after = fits(withNewHost(s, rack), flavors)
        expect(wrongWay(before, after, true), `seed ${seed}, a host added to ${rack}`).toEqual([])
        for (const f of flavors)
          if (after.get(`${f.flavor} on host new-host`))
            expect(after.get(`${f.flavor} on rack ${rack}`), `seed ${seed}, ${f.flavor}: new-host in ${rack}`).toBeGreaterThan(
              before.get(`${f.flavor} on rack ${rack}`)!,
            )
        compared += before.size
      }
      // A lost domain's consumers are placed again as claims would place them: the first
      // candidate, a host's own disk before a pool. Those whose disk was on a pool (their host's
      // own was full) may leave it, and what draws on the pool then has more room: the only way
      // a loss raises a fit (docs/cli/capacity.md). Each rise is held to a pool that gained.
      const hosts = everyHost(s)
      for (const level of ['rack', 'row', 'room'] as const)
        for (const name of new Set(hosts.map((h) => hostDomains(s, h)[level]!))) {
          const w = whatIf(s, {without: [{level, name}]})
          const wrong = wrongWay(before, fits(w.after, flavors), false)
          compared += before.size
          if (!wrong.length) continue
          raised += wrong.length
          const gained = [...poolFree(w.after)].filter(([pool, free]) => free > poolFree(s).get(pool)!)
          expect(gained.length, `seed ${seed}, without ${level} ${name}: ${wrong.join('; ')}`).toBeGreaterThan(0)
        }
    }
    console.log(`planner's clouds: ${compared} counts compared, ${raised} raised by pooled disk placed again on hosts' own`)
  })
})

describe('where a loss raises a fit (docs/cli/capacity.md)', () => {
  it("is where a displaced consumer's pooled disk goes to a host's own", () => {
    const inv = (total: number) => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1})
    const rack = (r: string) => nodeUuid('rack', r)
    const pool = '00000000-0000-4000-8000-0000000000aa'
    const host = (n: number, name: string, r: string, disk: number) => ({
      uuid: `00000000-0000-4000-8000-00000000000${n}`,
      name,
      generation: 1,
      inventories: {VCPU: inv(4), ...(disk ? {DISK_GB: inv(disk)} : {})},
      aggregates: [rack(r), pool],
    })
    const s = stateFromSnapshot({
      classes: ['VCPU', 'DISK_GB'],
      traits: ['MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_STATUS_DISABLED'],
      topology: ['r1', 'r2', 'r3'].map((r) => ({uuid: rack(r), name: r, level: 'rack' as const, parent: null})),
      providers: [
        // z (rack r3) first: a claim's first candidate; x keeps no disk of its own; all reach ceph.
        host(1, 'z', 'r3', 200),
        host(2, 'y', 'r2', 200),
        host(3, 'x', 'r1', 0),
        {
          uuid: pool,
          name: 'ceph',
          generation: 1,
          inventories: {DISK_GB: inv(100)},
          traits: ['MISC_SHARES_VIA_AGGREGATE'],
          aggregates: [pool],
        },
      ],
      // z has 150 GB left; the instance on x has its 100 GB on ceph, which it fills.
      consumers: [
        {
          uuid: '00000000-0000-4000-8000-000000000101',
          project_id: 'p',
          user_id: 'u',
          allocations: {'00000000-0000-4000-8000-000000000003': {resources: {VCPU: 1}}, [pool]: {resources: {DISK_GB: 100}}},
        },
        {
          uuid: '00000000-0000-4000-8000-000000000102',
          project_id: 'p',
          user_id: 'u',
          allocations: {'00000000-0000-4000-8000-000000000001': {resources: {VCPU: 1, DISK_GB: 50}}},
        },
      ],
    })
    const f = flavorRequest({name: 'd100', vcpus: 1, ram: 0, disk: 100, ephemeral: 0, swap: 0, properties: {'resources:MEMORY_MB': '0'}})
    const r2 = (st: State) => headroom(st, [f], {levels: ['rack']}).domains.find((d) => d.name === 'r2')!.fit
    expect(r2(s)).toBe(2) // y's own 200 GB; ceph is full
    // Without r1, the instance of x is placed again as a claim would: z's own disk first, and it leaves ceph.
    const w = whatIf(s, {without: [{level: 'rack', name: 'r1'}]})
    expect(w.displaced.map((d) => d.to)).toEqual([['z']])
    expect(r2(w.after)).toBe(3) // y: 2 on its own disk, and now 1 on ceph: r2 lost nothing and holds more
  })
})

/** What each sharing pool has free, by name. */
const poolFree = (s: State) =>
  new Map(
    [...s.providers.values()]
      .filter(isSharing)
      .map((p) => [p.name, [...p.inventories].reduce((m, [rc, i]) => m + capacityOf(i) - (p.usages.get(rc) ?? 0), 0)]),
  )
