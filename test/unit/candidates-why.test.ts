/**
 * Why a request has no candidates (core/candidates/why.ts), on small States: the part that
 * empties them and the hosts it leaves out — a class no host has enough of, a trait, a
 * member_of, disabled hosts, a placement group's rule — and null when there are candidates.
 */
import {describe, expect, it} from 'vitest'
import {createGroup} from '../../src/core/group-writes.js'
import {parseCandidateRequest} from '../../src/core/candidates/request.js'
import {whyNoCandidates} from '../../src/core/candidates/why.js'
import type {State} from '../../src/core/state/state.js'
import {Changes} from '../../src/core/state/changes.js'
import {nodeUuid} from '../../src/core/topology.js'
import {U, cloud} from './fixtures.js'

const C = (i: number) => `cccccccc-0000-4000-8000-${String(i).padStart(12, '0')}`

/** cn-1 .. cn-4 (48 VCPU each, cn-2 with AVX2), cn-1 and cn-2 in rack r1, cn-3 in rack r2, cn-4 in no rack; `disabled` hosts by number. */
function fourHosts(opts: {disabled?: number[]; used?: Record<number, number>; placed?: Record<number, number>} = {}): State {
  const racks = {1: 'r1', 2: 'r1', 3: 'r2'} as Record<number, string>
  const topology = [
    {uuid: nodeUuid('rack', 'r1'), name: 'r1', level: 'rack' as const, parent: null},
    {uuid: nodeUuid('rack', 'r2'), name: 'r2', level: 'rack' as const, parent: null},
  ]
  const s = cloud(
    [1, 2, 3, 4].map((i) => ({
      name: `cn-${i}`,
      inventories: {VCPU: 48, MEMORY_MB: 4096},
      traits: [...(i === 2 ? ['HW_CPU_X86_AVX2'] : []), ...((opts.disabled ?? []).includes(i) ? ['COMPUTE_STATUS_DISABLED'] : [])],
      aggregates: racks[i] ? [nodeUuid('rack', racks[i])] : [],
    })),
    {
      traits: ['HW_CPU_X86_AVX2', 'HW_CPU_X86_AVX512F', 'COMPUTE_STATUS_DISABLED', 'MISC_SHARES_VIA_AGGREGATE'],
      topology,
      consumers: Object.entries(opts.placed ?? {}).map(([c, host]) => ({
        uuid: C(Number(c)),
        project_id: 'p',
        user_id: 'u',
        allocations: {[U(host)]: {resources: {VCPU: opts.used?.[host] ?? 1}}},
      })),
    },
  )
  s.changes = new Changes()
  return s
}

const request = (query: Record<string, string>) => parseCandidateRequest(new Map(Object.entries(query).map(([k, v]) => [k, [v]])), [1, 39])
const why = (s: State, query: Record<string, string>, fit = {}) => whyNoCandidates(s, request(query), fit)?.why ?? null

describe('why a request has no candidates', () => {
  it('is null when there are candidates', () => {
    expect(why(fourHosts(), {resources: 'VCPU:4'})).toBeNull()
  })

  it('names a class no host has enough of, and the most free', () => {
    const s = fourHosts({placed: {1: 2}, used: {2: 8}})
    expect(why(s, {resources: 'VCPU:64'})).toBe('no provider has 64 VCPU free (the most free: cn-1 with 48)')
    expect(why(s, {resources: 'VCPU:4,DISK_GB:10'})).toBe('no provider has any DISK_GB')
    // Each alone fits somewhere, never both on one host.
    const t = cloud([
      {name: 'a', inventories: {VCPU: 8}},
      {name: 'b', inventories: {MEMORY_MB: 4096}},
    ])
    expect(why(t, {resources: 'VCPU:4,MEMORY_MB:1024'})).toBe(
      'no host has 4 VCPU and 1024 MEMORY_MB free together (4 VCPU: 1 host, 1024 MEMORY_MB: 1 host)',
    )
  })

  it('says when a host has the amount only across its children, and the granular groups that would take it', () => {
    // cn-1's VCPU sits on two NUMA children, 16 free on each (4 used on numa1 of 20); the storage shares DISK_GB.
    const s = cloud(
      [
        {name: 'cn-1', aggregates: [U(900)]},
        {name: 'cn-1_numa0', parent: 'cn-1', inventories: {VCPU: 16}},
        {name: 'cn-1_numa1', parent: 'cn-1', inventories: {VCPU: 20}, usages: {VCPU: 4}},
        {name: 'ceph-1', inventories: {DISK_GB: 1000}, traits: ['MISC_SHARES_VIA_AGGREGATE'], aggregates: [U(900)]},
      ],
      {consumers: [{uuid: C(1), project_id: 'p', user_id: 'u', allocations: {[U(3)]: {resources: {VCPU: 4}}}}]},
    )
    expect(why(s, {resources: 'VCPU:20,DISK_GB:40'})).toBe(
      'no provider has 20 VCPU free (the most free: cn-1_numa0 with 16); cn-1 has 32 free across its providers (cn-1_numa0 16, cn-1_numa1 16),' +
        ' but one request group takes each class from one provider: ask in granular groups, one provider each (resources1=VCPU:16&resources2=VCPU:4&group_policy=none)',
    )
    // More than the whole tree has: no such hint.
    expect(why(s, {resources: 'VCPU:40'})).toBe('no provider has 40 VCPU free (the most free: cn-1_numa0 with 16)')
  })

  it('names the trait that empties them, with the hosts that had the resources', () => {
    const s = fourHosts()
    expect(why(s, {resources: 'VCPU:4', required: 'HW_CPU_X86_AVX512F'})).toBe('4 hosts have the resources; none has HW_CPU_X86_AVX512F')
    const r = whyNoCandidates(s, request({resources: 'VCPU:4', required: 'HW_CPU_X86_AVX2,HW_CPU_X86_AVX512F'}))!
    expect(r.why).toBe('1 host fits; it has no HW_CPU_X86_AVX512F')
    expect(r.steps).toEqual([
      {part: 'resources VCPU:4', hosts: 4},
      {part: 'required HW_CPU_X86_AVX2', hosts: 1},
      {part: 'required HW_CPU_X86_AVX512F', hosts: 0},
    ])
    expect(why(s, {resources: 'VCPU:4', required: '!HW_CPU_X86_AVX2', in_tree: U(2)})).toBe(
      '1 host fits; it has HW_CPU_X86_AVX2, which the request forbids',
    )
  })

  it('names the racks a member_of asks for or excludes by name', () => {
    const s = fourHosts()
    expect(why(s, {resources: 'VCPU:4', required: 'HW_CPU_X86_AVX2', member_of: nodeUuid('rack', 'r2')})).toBe(
      '1 host fits; it is not in rack r2',
    )
    expect(why(s, {resources: 'VCPU:4', required: 'HW_CPU_X86_AVX2', member_of: `!in:${nodeUuid('rack', 'r1')}`})).toBe(
      '1 host fits; it is in rack r1, which the request excludes',
    )
  })

  it('never names a disabled host as the most free when the request leaves disabled hosts out', () => {
    // cn-1 drained and disabled (48 free), the others with 8 in use (40 free).
    const s = fourHosts({disabled: [1], placed: {2: 2, 3: 3, 4: 4}, used: {2: 8, 3: 8, 4: 8}})
    const enabledOnly = {resources: 'VCPU:64', root_required: '!COMPUTE_STATUS_DISABLED'}
    expect(why(s, enabledOnly)).toBe('no provider has 64 VCPU free (the most free: cn-2 with 40)')
    // Asked with the disabled hosts (--include-disabled), cn-1 is where the most is free.
    expect(why(s, {resources: 'VCPU:64'})).toBe('no provider has 64 VCPU free (the most free: cn-1 with 48)')
    // Every host disabled: the most free is named, and said to be disabled.
    expect(why(fourHosts({disabled: [1, 2, 3, 4]}), enabledOnly)).toBe(
      'no provider has 64 VCPU free (the most free: cn-1 with 48, a disabled host)',
    )
  })

  it('says when every host that fits is disabled, and names a second part that would empty them too', () => {
    const s = fourHosts({disabled: [1, 2, 3]})
    expect(why(s, {resources: 'VCPU:4', member_of: nodeUuid('rack', 'r1') + '', root_required: '!COMPUTE_STATUS_DISABLED'})).toBe(
      '2 hosts fit; all are disabled (--include-disabled to use them)',
    )
    expect(
      why(s, {
        resources: 'VCPU:4',
        required: 'HW_CPU_X86_AVX512F',
        root_required: '!COMPUTE_STATUS_DISABLED',
        member_of: nodeUuid('rack', 'r1'),
      }),
    ).toBe(
      '4 hosts have the resources; none has HW_CPU_X86_AVX512F. Without that: 2 hosts fit; all are disabled (--include-disabled to use them)',
    )
  })

  it("names a placement group's rule that excludes every host that fits, and hosts outside the topology", () => {
    // C1 on cn-1 (r1), C2 on cn-3 (r2): an anti-affinity by rack group is full but for cn-4, outside.
    const s = fourHosts({placed: {1: 1, 2: 3}})
    createGroup(s, 0, {name: 'web', policy: 'anti-affinity', level: 'rack', members: [C(1), C(2)]})
    expect(why(s, {resources: 'VCPU:4'}, {group: 'web'})).toBe(
      '4 hosts fit; the anti-affinity rule of group web (by rack) excludes them (1 of them outside the topology, in no rack)',
    )
    expect(why(s, {resources: 'VCPU:4', member_of: `!in:${nodeUuid('rack', 'r1')},${nodeUuid('rack', 'r2')}`}, {group: 'web'})).toBe(
      '1 host fits; the anti-affinity rule of group web (by rack) excludes it: it is outside the topology (in no rack)',
    )
    // A member being placed again: its own groups, itself where the candidate is (C2 may stay in r2).
    expect(why(s, {resources: 'VCPU:4', member_of: nodeUuid('rack', 'r1')}, {consumer: C(2)})).toBe(
      '2 hosts fit; the anti-affinity rule of group web (by rack) excludes them',
    )
    expect(why(s, {resources: 'VCPU:4'}, {consumer: C(2)})).toBeNull()
    // A consumer in no group, and a soft group, exclude nothing.
    expect(why(s, {resources: 'VCPU:4', member_of: nodeUuid('rack', 'r1')}, {consumer: C(9)})).toBeNull()
    createGroup(s, 0, {name: 'soft', policy: 'anti-affinity', level: 'rack', soft: true, members: [C(1), C(2)]})
    expect(why(s, {resources: 'VCPU:4'}, {group: 'soft'})).toBeNull()
  })
})
