/** What a lost rack costs: its consumers placed again as a claim would, never on a disabled host. */
import {describe, expect, it} from 'vitest'
import {stateFromSnapshot} from '../../src/core/snapshot.js'
import {nodeUuid} from '../../src/core/topology.js'
import {whatIf} from '../../src/core/headroom/what-if.js'
import {inv} from '../helpers/records.js'

const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

function cloud(hosts: Array<{name: string; rack: string; vcpus: number; disabled?: boolean}>) {
  return stateFromSnapshot({
    classes: ['VCPU'],
    traits: ['COMPUTE_STATUS_DISABLED'],
    topology: [...new Set(hosts.map((h) => h.rack))].map((r) => ({
      uuid: nodeUuid('rack', r),
      name: r,
      level: 'rack' as const,
      parent: null,
    })),
    providers: hosts.map((h, i) => ({
      uuid: U(i + 1),
      name: h.name,
      generation: 1,
      inventories: {VCPU: inv(h.vcpus)},
      traits: h.disabled ? ['COMPUTE_STATUS_DISABLED'] : [],
      aggregates: [nodeUuid('rack', h.rack)],
    })),
    consumers: [{uuid: U(100), project_id: 'p', user_id: 'u', allocations: {[U(1)]: {resources: {VCPU: 4}}}}],
  })
}

describe('what if a rack were lost', () => {
  it('places its consumers again on an enabled host, never a disabled one', () => {
    const s = cloud([
      {name: 'a', rack: 'r1', vcpus: 8},
      {name: 'b-off', rack: 'r2', vcpus: 8, disabled: true},
      {name: 'c', rack: 'r2', vcpus: 8},
    ])
    const w = whatIf(s, {without: [{level: 'rack', name: 'r1'}]})
    expect(w.displaced).toEqual([{consumer: U(100), from: ['a'], to: ['c']}])
    expect(w.survives).toBe(true)
    // The cloud itself is as it was.
    expect(s.consumers.get(U(100))!.allocations.has(U(1))).toBe(true)
  })

  it('says so when only a disabled host has room', () => {
    const w = whatIf(
      cloud([
        {name: 'a', rack: 'r1', vcpus: 8},
        {name: 'b-off', rack: 'r2', vcpus: 8, disabled: true},
      ]),
      {without: [{level: 'rack', name: 'r1'}]},
    )
    expect(w.displaced).toEqual([{consumer: U(100), from: ['a'], to: null, why: 'no enabled host has room for VCPU:4'}])
    expect(w.survives).toBe(false)
  })

  it("names the shared pool a displaced consumer's disk stays on", () => {
    const rack = (r: string) => nodeUuid('rack', r)
    const s = stateFromSnapshot({
      classes: ['VCPU', 'DISK_GB'],
      traits: ['MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_STATUS_DISABLED'],
      topology: ['r1', 'r2'].map((r) => ({uuid: rack(r), name: r, level: 'rack' as const, parent: null})),
      providers: [
        {uuid: U(1), name: 'a', generation: 1, inventories: {VCPU: inv(8)}, aggregates: [rack('r1'), U(50)]},
        {uuid: U(2), name: 'b', generation: 1, inventories: {VCPU: inv(8)}, aggregates: [rack('r2'), U(50)]},
        {
          uuid: U(3),
          name: 'ceph',
          generation: 1,
          inventories: {DISK_GB: inv(1000)},
          traits: ['MISC_SHARES_VIA_AGGREGATE'],
          aggregates: [U(50)],
        },
      ],
      consumers: [
        {uuid: U(100), project_id: 'p', user_id: 'u', allocations: {[U(1)]: {resources: {VCPU: 4}}, [U(3)]: {resources: {DISK_GB: 80}}}},
      ],
    })
    const w = whatIf(s, {without: [{level: 'rack', name: 'r1'}]})
    expect(w.displaced).toEqual([{consumer: U(100), from: ['a'], to: ['b', 'ceph']}])
  })
})
