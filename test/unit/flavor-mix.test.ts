/**
 * The flavor mix (core/headroom/flavor-mix.ts) against a brute force: on a copy of the cloud,
 * claims one after another, the k-th of the flavor with the largest deficit weight * (k + 1) / W -
 * placed (the test's own arithmetic), each the first candidate of findCandidates on the domain's enabled hosts (and
 * sharing providers), written with writeAllocations, until one finds none. Every domain of every
 * level on generated clouds (test/helpers/headroom-clouds.ts) and on the planner's cloud
 * (test/helpers/planner-cloud.ts); and by hand: a mix of one flavor is headroom's fit, a flavor
 * that fits nowhere stops the mix at its first turn, a 2:1 mix on a small rack with a shared pool.
 */
import {randomUUID} from 'node:crypto'
import {afterAll, describe, expect, it} from 'vitest'
import {findCandidates} from '../../src/core/candidates/engine.js'
import {mixHeadroom, mixOrder, type MixDomain, type MixPart} from '../../src/core/headroom/flavor-mix.js'
import {flavorRequest, type Flavor, type FlavorRequest} from '../../src/core/headroom/flavors.js'
import {headroom, HEADROOM_LEVELS, type HeadroomLevel} from '../../src/core/headroom/headroom.js'
import {isDisabled} from '../../src/core/host.js'
import {stateFromSnapshot, type Snapshot} from '../../src/core/snapshot.js'
import type {Inventory, State} from '../../src/core/state/state.js'
import {nodeUuid} from '../../src/core/topology.js'
import {depth, FULL_DEPTH} from '../helpers/depth.js'
import {CLASSES, TRAITS, domainsOf, generate, onHosts, writeClaim} from '../helpers/headroom-clouds.js'
import {plannerCloud, plannerState} from '../helpers/planner-cloud.js'
import {rng} from '../helpers/rng.js'

/** Generated clouds checked, and mixes on each. */
const CLOUDS = depth(60, 12)
const MIXES = depth(4, 2)
/** The brute force stops here: a count that reached it would prove nothing. */
const LIMIT = 5000

/** The flavor of claim k by the rule: the largest weight * (k + 1) / W - placed, compared times W (whole weights: exact), the first of equals. */
function ruleFlavor(weights: readonly number[], placed: readonly number[], k: number): number {
  const W = weights.reduce((a, b) => a + b, 0)
  let best = 0
  for (let f = 1; f < weights.length; f++) if (weights[f] * (k + 1) - placed[f] * W > weights[best] * (k + 1) - placed[best] * W) best = f
  return best
}

/** The mix's claims one after another on a copy, each its flavor's first candidate on `hosts` (and pools), until one fits nowhere. */
function mixClaimsOneAfterAnother(
  snapshot: Snapshot,
  mix: readonly MixPart[],
  hosts: Set<string>,
): {fit: number; by_flavor: Record<string, number>} {
  const placed = mix.map(() => 0)
  let k = 0
  if (hosts.size > 0) {
    const copy = stateFromSnapshot(structuredClone(snapshot))
    for (; k < LIMIT; k++) {
      const f = ruleFlavor(
        mix.map((m) => m.weight),
        placed,
        k,
      )
      const found = findCandidates(copy, mix[f].flavor.request).allocationRequests.find((a) => onHosts(copy, hosts, a))
      if (!found) break
      writeClaim(copy, randomUUID(), found.allocations)
      placed[f]++
    }
  }
  const by_flavor: Record<string, number> = {}
  mix.forEach((m, f) => {
    by_flavor[m.flavor.flavor] = placed[f]
  })
  return {fit: k, by_flavor}
}

/** Checks every domain of `levels` against the brute force; the cells checked and those above 0. */
function checkMix(
  snapshot: Snapshot,
  s: State,
  mix: readonly MixPart[],
  what: string,
  levels: readonly HeadroomLevel[] = HEADROOM_LEVELS,
): {cells: number; positive: number} {
  const got = mixHeadroom(s, mix, {levels})
  // The domains, and their order, are headroom's rows.
  expect(got.map((d) => `${d.level} ${d.name}`)).toEqual(headroom(s, [mix[0].flavor], {levels}).domains.map((d) => `${d.level} ${d.name}`))
  let cells = 0
  let positive = 0
  for (const [level, name, inDomain] of domainsOf(s, levels)) {
    const row = got.find((d) => d.level === level && d.name === name)
    expect(row, `${what}: ${level} ${name}`).toBeDefined()
    const want = mixClaimsOneAfterAnother(snapshot, mix, new Set(inDomain.filter((h) => !isDisabled(h)).map((h) => h.uuid)))
    expect(want.fit, `${what}: ${level} ${name}`).toBeLessThan(LIMIT)
    expect({fit: row!.fit, by_flavor: row!.by_flavor}, `${what}: ${level} ${name}`).toEqual(want)
    cells++
    if (want.fit > 0) positive++
  }
  return {cells, positive}
}

const describeMix = (mix: readonly MixPart[]) => mix.map((m) => `${m.flavor.flavor}=${m.weight}`).join(',')

/** How many cells were checked against the brute force, and how many of them above 0. */
const tally = {cells: 0, positive: 0}

describe('flavor mix', () => {
  afterAll(() => {
    console.log(
      `flavor mix: ${tally.cells} domains checked against claims one after another (${tally.positive} of them above 0): ` +
        `${CLOUDS} generated clouds x ${MIXES} mix(es), and the planner's cloud`,
    )
  })

  it('claims in the order of the largest deficit: 60/30/10 repeats L M L L M L R L M L, each flavor its share every W claims', () => {
    expect(mixOrder([60, 30, 10], 20)).toEqual([0, 1, 0, 0, 1, 0, 2, 0, 1, 0, 0, 1, 0, 0, 1, 0, 2, 0, 1, 0])
    // Decimals are the same mix (in floating point 0.6 * 4 - 2 < 0.1 * 4: the tie at claim 3 would go to R).
    expect(mixOrder([0.6, 0.3, 0.1], 20)).toEqual(mixOrder([60, 30, 10], 20))
    expect(mixOrder([1, 1], 4)).toEqual([0, 1, 0, 1])
    const r = rng(7)
    for (let n = 0; n < 200; n++) {
      const weights = Array.from({length: 1 + Math.floor(r() * 4)}, () => 1 + Math.floor(r() * 12))
      const W = weights.reduce((a, b) => a + b, 0)
      const order = mixOrder(weights, 3 * W)
      // The rule as the brute force writes it.
      const placed = weights.map(() => 0)
      order.forEach((f, k) => {
        expect(f, `${weights} claim ${k}`).toBe(ruleFlavor(weights, placed, k))
        placed[f]++
      })
      // Every W claims, each flavor exactly its weight.
      for (let p = 0; p < 3; p++) weights.forEach((w, f) => expect(order.slice(p * W, (p + 1) * W).filter((x) => x === f).length).toBe(w))
    }
    expect(() => mixOrder([], 1)).toThrow(RangeError)
    expect(() => mixOrder([1, 0], 1)).toThrow(RangeError)
    expect(() => mixOrder([1, Number.NaN], 1)).toThrow(RangeError)
  })

  it('is claims one after another on generated clouds: every domain of every level, mixes of 2 or 3 flavors', () => {
    let generated = 0
    for (let seed = 1; seed <= CLOUDS; seed++) {
      const {snapshot, flavors} = generate(seed)
      const s = stateFromSnapshot(structuredClone(snapshot))
      const requests = flavors.map(flavorRequest)
      const r = rng(1000 + seed)
      for (let m = 0; m < MIXES; m++) {
        // 2 or 3 of the cloud's flavors, in a random order, with random whole weights.
        const picked = [...requests].sort(() => r() - 0.5).slice(0, 2 + Math.floor(r() * 2))
        const mix = picked.map((flavor) => ({flavor, weight: 1 + Math.floor(r() * (r() < 0.3 ? 60 : 6))}))
        const {cells, positive} = checkMix(snapshot, s, mix, `seed ${seed}, ${describeMix(mix)}`)
        tally.cells += cells
        tally.positive += positive
        generated += positive
      }
    }
    expect(generated).toBeGreaterThan(CLOUDS * MIXES * 3)
  })

  it("is claims one after another on the planner's cloud", {timeout: 600_000}, () => {
    const cloud = plannerCloud()
    const s = plannerState(cloud)
    const request = new Map(cloud.flavors.map((f) => [f.name, flavorRequest(f)]))
    const mix = (...parts: Array<[string, number]>) => parts.map(([name, weight]) => ({flavor: request.get(name)!, weight}))
    // Every level in the whole run; the quick one leaves the 48 hosts to the generated clouds.
    let planner = 0
    // The whole run checks every level of each mix; the quick one the racks and up of the second and third.
    for (const [m, levels] of [
      [mix(['m1.large', 60], ['m1.medium', 30], ['r1.large', 10]), HEADROOM_LEVELS],
      [mix(['e1.large', 2], ['m1.small', 3], ['v1.bfv', 1]), FULL_DEPTH ? HEADROOM_LEVELS : (['rack', 'row', 'room', 'cloud'] as const)],
      [
        mix(['c1.dedicated', 1], ['m1.xlarge', 2], ['g1.vgpu', 1]),
        FULL_DEPTH ? HEADROOM_LEVELS : (['rack', 'row', 'room', 'cloud'] as const),
      ],
    ] as const) {
      const {cells, positive} = checkMix(cloud.snapshot, s, m, describeMix(m), levels)
      tally.cells += cells
      tally.positive += positive
      planner += positive
    }
    expect(planner).toBeGreaterThan(depth(150, 60))
    // Weights written as decimals, or scaled, are the same mix.
    const byName = (parts: Array<[string, number]>) => mixHeadroom(s, mix(...parts))
    const sixty = byName([
      ['m1.large', 60],
      ['m1.medium', 30],
      ['r1.large', 10],
    ])
    expect(
      byName([
        ['m1.large', 0.6],
        ['m1.medium', 0.3],
        ['r1.large', 0.1],
      ]),
    ).toEqual(sixty)
    expect(
      byName([
        ['m1.large', 6],
        ['m1.medium', 3],
        ['r1.large', 1],
      ]),
    ).toEqual(sixty)
  })

  it("of one flavor is headroom's fit, on every domain", () => {
    const clouds: Array<{s: State; requests: FlavorRequest[]}> = []
    for (let seed = 1; seed <= CLOUDS; seed++) {
      const {snapshot, flavors} = generate(seed)
      clouds.push({s: stateFromSnapshot(structuredClone(snapshot)), requests: flavors.map(flavorRequest)})
    }
    const planner = plannerCloud()
    clouds.push({s: plannerState(planner), requests: planner.flavors.map(flavorRequest)})
    let positive = 0
    for (const {s, requests} of clouds) {
      const rows = headroom(s, requests).domains
      for (const f of requests) {
        const want = rows
          .filter((d) => d.flavor === f.flavor)
          .map(
            (d): MixDomain => ({
              level: d.level,
              name: d.name,
              fit: d.fit,
              by_flavor: {[f.flavor]: d.fit},
            }),
          )
        expect(mixHeadroom(s, [{flavor: f, weight: 3}])).toEqual(want)
        positive += want.filter((d) => d.fit > 0).length
      }
    }
    expect(positive).toBeGreaterThan(500)
  })

  it('stops at the first turn of a flavor that fits nowhere: 0 when it is claimed first, else the claims before', () => {
    const cloud = plannerCloud()
    const s = plannerState(cloud)
    const small = flavorRequest(cloud.flavors.find((f) => f.name === 'm1.small')!)
    const nowhere = flavorRequest({name: 'huge', vcpus: 100000, ram: 1024, disk: 0, ephemeral: 0, swap: 0, properties: {}})
    const smallFit = headroom(s, [small]).domains
    // Claimed first (the largest weight, or the first of equals): nothing.
    for (const mix of [
      [
        {flavor: nowhere, weight: 60},
        {flavor: small, weight: 40},
      ],
      [
        {flavor: nowhere, weight: 1},
        {flavor: small, weight: 1},
      ],
    ])
      for (const d of mixHeadroom(s, mix)) expect(d, `${d.level} ${d.name}`).toMatchObject({fit: 0, by_flavor: {huge: 0, 'm1.small': 0}})
    // 90/10: claims 0-4 are m1.small, claim 5 the one that fits nowhere.
    const got = mixHeadroom(s, [
      {flavor: small, weight: 90},
      {flavor: nowhere, weight: 10},
    ])
    got.forEach((d, k) => {
      const fit = Math.min(5, smallFit[k].fit)
      expect(d).toEqual({level: smallFit[k].level, name: smallFit[k].name, fit, by_flavor: {'m1.small': fit, huge: 0}})
    })
    expect(got.filter((d) => d.fit === 5).length).toBeGreaterThan(40)
  })

  it('counts past 2^31 a whole period at a time (a cloud of large ratios)', () => {
    const big = (total: number): Inventory => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 16})
    const rack = nodeUuid('rack', 'r1')
    const s = stateFromSnapshot({
      classes: CLASSES,
      traits: TRAITS,
      topology: [{uuid: rack, name: 'r1', level: 'rack', parent: null}],
      providers: [1, 2].map((i) => ({
        uuid: `00000000-0000-4000-8000-00000000000${i}`,
        name: `h${i}`,
        generation: 1,
        inventories: {VCPU: big(2147483647), MEMORY_MB: big(2147483647)},
        usages: {},
        traits: [],
        aggregates: [rack],
      })),
    })
    const tiny = (name: string, vcpus: number): Flavor => ({name, vcpus, ram: 1, disk: 0, ephemeral: 0, swap: 0, properties: {}})
    // 2:1 of 1 and 2 VCPUs: 4 VCPUs a period of 3 claims; a host's VCPU (capacity 2147483647 * 16) holds `periods` of them
    // exactly, and the next claim finds none left.
    const periods = (2147483647 * 16) / 4
    const started = Date.now()
    const got = mixHeadroom(
      s,
      [
        {flavor: flavorRequest(tiny('one', 1)), weight: 2},
        {flavor: flavorRequest(tiny('two', 2)), weight: 1},
      ],
      {levels: ['host', 'rack']},
    )
    expect(Date.now() - started).toBeLessThan(1000)
    const host = {fit: 3 * periods, by_flavor: {one: 2 * periods, two: periods}}
    expect(got).toEqual([
      {level: 'host', name: 'h1', ...host},
      {level: 'host', name: 'h2', ...host},
      {level: 'rack', name: 'r1', fit: 6 * periods, by_flavor: {one: 4 * periods, two: 2 * periods}},
    ])
  })

  it('counts a 2:1 mix on a small rack by hand: a shared pool, a disabled host left out', () => {
    const inv = (total: number): Inventory => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1})
    const rack = nodeUuid('rack', 'r1')
    const provider = (name: string, n: number, inventories: Record<string, Inventory>, traits: string[] = []) => ({
      uuid: `00000000-0000-4000-8000-00000000000${n}`,
      name,
      generation: 1,
      inventories,
      usages: {},
      traits,
      aggregates: [rack],
    })
    const snapshot: Snapshot = {
      classes: CLASSES,
      traits: TRAITS,
      topology: [{uuid: rack, name: 'r1', level: 'rack', parent: null}],
      providers: [
        provider('ceph', 1, {DISK_GB: inv(100)}, ['MISC_SHARES_VIA_AGGREGATE']),
        provider('a', 2, {VCPU: inv(10), MEMORY_MB: inv(65536)}),
        provider('b', 3, {VCPU: inv(6), MEMORY_MB: inv(65536)}),
        provider('d', 4, {VCPU: inv(100), MEMORY_MB: inv(65536)}, ['COMPUTE_STATUS_DISABLED']),
      ],
    }
    const s = stateFromSnapshot(structuredClone(snapshot))
    const flavor = (name: string, vcpus: number, disk: number): Flavor => ({
      name,
      vcpus,
      ram: 1024,
      disk,
      ephemeral: 0,
      swap: 0,
      properties: {},
    })
    const mix = [
      {flavor: flavorRequest(flavor('big', 4, 40)), weight: 2},
      {flavor: flavorRequest(flavor('small', 1, 10)), weight: 1},
    ]
    // 2:1 claims big, small, big, big, small, big, ... (W = 3: deficits 2,1; 1,2; 3,0; then again).
    // a alone (the pool's 100 GB its own): big (VCPU 10 -> 6, pool 100 -> 60), small (5, 50), big (1, 10); the next big
    //   finds 1 VCPU: 3, 2 big and 1 small.
    // b alone: big (VCPU 6 -> 2, pool 60), small (1, 50); the next big finds 1 VCPU: 2, 1 big and 1 small.
    // d is disabled: 0.
    // The rack: a's three claims as alone (pool 10 left); the next big finds 1 VCPU on a and 10 GB for b's 40: it stops at 3,
    //   though a small would still fit on b. The pool shared, not summed per host (3 + 2).
    const row = (level: HeadroomLevel, name: string, big: number, small: number): MixDomain => ({
      level,
      name,
      fit: big + small,
      by_flavor: {big, small},
    })
    const want = [
      row('host', 'a', 2, 1),
      row('host', 'b', 1, 1),
      row('host', 'd', 0, 0),
      row('rack', 'r1', 2, 1),
      row('cloud', 'cloud', 2, 1),
    ]
    expect(mixHeadroom(s, mix, {levels: ['host', 'rack', 'cloud']})).toEqual(want)
    checkMix(snapshot, s, mix, 'the hand-built rack', ['host', 'rack', 'cloud'])
    // Only rooms asked: none here.
    expect(mixHeadroom(s, mix, {levels: ['room']})).toEqual([])
  })
})
