/**
 * Headroom against a brute force, on generated clouds (test/helpers/headroom-clouds.ts: flat
 * hosts, NUMA trees with GPU grandchildren, bare metal, rack pools whose hosts may keep disk of
 * their own, a pool across rooms, disabled hosts, reserved, ratios, max_unit, step_size, existing
 * usage) and generated flavors: every host's and domain's fit is the number of
 * claims the core's own claim path (the candidates engine's first candidate, written with
 * writeAllocations) accepts one after another on a copy, until none fits; pooled and stranded by
 * the test's own arithmetic.
 */
import {depth} from '../helpers/depth.js'
import {randomUUID} from 'node:crypto'
import {describe, expect, it} from 'vitest'
import {findCandidates} from '../../src/core/candidates/engine.js'
import {askedPerClass, flavorRequest, type FlavorRequest} from '../../src/core/headroom/flavors.js'
import {headroom, headroomTable} from '../../src/core/headroom/headroom.js'
import {capacityJson} from '../../src/http/routes/capacity.js'
import {GROUP_LEVELS, newBreaches, type Group, type GroupPolicy} from '../../src/core/groups.js'
import {everyHost, isDisabled, isSharing} from '../../src/core/host.js'
import {stateFromSnapshot, type Snapshot} from '../../src/core/snapshot.js'
import type {Inventory, Provider, State} from '../../src/core/state/state.js'
import {hostDomains, nodeUuid} from '../../src/core/topology.js'
import {CLASSES, TRAITS, cap, claimsOneAfterAnother, domainsOf, generate, onHosts, writeClaim} from '../helpers/headroom-clouds.js'
import {rng} from '../helpers/rng.js'

/** The sharing providers a host reaches: those in an aggregate of a provider of its tree. */
const reachedPools = (s: State, host: Provider) =>
  [...s.providers.values()].filter(
    (p) => isSharing(p) && s.subtree(host.uuid).some((q) => [...p.aggregates].some((a) => q.aggregates.has(a))),
  )

const treeFree = (s: State, host: Provider) => {
  const free = new Map<string, number>()
  for (const p of s.subtree(host.uuid))
    for (const [rc, i] of p.inventories) free.set(rc, (free.get(rc) ?? 0) + Math.max(0, cap(i) - (p.usages.get(rc) ?? 0)))
  return free
}

/** The capacity route's answer as one text. */
const answerText = (...args: Parameters<typeof capacityJson>): string => [...capacityJson(...args).pieces()].join('')

/** Generated clouds checked: all of them in the whole run, a third by default. */
const CLOUDS = depth(60, 10)
const GROUP_CLOUDS = depth(40, 7)

describe('headroom', () => {
  it('agrees with claims one after another on generated clouds: every host and domain, every flavor', () => {
    let checked = 0
    let positive = 0
    let bound = 0
    for (let seed = 1; seed <= CLOUDS; seed++) {
      const {snapshot, flavors} = generate(seed)
      const s = stateFromSnapshot(structuredClone(snapshot))
      const requests = flavors.map(flavorRequest)
      const got = headroom(s, requests)
      // The daemon's answer, written from the table's columns, is JSON.stringify's of the same rows.
      expect(answerText(headroomTable(s, requests), ['w'])).toBe(JSON.stringify({...got, warnings: ['w']}))
      const members = domainsOf(s)
      for (const f of requests) {
        const rows = got.domains.filter((d) => d.flavor === f.flavor)
        for (const [level, name, inDomain] of members) {
          const row = rows.find((d) => d.level === level && d.name === name)
          expect(row, `${level} ${name}`).toBeDefined()
          const enabled = new Set(inDomain.filter((h) => !isDisabled(h)).map((h) => h.uuid))
          const disabled = new Set(inDomain.filter((h) => isDisabled(h)).map((h) => h.uuid))
          const want = {fit: claimsOneAfterAnother(snapshot, f, enabled), disabled_fit: claimsOneAfterAnother(snapshot, f, disabled)}
          expect({fit: row!.fit, disabled_fit: row!.disabled_fit}, `seed ${seed}, ${f.flavor} on ${level} ${name}`).toEqual(want)
          expect(row!.fragmentation_loss).toBe(row!.pooled - row!.fit)
          // What binds is a class the flavor asks, of an enabled host of the domain's tree or a pool it reaches.
          if (row!.binding !== null) {
            const [rc, pool] = row!.binding.split('@')
            expect(askedPerClass(f.request).has(rc), `${row!.binding} asked`).toBe(true)
            const holders = inDomain
              .filter((h) => !isDisabled(h))
              .flatMap((h) => (pool === undefined ? s.subtree(h.uuid) : reachedPools(s, h).filter((p) => p.name === pool)))
            expect(
              holders.some((p) => p.inventories.has(rc)),
              `seed ${seed}, ${f.flavor} on ${level} ${name} bound by ${row!.binding}`,
            ).toBe(true)
            bound++
          } else expect(inDomain.some((h) => !isDisabled(h)) && row!.fit > 0).toBe(false)
          checked += 2
          if (want.fit > 0) positive++
        }
      }
      // Stranded: hosts where no flavor fits, each free class but the bottleneck.
      const fitsSomewhere = new Set(got.domains.filter((d) => d.level === 'host' && d.fit > 0).map((d) => d.name))
      for (const st of got.stranded) {
        const host = s.providerByName.get(st.host)!
        expect(fitsSomewhere.has(st.host)).toBe(false)
        expect(isDisabled(host)).toBe(false)
        expect(st.amount).toBe(treeFree(s, host).get(st.class))
        expect(st.class).not.toBe(st.bottleneck)
        // The class that blocks is one the host's tree or a pool it reaches has.
        const reached = [...s.subtree(host.uuid), ...reachedPools(s, host)]
        expect(
          reached.some((p) => p.inventories.has(st.bottleneck)),
          `${st.host} blocked by ${st.bottleneck}`,
        ).toBe(true)
      }
    }
    console.log(
      `headroom: ${checked} counts checked against claims one after another (${positive} of them above 0) on ${CLOUDS} generated clouds, ${bound} bindings`,
    )
    expect(positive).toBeGreaterThan(CLOUDS * 3)
    expect(bound).toBeGreaterThan(positive)
  })

  it('pooled counts a domain as one host: its free amounts over what one instance asks', () => {
    const snapshot: Snapshot = {
      classes: CLASSES,
      traits: TRAITS,
      topology: [{uuid: nodeUuid('rack', 'r1'), name: 'r1', level: 'rack', parent: null}],
      providers: ['a', 'b'].map((name, i) => ({
        uuid: `00000000-0000-4000-8000-00000000000${i + 1}`,
        name,
        generation: 1,
        inventories: {
          VCPU: {total: 6, reserved: 0, min_unit: 1, max_unit: 6, step_size: 1, allocation_ratio: 1},
          MEMORY_MB: {total: 8192, reserved: 0, min_unit: 1, max_unit: 8192, step_size: 1, allocation_ratio: 1},
        },
        usages: {},
        traits: [],
        aggregates: [nodeUuid('rack', 'r1')],
      })),
    }
    const s = stateFromSnapshot(snapshot)
    const f = flavorRequest({name: 'f4', vcpus: 4, ram: 1024, disk: 0, ephemeral: 0, swap: 0, properties: {}})
    const rack = headroom(s, [f], {levels: ['rack']}).domains[0]
    // One 4-VCPU instance per 6-VCPU host, 3 if the rack were one host: 1 lost to the boundaries.
    expect(rack).toMatchObject({fit: 2, pooled: 3, fragmentation_loss: 1})
  })

  it("takes a host's own disk first and then its pool, and names what binds: a class, or a pool", () => {
    const inv = (total: number): Inventory => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1})
    const rack = nodeUuid('rack', 'r1')
    const host = (name: string, n: number, inventories: Record<string, Inventory>) => ({
      uuid: `00000000-0000-4000-8000-00000000000${n}`,
      name,
      generation: 1,
      inventories,
      usages: {},
      traits: [],
      aggregates: [rack],
    })
    const s = stateFromSnapshot({
      classes: CLASSES,
      traits: TRAITS,
      topology: [{uuid: rack, name: 'r1', level: 'rack', parent: null}],
      providers: [
        {...host('ceph', 1, {DISK_GB: inv(100)}), traits: ['MISC_SHARES_VIA_AGGREGATE']},
        host('a', 2, {VCPU: inv(16), MEMORY_MB: inv(65536), DISK_GB: inv(50)}),
        host('b', 3, {VCPU: inv(16), MEMORY_MB: inv(65536), DISK_GB: inv(50)}),
        host('c', 4, {VCPU: inv(2), MEMORY_MB: inv(65536), DISK_GB: inv(500)}),
      ],
    })
    const f = flavorRequest({name: 'd40', vcpus: 1, ram: 1024, disk: 40, ephemeral: 0, swap: 0, properties: {}})
    const rows = headroom(s, [f], {levels: ['host', 'rack']}).domains.map((d) => [d.name, d.fit, d.binding])
    // a: 1 on its own disk, then 2 on the pool's 100 GB; b: 1 on its own, the pool's last 20 GB too few; c: its 2 VCPUs.
    // Alone, each host would have the whole pool: a and b 3 each.
    expect(rows).toEqual([
      ['a', 3, 'DISK_GB@ceph'],
      ['b', 3, 'DISK_GB@ceph'],
      ['c', 2, 'VCPU'],
      ['r1', 6, 'DISK_GB@ceph'],
    ])
  })

  it("counts past 2^31 (a cloud of large ratios) in the rows and in the daemon's answer", () => {
    const big = (total: number): Inventory => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 16})
    const s = stateFromSnapshot({
      classes: CLASSES,
      traits: TRAITS,
      topology: [{uuid: nodeUuid('rack', 'r1'), name: 'r1', level: 'rack', parent: null}],
      providers: [1, 2].map((i) => ({
        uuid: `00000000-0000-4000-8000-00000000000${i}`,
        name: `h${i}`,
        generation: 1,
        inventories: {VCPU: big(2147483647), MEMORY_MB: big(2147483647)},
        usages: {},
        traits: [],
        aggregates: [nodeUuid('rack', 'r1')],
      })),
    })
    const f = flavorRequest({name: 'tiny', vcpus: 1, ram: 1, disk: 0, ephemeral: 0, swap: 0, properties: {}})
    const got = headroom(s, [f], {levels: ['host', 'rack']})
    const each = Math.trunc(2147483647 * 16)
    expect(got.domains.map((d) => [d.name, d.fit])).toEqual([
      ['h1', each],
      ['h2', each],
      ['r1', 2 * each],
    ])
    expect(answerText(headroomTable(s, [f], {levels: ['host', 'rack']}), [])).toBe(JSON.stringify({...got, warnings: []}))
  })

  it('lists hosts and stranded capacity by name, whatever order the providers were read in', () => {
    const host = (name: string, i: number) => ({
      uuid: `00000000-0000-4000-8000-00000000000${i + 1}`,
      name,
      generation: 1,
      inventories: {
        VCPU: {total: 4, reserved: 0, min_unit: 1, max_unit: 4, step_size: 1, allocation_ratio: 1},
        MEMORY_MB: {total: 512, reserved: 0, min_unit: 1, max_unit: 512, step_size: 1, allocation_ratio: 1},
      },
      usages: {VCPU: 1},
      traits: [],
      aggregates: [],
    })
    const f = flavorRequest({name: 'f4', vcpus: 4, ram: 256, disk: 0, ephemeral: 0, swap: 0, properties: {}})
    for (const names of [
      ['c', 'a', 'b'],
      ['b', 'c', 'a'],
    ]) {
      const s = stateFromSnapshot({classes: CLASSES, traits: TRAITS, topology: [], providers: names.map(host)})
      const h = headroom(s, [f], {levels: ['host']})
      expect(h.domains.map((d) => d.name)).toEqual(['a', 'b', 'c'])
      expect(h.stranded.map((x) => x.host)).toEqual(['a', 'b', 'c'])
    }
  })

  it('names as the bottleneck a class the host has, of the flavor that comes closest; flavors that fit nowhere strand nothing', () => {
    const inv = (total: number): Inventory => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1})
    const host = (name: string, i: number, usages: Record<string, number>) => ({
      uuid: `00000000-0000-4000-8000-00000000000${i + 1}`,
      name,
      generation: 1,
      inventories: {VCPU: inv(16), MEMORY_MB: inv(32768)},
      usages,
      traits: [],
      aggregates: [],
    })
    const s = stateFromSnapshot({
      classes: [...CLASSES, 'CUSTOM_NOBODY'],
      traits: TRAITS,
      topology: [],
      // a: 3,000 MB free (the smallest flavor asks 4,096); b: 1 VCPU free.
      providers: [host('a', 0, {MEMORY_MB: 32768 - 3000}), host('b', 1, {VCPU: 15})],
    })
    const flavor = (name: string, vcpus: number, ram: number, properties: Record<string, string> = {}) =>
      flavorRequest({name, vcpus, ram, disk: 0, ephemeral: 0, swap: 0, properties})
    const catalog = [
      flavor('m1.medium', 2, 4096),
      flavor('m1.large', 4, 8192),
      flavor('d1.small', 1, 1024, {'hw:cpu_policy': 'dedicated'}),
      flavor('never', 1, 512, {'resources:CUSTOM_NOBODY': '1'}),
    ]
    const got = headroom(s, catalog, {levels: ['host']})
    expect(got.stranded).toEqual([
      {host: 'a', class: 'VCPU', amount: 16, bottleneck: 'MEMORY_MB'},
      {host: 'b', class: 'MEMORY_MB', amount: 32768, bottleneck: 'VCPU'},
    ])
    // A flavor lint says fits nowhere strands nothing, alone or beside the others.
    expect(headroom(s, [catalog[3]], {levels: ['host']})).toMatchObject({stranded: [], lint: [{flavor: 'never'}]})
    expect(headroom(s, [catalog[0], catalog[3]], {levels: ['host']}).stranded.map((x) => x.bottleneck)).toEqual(['MEMORY_MB', 'VCPU'])
  })

  it("bounds the fit by a placement group's rule as claims of new members one after another would find it", () => {
    let checked = 0
    let positive = 0
    for (let seed = 101; seed < 101 + GROUP_CLOUDS; seed++) {
      const r = rng(seed)
      const {snapshot, flavors} = generate(seed)
      const s = stateFromSnapshot(structuredClone(snapshot))
      const hosts = everyHost(s)
      const f = flavorRequest({...flavors.find((x) => !x.name.includes('metal'))!, properties: {}})
      const policy = (['anti-affinity', 'max-per', 'spread', 'affinity'] as GroupPolicy[])[seed % 4]
      const level = GROUP_LEVELS[Math.floor(r() * 3)]
      const g: Group = {
        name: 'g',
        policy,
        level,
        maxPer: 1 + Math.floor(r() * 3),
        maxSkew: Math.floor(r() * 3),
        soft: false,
        members: new Set(),
        generation: 1,
        createdAt: 0,
        updatedAt: 0,
      }
      // A few members placed already, as the rule allows (claims one after another under it).
      const placed = policy === 'affinity' && r() < 0.5 ? 0 : Math.floor(r() * 3)
      const base = claimMembers(snapshot, g, f, new Set(hosts.filter((h) => !isDisabled(h)).map((h) => h.uuid)), placed)
      const state = stateFromSnapshot(structuredClone(base.snapshot))
      state.groups.set('g', base.group)
      const got = headroom(state, [f], {group: base.group, levels: ['host', 'rack', 'row', 'room', 'cloud']})
      for (const row of got.domains) {
        const inDomain = hosts.filter(
          (h) =>
            row.level === 'cloud' || (row.level === 'host' ? h.name === row.name : hostDomains(s, h)[row.level as 'rack'] === row.name),
        )
        const enabled = new Set(inDomain.filter((h) => !isDisabled(h)).map((h) => h.uuid))
        let want: number
        if (policy === 'affinity' && base.group.members.size === 0) {
          // No member yet: the first may go to any domain of the level; the most one of them takes.
          const byDomain = new Map<string, Set<string>>()
          for (const u of enabled) {
            const d = level === 'host' ? u : hostDomains(state, state.providers.get(u)!)[level]
            if (d === null) continue
            byDomain.set(d, (byDomain.get(d) ?? new Set()).add(u))
          }
          want = Math.max(0, ...[...byDomain.values()].map((hs) => claimMembers(base.snapshot, base.group, f, hs, 5000).added))
        } else want = claimMembers(base.snapshot, base.group, f, enabled, 5000).added
        expect(row.fit, `seed ${seed}, ${ruleOf(g)}, ${row.level} ${row.name}`).toBe(want)
        checked++
        if (want > 0) positive++
      }
    }
    console.log(
      `headroom with a placement group: ${checked} counts checked against claims of new members one after another (${positive} above 0)`,
    )
    expect(positive).toBeGreaterThan(GROUP_CLOUDS * 2.5)
  })
})

const ruleOf = (g: Group) =>
  `${g.policy} by ${g.level}${g.policy === 'max-per' ? ` (${g.maxPer})` : g.policy === 'spread' ? ` (skew ${g.maxSkew})` : ''}`

/**
 * Claims of new members of `g` one after another on a copy, each the first candidate on `hosts`
 * whose placement its rule allows, up to `most`; the snapshot and group after them.
 */
function claimMembers(
  snapshot: Snapshot,
  g: Group,
  flavor: FlavorRequest,
  hosts: Set<string>,
  most: number,
): {added: number; snapshot: Snapshot; group: Group} {
  const copy = stateFromSnapshot(structuredClone(snapshot))
  const group: Group = {...g, members: new Set(g.members)}
  copy.groups.set(g.name, group)
  const consumers = [...(snapshot.consumers ?? [])]
  let added = 0
  for (; added < most; added++) {
    const consumer = `c${String(added).padStart(7, '0')}-0000-4000-8000-${randomUUID().slice(-12)}`
    const found = findCandidates(copy, flavor.request).allocationRequests.find(
      (a) =>
        onHosts(copy, hosts, a) &&
        newBreaches(copy, {placements: new Map([[consumer, a.allocations.keys()]]), joins: new Map([[g.name, [consumer]]])}).length === 0,
    )
    if (!found) break
    writeClaim(copy, consumer, found.allocations)
    group.members.add(consumer)
    consumers.push({
      uuid: consumer,
      project_id: 'p',
      user_id: 'u',
      allocations: Object.fromEntries([...found.allocations].map(([rp, a]) => [rp, {resources: Object.fromEntries(a)}])),
    })
  }
  // Usages follow the consumers from here on.
  const providers = snapshot.providers.map((p) => ({...p, usages: undefined}))
  const usedBefore = new Map(snapshot.providers.map((p) => [p.uuid, p.usages ?? {}]))
  const seed: Snapshot['consumers'] = [...usedBefore]
    .filter(([, u]) => Object.keys(u).length)
    .map(([rp, u], i) => ({
      uuid: `u${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`,
      project_id: 'p',
      user_id: 'u',
      allocations: {[rp]: {resources: u}},
    }))
  return {added, snapshot: {...snapshot, providers, consumers: snapshot.consumers ? consumers : [...seed!, ...consumers]}, group}
}
