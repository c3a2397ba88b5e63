/**
 * What the map page is answered (core/map/): on the planner's cloud (test/helpers/planner-cloud.ts:
 * 2 rooms, 4 rows, 12 racks, 48 hosts, 3 disabled, a pool per room, consumers and an anti-affinity
 * group by rack), the layout holds every host once, in the rack capacity counts it in; a view's
 * values are capacity's numbers (headroom.ts) and the class's use as a host's record sums it; a
 * what-if's are the what-if's (what-if-headroom.ts); a domain's details sum its hosts' records and
 * name the groups with a member on them.
 */
import {describe, expect, it} from 'vitest'
import {flavorRequest} from '../../src/core/headroom/flavors.js'
import {HEADROOM_LEVELS, headroom} from '../../src/core/headroom/headroom.js'
import {whatIfHeadroom} from '../../src/core/headroom/what-if-headroom.js'
import {everyHost, isDisabled} from '../../src/core/host.js'
import {hostRecord} from '../../src/core/host-status.js'
import {mapDomain} from '../../src/core/map/map-domain.js'
import {hostsUnder, mapLayout} from '../../src/core/map/map-layout.js'
import {mapValues} from '../../src/core/map/map-values.js'
import {hostDomains} from '../../src/core/topology.js'
import {plannerCloud, plannerState} from '../helpers/planner-cloud.js'

const cloud = plannerCloud()
const flavors = cloud.flavors.map(flavorRequest)

const byKey = <T extends {level: string; name: string}>(rows: T[]) => new Map(rows.map((r) => [`${r.level} ${r.name}`, r]))

describe('the map of a cloud', () => {
  it('lays out every host once, in the rack capacity counts it in, the disabled ones marked, the pools with whom they serve', () => {
    const s = plannerState(cloud)
    const layout = mapLayout(s)
    const hosts = everyHost(s)
    expect(layout.hosts).toEqual(hosts.map((h) => h.name).sort())
    const seen: number[] = []
    const walk = (nodes: typeof layout.tree, path: string[]) => {
      for (const n of nodes) {
        if (n.hosts)
          for (const i of n.hosts) {
            seen.push(i)
            const at = hostDomains(s, s.providerByName.get(layout.hosts[i])!)
            expect([at.room, at.row, at.rack].filter(Boolean)).toEqual([...path, n.name])
          }
        walk(n.children ?? [], [...path, n.name])
      }
    }
    walk(layout.tree, [])
    expect([...seen, ...layout.unracked].sort((a, b) => a - b)).toEqual(layout.hosts.map((_, i) => i))
    expect(layout.disabled.map((i) => layout.hosts[i]).sort()).toEqual([...cloud.disabled].sort())
    expect(layout.tree.map((n) => [n.level, n.name])).toEqual([
      ['room', 'room1'],
      ['room', 'room2'],
    ])
    // Each room's pool reaches the room's hosts, and serves the room whole.
    expect(layout.pools.length).toBe(2)
    for (const pool of layout.pools) {
      expect(pool.serves.length).toBe(1)
      expect(pool.serves[0].level).toBe('room')
      const room = layout.tree.find((n) => n.name === pool.serves[0].name)!
      expect(pool.hosts).toEqual(hostsUnder(room))
      expect(pool.capacity.DISK_GB).toBeGreaterThan(0)
    }
    // What is used of them is a value: it changes with every claim.
    const used = mapValues(s, flavors, {flavor: null, class: null}).now.pools
    expect(Object.keys(used).sort()).toEqual(layout.pools.map((p) => p.name).sort())
    for (const pool of layout.pools) expect(used[pool.name].DISK_GB ?? 0).toBe(s.providerByName.get(pool.name)!.usages.get('DISK_GB') ?? 0)
    expect(layout.classes).toEqual(['DISK_GB', 'MEMORY_MB', 'PCPU', 'VCPU', 'VGPU'])
  })

  it("answers a flavor's numbers as capacity counts them, and a class's use as the hosts' records sum it", () => {
    const s = plannerState(cloud)
    const want = headroom(s, flavors)
    for (const flavor of ['m1.large', 'c1.dedicated', 'g1.vgpu']) {
      const v = mapValues(s, flavors, {flavor, class: 'VCPU'})
      const rows = byKey(want.domains.filter((d) => d.flavor === flavor))
      let compared = 0
      for (const level of HEADROOM_LEVELS) {
        const l = v.now.levels[level]
        expect(l.names.length, level).toBe([...rows.values()].filter((r) => r.level === level).length)
        l.names.forEach((name, i) => {
          const r = rows.get(`${level} ${name}`)!
          const binding = l.binding![i] < 0 ? null : v.now.bindings[l.binding![i]]
          expect([l.fit![i], l.pooled![i], l.fragmentation_loss![i], l.disabled_fit![i], binding], `${flavor} ${level} ${name}`).toEqual([
            r.fit,
            r.pooled,
            r.fragmentation_loss,
            r.disabled_fit,
            r.binding,
          ])
          compared++
        })
      }
      expect(compared).toBe(rows.size)
      expect(v.now.stranded).toEqual(want.stranded)
      expect(v.lint).toEqual(want.lint)
    }
    const v = mapValues(s, flavors, {flavor: null, class: 'VCPU'})
    expect(v.now.levels.host.fit).toBeUndefined()
    const records = everyHost(s).map((h) => hostRecord(s, h.uuid))
    const host = v.now.levels.host
    host.names.forEach((name, i) => {
      const r = records.find((x) => x.name === name)!
      expect([host.capacity![i], host.used![i]]).toEqual([r.capacity.VCPU ?? 0, r.used.VCPU ?? 0])
    })
    const rack = v.now.levels.rack
    rack.names.forEach((name, i) => {
      const inRack = records.filter((r) => r.rack === name)
      expect(rack.capacity![i]).toBe(inRack.reduce((a, r) => a + (r.capacity.VCPU ?? 0), 0))
      expect(rack.used![i]).toBe(inRack.reduce((a, r) => a + (r.used.VCPU ?? 0), 0))
    })
    expect(v.now.levels.cloud.used).toEqual([records.reduce((a, r) => a + (r.used.VCPU ?? 0), 0)])
  })

  it("answers a what-if's numbers after it beside those before, as capacity's what-if does", () => {
    const s = plannerState(cloud)
    const rack = mapLayout(s).tree[0].children![0].children![0].name
    const without = [{level: 'rack' as const, name: rack}]
    const ratios = new Map([['VCPU', 2]])
    const v = mapValues(s, flavors, {flavor: 'm1.large', class: null, without, ratios})
    const want = whatIfHeadroom(plannerState(cloud), flavors, {without, ratios})
    expect(v.what_if).toEqual({without, ratios: {VCPU: 2}, survives: want.what_if.survives, displaced: want.what_if.displaced})
    expect(v.what_if!.displaced.length).toBeGreaterThan(0)
    const after = byKey(want.domains.filter((d) => d.flavor === 'm1.large'))
    for (const level of HEADROOM_LEVELS) {
      const l = v.after!.levels[level]
      l.names.forEach((name, i) => expect(l.fit![i], `${level} ${name}`).toBe(after.get(`${level} ${name}`)!.fit))
    }
    // The lost rack is in the numbers before, not after.
    expect(v.now.levels.rack.names).toContain(rack)
    expect(v.after!.levels.rack.names).not.toContain(rack)
    // Made on a copy: the cloud is as it was.
    expect(mapValues(s, flavors, {flavor: 'm1.large', class: null}).now).toEqual(v.now)
  })

  it("details a domain: its hosts' use per class, consumers, pools and the groups with a member on it", () => {
    const s = plannerState(cloud)
    const member = [...cloud.group.members][0]
    const memberHost = everyHost(s).find((h) => s.subtree(h.uuid).some((p) => p.allocations.has(member)))!
    const rack = hostDomains(s, memberHost).rack!
    const d = mapDomain(s, {level: 'rack', name: rack})
    const hosts = everyHost(s).filter((h) => hostDomains(s, h).rack === rack)
    expect(d.hosts).toEqual(hosts.map((h) => h.name).sort())
    expect(d.disabled).toEqual(hosts.filter(isDisabled).map((h) => h.name))
    const records = hosts.map((h) => hostRecord(s, h.uuid))
    for (const [rc, u] of Object.entries(d.usage)) {
      expect(u.capacity, rc).toBe(records.reduce((a, r) => a + (r.capacity[rc] ?? 0), 0))
      expect(u.used, rc).toBe(records.reduce((a, r) => a + (r.used[rc] ?? 0), 0))
    }
    expect(d.consumer_count).toBe(new Set(records.flatMap((r) => r.consumers)).size)
    expect(d.pools).toEqual([expect.stringContaining('ceph')])
    expect(d.groups.map((g) => g.name)).toEqual([cloud.group.name])
    expect(d.groups[0].members.find((m) => m.consumer === member)).toMatchObject({here: true, hosts: [memberHost.name]})
    expect(d.groups[0].member_count).toBe(cloud.group.members.size)
    // The cloud holds every host; an unknown domain is a 404.
    expect(mapDomain(s, {level: 'cloud', name: 'cloud'}).host_count).toBe(48)
    expect(() => mapDomain(s, {level: 'rack', name: 'no-such-rack'})).toThrow(/No rack named no-such-rack/)
    expect(() => mapDomain(s, {level: 'host', name: 'nobody'})).toThrow(/No host named nobody/)
  })
})
