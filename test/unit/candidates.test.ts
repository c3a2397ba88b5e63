import {describe, expect, it} from 'vitest'
import {findCandidates, filterProviders, type CandidateOptions} from '../../src/core/candidates/engine.js'
import {parseCandidateRequest, parseProviderFilters, type Microversion} from '../../src/core/candidates/request.js'
import {renderCandidates} from '../../src/core/candidates/render.js'
import {PlacementError} from '../../src/core/errors.js'
import {STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS} from '../../src/core/standard.js'
import {State, newProvider, type Provider} from '../../src/core/state/state.js'
import {Changes} from '../../src/core/state/changes.js'

// ---- a small world builder ------------------------------------------------------------------

let uuidSeq = 0
const uuid = () => {
  const h = (++uuidSeq).toString(16).padStart(12, '0')
  return `00000000-0000-4000-8000-${h}`
}

class World {
  state = new State()
  constructor() {
    this.state.changes = new Changes()
    STANDARD_RESOURCE_CLASSES.forEach((rc, id) => this.state.addClass(rc, 0, id))
    for (const t of STANDARD_TRAITS) this.state.addTrait(t, 0)
  }
  rp(name: string, opts: {parent?: Provider; aggs?: string[]} = {}): Provider {
    const p = newProvider(uuid(), name, opts.parent ?? null, 0)
    this.state.addProvider(p)
    if (opts.aggs) this.state.setAggregates(p, opts.aggs)
    return p
  }
  inv(
    p: Provider,
    rc: string,
    total: number,
    o: {reserved?: number; min_unit?: number; max_unit?: number; step_size?: number; allocation_ratio?: number} = {},
  ) {
    if (!this.state.classes.has(rc)) this.state.addClass(rc, 0)
    this.state.setInventory(p, rc, {
      total,
      reserved: o.reserved ?? 0,
      min_unit: o.min_unit ?? 1,
      max_unit: o.max_unit ?? total,
      step_size: o.step_size ?? 1,
      allocation_ratio: o.allocation_ratio ?? 1.0,
    })
    this.state.bumpProvider(p, 0) // as every inventory write does
  }
  traits(p: Provider, ...names: string[]) {
    for (const t of names) if (!this.state.traits.has(t)) this.state.addTrait(t, 0)
    this.state.setTraits(p, names)
  }
  alloc(p: Provider, amounts: Record<string, number>) {
    const c = {uuid: uuid(), project: 'p', user: 'u', type: null, generation: 0, createdAt: 0, updatedAt: 0, allocations: new Map()}
    this.state.addConsumer(c)
    this.state.setAllocations(c, new Map([[p.uuid, new Map(Object.entries(amounts))]]))
  }
  /** Runs a GET /allocation_candidates query; returns the rendered body. */
  ac(query: string, mv: Microversion = [1, 39], opts: CandidateOptions = {}) {
    this.state.version++
    const req = parseCandidateRequest(params(query), mv)
    return renderCandidates(findCandidates(this.state, req, opts), mv) as {
      allocation_requests: {allocations: Record<string, {resources: Record<string, number>}>; mappings: Record<string, string[]>}[]
      provider_summaries: Record<
        string,
        {
          resources: Record<string, {capacity: number; used: number}>
          traits: string[]
          parent_provider_uuid: string | null
          root_provider_uuid: string
        }
      >
    }
  }
}

function params(q: string): Map<string, string[]> {
  const m = new Map<string, string[]>()
  for (const [k, v] of new URLSearchParams(q)) {
    const l = m.get(k)
    if (l) l.push(v)
    else m.set(k, [v])
  }
  return m
}

function err(fn: () => unknown): PlacementError {
  try {
    fn()
  } catch (e) {
    if (e instanceof PlacementError) return e
    throw e
  }
  throw new Error('expected a PlacementError')
}

/** amounts of `rc` on provider `u` over all allocation requests (like gabbi's `..` jsonpath) */
const amounts = (body: ReturnType<World['ac']>, u: string, rc: string) =>
  body.allocation_requests.map((ar) => ar.allocations[u]?.resources[rc]).filter((x) => x !== undefined)

// ---- fixtures (as in Placement's gabbits fixtures) ------------------------------------------

function sharedStorage() {
  const w = new World()
  const agg = uuid()
  const cn1 = w.rp('cn1', {aggs: [agg]})
  const cn2 = w.rp('cn2', {aggs: [agg]})
  const ss = w.rp('ss', {aggs: [agg]})
  const ss2 = w.rp('ss2', {aggs: [agg]})
  const numa1_1 = w.rp('numa1_1', {parent: cn1})
  const numa1_2 = w.rp('numa1_2', {parent: cn1})
  const numa2_1 = w.rp('numa2_1', {parent: cn2})
  const numa2_2 = w.rp('numa2_2', {parent: cn2})
  const pf1_1 = w.rp('pf1_1', {parent: numa1_1})
  const pf1_2 = w.rp('pf1_2', {parent: numa1_2})
  const pf2_1 = w.rp('pf2_1', {parent: numa2_1})
  const pf2_2 = w.rp('pf2_2', {parent: numa2_2})
  for (const cn of [cn1, cn2]) {
    w.inv(cn, 'VCPU', 24, {allocation_ratio: 16})
    w.inv(cn, 'MEMORY_MB', 128 * 1024, {allocation_ratio: 1.5})
  }
  w.traits(cn1, 'HW_CPU_X86_SSE', 'HW_CPU_X86_SSE2')
  w.inv(cn2, 'DISK_GB', 2000, {reserved: 100})
  for (const s of [ss, ss2]) {
    w.inv(s, 'DISK_GB', 2000, {reserved: 100})
    w.traits(s, 'MISC_SHARES_VIA_AGGREGATE')
  }
  for (const pf of [pf1_1, pf1_2, pf2_1, pf2_2]) w.inv(pf, 'SRIOV_NET_VF', 8)
  return {w, agg, cn1, cn2, ss, ss2, numa1_1, numa1_2, numa2_1, numa2_2, pf1_1, pf1_2, pf2_1, pf2_2}
}

function granular() {
  const w = new World()
  w.state.addClass('CUSTOM_NET_MBPS', 0)
  const [aggA, aggB, aggC] = [uuid(), uuid(), uuid()]
  const left = w.rp('cn_left', {aggs: [aggA]})
  for (const [rc, t] of [
    ['VCPU', 8],
    ['MEMORY_MB', 4096],
    ['DISK_GB', 500],
    ['VGPU', 8],
    ['SRIOV_NET_VF', 8],
    ['CUSTOM_NET_MBPS', 4000],
  ] as const)
    w.inv(left, rc, t)
  w.traits(left, 'HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2', 'HW_GPU_API_DXVA', 'HW_NIC_DCB_PFC', 'CUSTOM_FOO')
  const middle = w.rp('cn_middle', {aggs: [aggA, aggB]})
  for (const [rc, t] of [
    ['VCPU', 8],
    ['MEMORY_MB', 4096],
    ['SRIOV_NET_VF', 8],
    ['CUSTOM_NET_MBPS', 4000],
  ] as const)
    w.inv(middle, rc, t)
  w.traits(middle, 'HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE', 'HW_NIC_ACCEL_TLS')
  const right = w.rp('cn_right', {aggs: [aggB, aggC]})
  w.inv(right, 'VCPU', 8)
  w.inv(right, 'MEMORY_MB', 4096)
  w.inv(right, 'DISK_GB', 500)
  w.inv(right, 'VGPU', 8, {max_unit: 2})
  w.traits(right, 'HW_CPU_X86_MMX', 'HW_GPU_API_DXVA', 'CUSTOM_DISK_SSD')
  const disk1 = w.rp('shr_disk_1', {aggs: [aggA]})
  w.inv(disk1, 'DISK_GB', 1000)
  w.traits(disk1, 'MISC_SHARES_VIA_AGGREGATE', 'CUSTOM_DISK_SSD')
  const disk2 = w.rp('shr_disk_2', {aggs: [aggA, aggB]})
  w.inv(disk2, 'DISK_GB', 1000)
  w.traits(disk2, 'MISC_SHARES_VIA_AGGREGATE')
  const net = w.rp('shr_net', {aggs: [aggC]})
  w.inv(net, 'SRIOV_NET_VF', 16)
  w.inv(net, 'CUSTOM_NET_MBPS', 40000)
  w.traits(net, 'MISC_SHARES_VIA_AGGREGATE')
  return {w, aggA, aggB, aggC, left, middle, right, disk1, disk2, net}
}

function numaNetwork() {
  const w = new World()
  const aggA = uuid()
  const ss1 = w.rp('ss1', {aggs: [aggA]})
  w.traits(ss1, 'MISC_SHARES_VIA_AGGREGATE')
  w.inv(ss1, 'DISK_GB', 2000)
  const cn1 = w.rp('cn1', {aggs: [aggA]})
  w.traits(cn1, 'COMPUTE_VOLUME_MULTI_ATTACH')
  const numa0 = w.rp('numa0', {parent: cn1})
  w.traits(numa0, 'HW_NUMA_ROOT')
  w.inv(numa0, 'VCPU', 4)
  const numa1 = w.rp('numa1', {parent: cn1})
  w.traits(numa1, 'HW_NUMA_ROOT', 'CUSTOM_FOO')
  w.inv(numa1, 'VCPU', 4)
  w.inv(numa0, 'MEMORY_MB', 2048, {min_unit: 512, step_size: 256})
  w.inv(numa1, 'MEMORY_MB', 2048, {min_unit: 256, max_unit: 1024})
  w.alloc(numa0, {VCPU: 2})
  const fpga0 = w.rp('fpga0', {parent: numa0})
  w.inv(fpga0, 'CUSTOM_FPGA', 1)
  const pgpu0 = w.rp('pgpu0', {parent: numa0})
  w.inv(pgpu0, 'VGPU', 8)
  const fpga1_0 = w.rp('fpga1_0', {parent: numa1})
  w.inv(fpga1_0, 'CUSTOM_FPGA', 1)
  const fpga1_1 = w.rp('fpga1_1', {parent: numa1})
  w.inv(fpga1_1, 'CUSTOM_FPGA', 1)
  const sriov = w.rp('sriov_agent', {parent: cn1})
  w.traits(sriov, 'CUSTOM_VNIC_TYPE_DIRECT')
  const esn1 = w.rp('esn1', {parent: sriov})
  w.traits(esn1, 'CUSTOM_PHYSNET1')
  w.inv(esn1, 'NET_BW_EGR_KILOBIT_PER_SEC', 10000)
  const esn2 = w.rp('esn2', {parent: sriov})
  w.traits(esn2, 'CUSTOM_PHYSNET2')
  w.inv(esn2, 'NET_BW_EGR_KILOBIT_PER_SEC', 20000)
  const ovs = w.rp('ovs_agent', {parent: cn1})
  w.traits(ovs, 'CUSTOM_VNIC_TYPE_NORMAL')
  const brInt = w.rp('br_int', {parent: ovs})
  w.traits(brInt, 'CUSTOM_PHYSNET0')
  w.inv(brInt, 'NET_BW_EGR_KILOBIT_PER_SEC', 1000)
  const cn2 = w.rp('cn2', {aggs: [aggA]})
  w.inv(cn2, 'VCPU', 8)
  w.alloc(cn2, {VCPU: 3})
  w.inv(cn2, 'MEMORY_MB', 2048, {min_unit: 1024, step_size: 128})
  w.inv(cn2, 'DISK_GB', 1000)
  w.traits(cn2, 'CUSTOM_FOO')
  const nics = [1, 2, 3].map((i) => {
    const nic = w.rp(`nic${i}`, {parent: cn2})
    w.traits(nic, 'CUSTOM_HW_NIC_ROOT')
    return nic
  })
  const pf = (name: string, nic: Provider, physnet: number, vfs: number) => {
    const p = w.rp(name, {parent: nic})
    w.traits(p, `CUSTOM_PHYSNET${physnet}`)
    w.inv(p, 'CUSTOM_VF', vfs)
    return p
  }
  const pf1_1 = pf('pf1_1', nics[0], 1, 4)
  const pf1_2 = pf('pf1_2', nics[0], 2, 4)
  const pf2 = [0, 1, 2, 3].map((i) => pf(`pf2_${i + 1}`, nics[1], (i % 2) + 1, 2))
  const pf3_1 = pf('pf3_1', nics[2], 1, 8)
  return {
    w,
    aggA,
    ss1,
    cn1,
    numa0,
    numa1,
    fpga0,
    pgpu0,
    fpga1_0,
    fpga1_1,
    sriov,
    esn1,
    esn2,
    ovs,
    brInt,
    cn2,
    nics,
    pf1_1,
    pf1_2,
    pf2,
    pf3_1,
  }
}

function nonShared() {
  const w = new World()
  const cns = [1, 2, 3].map((i) => {
    const cn = w.rp(`cn${i}`)
    w.inv(cn, 'VCPU', 24)
    w.inv(cn, 'MEMORY_MB', 128 * 1024)
    w.inv(cn, 'DISK_GB', 2000)
    return cn
  })
  return {w, cns, aggA: uuid(), aggB: uuid(), aggC: uuid()}
}

// ---- request parsing ------------------------------------------------------------------------

describe('parseCandidateRequest', () => {
  const parse = (q: string, mv: Microversion = [1, 39]) => parseCandidateRequest(params(q), mv)
  const detail = (q: string, mv: Microversion = [1, 39]) => err(() => parse(q, mv)).detail

  it('parses groups, suffixes and request-wide parameters', () => {
    const r = parse(
      'resources1=VCPU:1&resources=MEMORY_MB:512,VCPU:2&required=in:A,B&required=C,!D&member_of=in:' +
        '11111111-1111-1111-1111-111111111111,22222222-2222-2222-2222-222222222222&member_of=!33333333-3333-3333-3333-333333333333' +
        '&group_policy=isolate&limit=5&limit=7&root_required=X,!Y',
    )
    expect(r.groups.map((g) => g.suffix)).toEqual(['1', ''])
    const g = r.groups[1]
    expect([...g.resources]).toEqual([
      ['MEMORY_MB', 512],
      ['VCPU', 2],
    ])
    expect(g.requiredTraits).toEqual([['A', 'B'], ['C']])
    expect([...g.forbiddenTraits]).toEqual(['D'])
    expect(g.memberOf).toEqual([['11111111-1111-1111-1111-111111111111', '22222222-2222-2222-2222-222222222222']])
    expect([...g.forbiddenAggs]).toEqual(['33333333-3333-3333-3333-333333333333'])
    expect(r.groupPolicy).toBe('isolate')
    expect(r.limit).toBe(5)
    expect(r.rootRequired).toEqual([['X']])
    expect([...r.rootForbidden]).toEqual(['Y'])
  })

  it('gives Placement error details', () => {
    expect(detail('resources=', [1, 10])).toBe(
      'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.',
    )
    expect(detail('resources=VCPU', [1, 10])).toMatch(/Got: VCPU\.$/)
    expect(detail('resources=VCPU:1,', [1, 10])).toMatch(/Got: \.$/)
    expect(detail('resources=VCPU:fred')).toBe('Requested resource VCPU expected positive integer amount. Got: fred.')
    expect(detail('resources=VCPU:-2')).toBe('Requested resource VCPU requires amount >= 1. Got: -2.')
    expect(detail('resources=VCPU:1&required=', [1, 17])).toMatch(/of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC\. Got an empty trait in: $/)
    expect(detail('resources=VCPU:1&required=', [1, 22])).toMatch(/of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC\./)
    expect(detail('resources=VCPU:1&required=!CUSTOM_MAGIC', [1, 17])).toBe(
      "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !CUSTOM_MAGIC",
    )
    expect(detail('resources=VCPU:1&required=in:A,B', [1, 38])).toMatch(/only supported since microversion 1\.39\. Got: in:A,B$/)
    expect(detail('resources=VCPU:1&required=in:A,!B')).toMatch(/does not support forbidden traits/)
    expect(detail('resources=VCPU:1&required=A,!A', [1, 22])).toBe(
      'Conflicting required and forbidden traits found in the following traits keys: required: (A)',
    )
    expect(detail('resources=VCPU:1&member_of=INVALID_UUID', [1, 24])).toBe(
      "Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: INVALID_UUID",
    )
    expect(detail('resources=VCPU:1&member_of=11111111-1111-1111-1111-111111111111,22222222-2222-2222-2222-222222222222', [1, 24])).toMatch(
      /^Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword/,
    )
    expect(detail('resources=VCPU:1&member_of=in:', [1, 24])).toMatch(/contain valid UUID\(s\)\. Got: $/)
    expect(
      detail('resources=VCPU:1&member_of=11111111-1111-1111-1111-111111111111&member_of=11111111-1111-1111-1111-111111111111', [1, 23]),
    ).toBe('Multiple member_of parameters are not supported')
    expect(detail('resources=VCPU:1&member_of=!11111111-1111-1111-1111-111111111111', [1, 31])).toBe(
      'Forbidden member_of parameters are not supported in the specified microversion',
    )
    expect(detail('resources=VCPU:1&in_tree=life-is-beautiful', [1, 31])).toMatch(
      /Expected 'in_tree' parameter to be a format of uuid\. Got: life-is-beautiful$/,
    )
    expect(detail('resources1=VCPU:1&resources2=VCPU:1', [1, 25])).toBe(
      'The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.',
    )
    expect(detail('required=FOO&required1=BAR', [1, 25])).toMatch(/orphaned traits keys: required, required1$/)
    expect(detail('member_of=11111111-1111-1111-1111-111111111111&member_of3=11111111-1111-1111-1111-111111111111', [1, 25])).toMatch(
      /orphaned member_of keys: member_of, member_of3$/,
    )
    expect(detail('resources=VCPU:1&in_tree1=11111111-1111-1111-1111-111111111111', [1, 31])).toBe(
      'All request groups must specify resources.',
    )
    expect(detail('group_policy=isolate', [1, 25])).toBe('At least one request group (`resources` or `resources{$S}`) is required.')
  })

  it('checks root_required, same_subtree and resourceless groups from 1.35/1.36', () => {
    let e = err(() => parse('resources=VCPU:1&root_required=A&root_required=!B'))
    expect(e.detail).toBe("Query parameter 'root_required' may be specified only once.")
    expect(e.code).toBe('placement.query.duplicate_key')
    e = err(() => parse('resources=VCPU:1&root_required=HW_CPU_X86_AVX2,HW_CPU_X86_SSE,!HW_CPU_X86_AVX2'))
    expect(e.detail).toBe('Conflicting required and forbidden traits found in root_required: HW_CPU_X86_AVX2')
    expect(e.code).toBe('placement.query.bad_value')
    e = err(() => parse('resources1=VCPU:1&required2=X&group_policy=none'))
    expect(e.detail).toBe("Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - ['2'].")
    expect(e.code).toBe('placement.query.bad_value')
    e = err(() => parse('member_of1=11111111-1111-1111-1111-111111111111&group_policy=none'))
    expect(e.detail).toBe('There must be at least one resources or resources[$S] parameter.')
    expect(e.code).toBe('placement.query.missing_value')
    e = err(() => parse('resources_COMPUTE=VCPU:1&resources_ACCEL=CUSTOM_FPGA:1&same_subtree=COMPUTE,_ACCEL&group_policy=none'))
    expect(e.detail).toBe("Real suffixes should be specified in `same_subtree`: ['COMPUTE'] not found in ['_COMPUTE', '_ACCEL'].")
    e = err(() => parse('resources_COMPUTE=VCPU:1&resources_ACCEL=CUSTOM_FPGA:1&same_subtree=_COMPUTE,,_ACCEL&group_policy=none'))
    expect(e.detail).toBe('Empty string (unsuffixed group) can not be specified in `same_subtree` ')
    expect(parse('resources=VCPU:1&required_NIC=X&same_subtree=_NIC,_NIC').sameSubtree).toEqual([['_NIC']])
  })

  it('keeps only the last required below 1.39 and all of them from 1.39', () => {
    expect(parse('resources=VCPU:1&required=A&required=B', [1, 38]).groups[0].requiredTraits).toEqual([['B']])
    expect(parse('resources=VCPU:1&required=A&required=B', [1, 39]).groups[0].requiredTraits).toEqual([['A'], ['B']])
    expect(parse('resources=VCPU:1&required=!!!A', [1, 39]).groups[0].forbiddenTraits).toEqual(new Set(['A']))
  })

  it('parses GET /resource_providers filters', () => {
    const f = parseProviderFilters(
      params('resources=VCPU:1&required=A,!B&member_of=!11111111-1111-1111-1111-111111111111&name=x&name=y'),
      [1, 39],
    )
    expect([...f.resources!]).toEqual([['VCPU', 1]])
    expect(f.requiredTraits).toEqual([['A']])
    expect(f.name).toBe('y')
    expect([...f.forbiddenAggs!]).toEqual(['11111111-1111-1111-1111-111111111111'])
  })
})

// ---- the engine against Placement's gabbits scenarios ---------------------------------------

describe('shared storage and nested trees', () => {
  const f = sharedStorage()
  const {w} = f

  it('combines compute nodes with sharing disk (1.10 list form)', () => {
    const body = w.ac('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100', [1, 10]) as any
    expect(body.allocation_requests).toHaveLength(5)
    expect(Object.keys(body.provider_summaries)).toHaveLength(4)
    const cn1 = body.allocation_requests.flatMap((ar: any) => ar.allocations.filter((a: any) => a.resource_provider.uuid === f.cn1.uuid))
    expect(cn1.map((a: any) => a.resources)).toEqual([
      {VCPU: 1, MEMORY_MB: 1024},
      {VCPU: 1, MEMORY_MB: 1024},
    ])
    expect(body.provider_summaries[f.cn2.uuid].resources.DISK_GB).toEqual({capacity: 1900, used: 0})
    expect(body.provider_summaries[f.cn1.uuid].resources.VCPU).toEqual({capacity: 384, used: 0})
    expect(Object.keys(body.provider_summaries[f.cn1.uuid])).toEqual(['resources'])
  })

  it('filters by required and forbidden traits', () => {
    let body = w.ac('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100&required=HW_CPU_X86_SSE', [1, 17])
    expect(body.allocation_requests).toHaveLength(2)
    expect(Object.keys(body.provider_summaries)).toHaveLength(3)
    expect(body.provider_summaries[f.cn1.uuid].traits).toEqual(['HW_CPU_X86_SSE', 'HW_CPU_X86_SSE2'])
    body = w.ac('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100&required=!HW_CPU_X86_SSE', [1, 22])
    expect(body.allocation_requests).toHaveLength(3)
    expect(amounts(body, f.cn2.uuid, 'DISK_GB')).toEqual([100])
    body = w.ac('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100&required=HW_CPU_X86_SSE3', [1, 17])
    expect(body.allocation_requests).toHaveLength(0)
    expect(body.provider_summaries).toEqual({})
  })

  it('reports unknown classes and traits', () => {
    expect(err(() => w.ac('resources=MCPU:99', [1, 10])).detail).toBe(
      'Invalid resource class in resources parameter: No such resource class MCPU.',
    )
    expect(err(() => w.ac('resources=VCPU:1&required=INVALID_TRAIT', [1, 17])).detail).toBe('No such trait(s): INVALID_TRAIT.')
  })

  it('narrows provider summaries per microversion', () => {
    let body = w.ac('resources=VCPU:1', [1, 26])
    expect(body.provider_summaries[f.cn2.uuid].resources).toEqual({VCPU: {capacity: 384, used: 0}})
    body = w.ac('resources=VCPU:1', [1, 27])
    expect(Object.keys(body.provider_summaries[f.cn2.uuid].resources)).toHaveLength(3)
    body = w.ac('resources=VCPU:1', [1, 28])
    expect(Object.keys(body.provider_summaries)).toHaveLength(2)
    body = w.ac('resources=VCPU:1', [1, 29])
    expect(Object.keys(body.provider_summaries)).toHaveLength(10)
    expect(body.provider_summaries[f.pf1_1.uuid].parent_provider_uuid).toBe(f.numa1_1.uuid)
    expect(body.provider_summaries[f.pf1_1.uuid].root_provider_uuid).toBe(f.cn1.uuid)
    expect(body.provider_summaries[f.cn1.uuid].parent_provider_uuid).toBeNull()
  })

  it('is nested-aware from 1.29 only', () => {
    expect(w.ac('resources=SRIOV_NET_VF:4', [1, 28]).allocation_requests).toHaveLength(4)
    let body = w.ac('resources=SRIOV_NET_VF:4', [1, 28])
    expect(Object.keys(body.provider_summaries)).toHaveLength(4)
    body = w.ac('resources=SRIOV_NET_VF:4', [1, 29])
    expect(Object.keys(body.provider_summaries)).toHaveLength(10)
    body = w.ac('resources=VCPU:1,SRIOV_NET_VF:4', [1, 28])
    expect(body.allocation_requests).toHaveLength(0)
    expect(body.provider_summaries).toEqual({})
    body = w.ac('resources=VCPU:1,SRIOV_NET_VF:4', [1, 29])
    expect(body.allocation_requests).toHaveLength(4)
    expect(Object.keys(body.provider_summaries)).toHaveLength(10)
    expect(amounts(body, f.cn1.uuid, 'VCPU')).toEqual([1, 1])
    body = w.ac('resources=VCPU:1,SRIOV_NET_VF:4&limit=1', [1, 29])
    expect(body.allocation_requests).toHaveLength(1)
    expect(Object.keys(body.allocation_requests[0].allocations)).toHaveLength(2)
    expect(Object.keys(body.provider_summaries)).toHaveLength(5)
    body = w.ac('resources=DISK_GB:10,SRIOV_NET_VF:4', [1, 28])
    expect(body.allocation_requests).toHaveLength(8)
    expect(Object.keys(body.provider_summaries)).toHaveLength(6)
  })

  it('applies in_tree', () => {
    const q = (s: string) => w.ac(s, [1, 31]).allocation_requests
    expect(q(`resources=VCPU:1,SRIOV_NET_VF:4&in_tree=${f.cn1.uuid}`)).toHaveLength(2)
    expect(q(`resources=VCPU:1,SRIOV_NET_VF:4&in_tree=${f.pf1_2.uuid}`)).toHaveLength(2)
    expect(q(`resources=VCPU:1,DISK_GB:10&in_tree=${f.cn1.uuid}`)).toHaveLength(0)
    expect(q(`resources=VCPU:1,DISK_GB:10&in_tree=${f.cn2.uuid}`)).toHaveLength(1)
    expect(q(`resources=VCPU:1,DISK_GB:10&in_tree=${f.ss.uuid}`)).toHaveLength(0)
    expect(q(`resources1=VCPU:1&in_tree1=${f.pf1_1.uuid}`)).toHaveLength(1)
    expect(q(`resources1=SRIOV_NET_VF:4&in_tree1=${f.cn1.uuid}`)).toHaveLength(2)
    expect(q(`resources=VCPU:1&resources1=DISK_GB:10&in_tree1=${f.cn1.uuid}`)).toHaveLength(0)
    expect(q(`resources=VCPU:1&resources1=DISK_GB:10&in_tree1=${f.cn2.uuid}`)).toHaveLength(1)
    const body = w.ac(`resources=VCPU:1&resources1=DISK_GB:10&in_tree1=${f.ss.uuid}`, [1, 31])
    expect(body.allocation_requests).toHaveLength(2)
    expect(amounts(body, f.ss.uuid, 'DISK_GB')).toEqual([10, 10])
    expect(q(`resources=VCPU:1&in_tree=${f.cn1.uuid}&resources1=DISK_GB:10`)).toHaveLength(2)
    expect(q(`resources=VCPU:1&in_tree=${f.cn2.uuid}&resources1=DISK_GB:10`)).toHaveLength(3)
    expect(q(`resources1=VCPU:1&in_tree1=${f.cn1.uuid}&resources2=DISK_GB:10&in_tree2=${f.ss.uuid}&group_policy=none`)).toHaveLength(1)
    expect(q(`resources=VCPU:1&in_tree=${uuid()}`)).toHaveLength(0)
  })
})

describe('granular groups', () => {
  const f = granular()
  const {w} = f
  const q = (s: string, mv: Microversion = [1, 25]) => w.ac(s, mv)

  it('combines groups under group_policy none and isolate', () => {
    let body = q('resources1=VCPU:1&resources2=MEMORY_MB:1024&group_policy=none')
    expect(body.allocation_requests).toHaveLength(3)
    expect(Object.keys(body.provider_summaries)).toHaveLength(3)
    expect(body.allocation_requests[0].allocations[f.left.uuid].resources).toEqual({VCPU: 1, MEMORY_MB: 1024})
    expect(q('resources1=VCPU:1&resources2=MEMORY_MB:1024&group_policy=isolate').allocation_requests).toHaveLength(0)
    expect(q('resources1=VCPU:1&resources2=MEMORY_MB:1024&group_policy=isolate&group_policy=none').allocation_requests).toHaveLength(0)
    body = q('resources=VCPU:3,MEMORY_MB:512&resources1=VCPU:1,MEMORY_MB:1024&resources2=VCPU:2&group_policy=none')
    expect(body.allocation_requests).toHaveLength(3)
    expect(body.allocation_requests.map((a) => Object.values(a.allocations)[0].resources)).toEqual(
      Array(3).fill({VCPU: 6, MEMORY_MB: 1536}),
    )
    expect(q('resources=VCPU:1&resources1=MEMORY_MB:2048').allocation_requests).toHaveLength(3)
  })

  it('shares disk between isolated groups', () => {
    let body = q('resources1=VCPU:1,MEMORY_MB:1024&resources2=DISK_GB:100&group_policy=isolate')
    expect(body.allocation_requests).toHaveLength(5)
    expect(Object.keys(body.provider_summaries)).toHaveLength(5)
    body = q('resources1=VCPU:1,MEMORY_MB:1024&resources2=DISK_GB:100&group_policy=none')
    expect(body.allocation_requests).toHaveLength(7)
    expect(Object.keys(body.provider_summaries)).toHaveLength(5)
    for (const s of ['resources1=DISK_GB:800', 'resources=DISK_GB:800']) {
      body = q(s)
      expect(body.allocation_requests).toHaveLength(2)
      expect(Object.keys(body.provider_summaries)).toHaveLength(2)
    }
    body = q('resources1=VCPU:1,MEMORY_MB:1024&resources2=DISK_GB:100&required2=CUSTOM_DISK_SSD&group_policy=isolate')
    expect(body.allocation_requests).toHaveLength(2)
    expect(amounts(body, f.disk1.uuid, 'DISK_GB')).toEqual([100, 100])
    expect(Object.keys(body.provider_summaries).sort()).toEqual([f.left.uuid, f.middle.uuid, f.disk1.uuid].sort())
    body = q('resources1=VCPU:1&resources2=DISK_GB:100&required2=!CUSTOM_DISK_SSD&group_policy=none')
    expect(body.allocation_requests).toHaveLength(4)
    expect(amounts(body, f.disk2.uuid, 'DISK_GB')).toEqual([100, 100, 100])
    expect(Object.keys(body.provider_summaries)).toHaveLength(4)
  })

  it('filters granular groups by member_of', () => {
    let body = q(`resources1=VCPU:1&resources2=DISK_GB:100&member_of2=${f.aggC}&group_policy=none`)
    expect(body.allocation_requests).toHaveLength(1)
    expect(body.allocation_requests[0].allocations[f.right.uuid].resources).toEqual({VCPU: 1, DISK_GB: 100})
    expect(Object.keys(body.provider_summaries)).toEqual([f.right.uuid])
    body = q(
      `resources1=VCPU:1&required1=!HW_CPU_X86_SSE&resources2=DISK_GB:100&required2=CUSTOM_DISK_SSD&member_of2=in:${f.aggA},${f.aggC}&group_policy=none`,
    )
    expect(body.allocation_requests).toHaveLength(2)
    expect(Object.keys(body.provider_summaries)).toHaveLength(3)
    body = q(
      `resources_compute=VCPU:1&required_compute=!HW_CPU_X86_SSE&resources_disk=DISK_GB:100&required_disk=CUSTOM_DISK_SSD&member_of_disk=in:${f.aggA},${f.aggC}&group_policy=none`,
      [1, 33],
    )
    expect(body.allocation_requests).toHaveLength(2)
    body = q(`resources1=VCPU:1&resources2=DISK_GB:100&member_of2=in:${f.aggB},${f.aggC}&member_of2=${f.aggA}&group_policy=isolate`)
    expect(body.allocation_requests).toHaveLength(3)
    expect(amounts(body, f.disk2.uuid, 'DISK_GB')).toEqual([100, 100, 100])
    expect(Object.keys(body.provider_summaries)).toHaveLength(4)
  })

  it('handles many groups and combined capacity / max_unit', () => {
    let body = q(
      'resources1=VCPU:1&resources2=VGPU:1&required2=HW_GPU_API_DXVA&resources3=MEMORY_MB:1024&resources4=DISK_GB:100&required4=CUSTOM_DISK_SSD' +
        '&resources5=DISK_GB:50&required5=!CUSTOM_DISK_SSD&resources6=SRIOV_NET_VF:1,CUSTOM_NET_MBPS:1000&resources7=SRIOV_NET_VF:2,CUSTOM_NET_MBPS:2000&group_policy=none',
    )
    expect(body.allocation_requests).toHaveLength(3)
    expect(amounts(body, f.left.uuid, 'SRIOV_NET_VF')).toEqual([3, 3])
    expect(amounts(body, f.left.uuid, 'DISK_GB')).toEqual([50])
    expect(amounts(body, f.net.uuid, 'CUSTOM_NET_MBPS')).toEqual([3000])
    expect(Object.keys(body.provider_summaries)).toHaveLength(5)
    body = q('resources=VCPU:2,MEMORY_MB:2048,SRIOV_NET_VF:1,CUSTOM_NET_MBPS:2000&resources1=SRIOV_NET_VF:1,CUSTOM_NET_MBPS:3000')
    expect(body.allocation_requests).toHaveLength(1)
    expect(body.allocation_requests[0].allocations[f.net.uuid].resources).toEqual({SRIOV_NET_VF: 2, CUSTOM_NET_MBPS: 5000})
    expect(Object.keys(body.provider_summaries)).toHaveLength(2)
    body = q('resources=VGPU:1&resources1=VGPU:1&resources2=VGPU:1&group_policy=none')
    expect(body.allocation_requests).toHaveLength(1)
    expect(body.allocation_requests[0].allocations[f.left.uuid].resources).toEqual({VGPU: 3})
  })

  it('supports any-of traits (1.39)', () => {
    expect(q('required=CUSTOM_FOO&required=HW_CPU_X86_MMX&resources=VCPU:1', [1, 38]).allocation_requests).toHaveLength(1)
    let body = q('required=in:HW_GPU_API_DXVA,HW_NIC_ACCEL_TLS&required=HW_CPU_X86_AVX,!CUSTOM_FOO&resources=VCPU:1,DISK_GB:1', [1, 39])
    expect(body.allocation_requests).toHaveLength(2)
    expect(amounts(body, f.middle.uuid, 'VCPU')).toEqual([1, 1])
    body = q('required=in:HW_CPU_X86_MMX,HW_NIC_ACCEL_TLS&required=in:CUSTOM_DISK_SSD,CUSTOM_FOO&resources=VCPU:1,DISK_GB:1', [1, 39])
    expect(body.allocation_requests).toHaveLength(3)
    expect(amounts(body, f.right.uuid, 'VCPU')).toEqual([1, 1])
    expect(amounts(body, f.disk2.uuid, 'DISK_GB')).toEqual([1])
  })
})

describe('member_of and forbidden aggregates', () => {
  const f = nonShared()
  const {w, cns, aggA, aggB, aggC} = f
  const q = (s: string, mv: Microversion = [1, 32]) => w.ac(s, mv).allocation_requests.length
  it('filters on aggregate membership', () => {
    expect(q(`resources=VCPU:1&member_of=${aggA}`)).toBe(0)
    w.state.setAggregates(cns[0], [aggA, aggC])
    w.state.setAggregates(cns[1], [aggA, aggB])
    expect(q(`resources=VCPU:1&member_of=in:${aggA},${aggB}`)).toBe(2)
    expect(q(`resources=VCPU:1&member_of=${aggA}&member_of=${aggB}`)).toBe(1)
    expect(q(`resources=VCPU:1&member_of=!${aggC}`)).toBe(2)
    expect(q(`resources=VCPU:1&member_of=!in:${aggB},${aggC}`)).toBe(1)
    expect(q(`resources=VCPU:1&member_of=!${aggB}&member_of=${aggC}`)).toBe(1)
    expect(q(`resources=VCPU:1&member_of=!in:${aggB},${aggC}&member_of=${aggA}`)).toBe(0)
    expect(q(`resources=VCPU:1&member_of=!${aggB}&member_of=in:${aggB},${aggC}`)).toBe(1)
    expect(q(`resources=VCPU:1&member_of=!${aggB}&member_of=${aggB}`)).toBe(0)
  })
  it('a member_of matching nothing wins over an unknown trait', () => {
    expect(q(`resources=VCPU:1&member_of=${uuid()}&required=CUSTOM_NOPE`)).toBe(0)
    expect(err(() => q(`resources=VCPU:1&member_of=${aggA}&required=CUSTOM_NOPE`)).detail).toBe('No such trait(s): CUSTOM_NOPE.')
  })
})

describe('member_of through the aggregate members', () => {
  // A narrow member_of is searched from the aggregate's members instead of a scan of every
  // provider. The same world with the aggregate padded by many inventory-less members (so
  // the scan runs) must give the same answers, in the same order.
  const build = (padding: number) => {
    const w = new World()
    const agg = '00000000-0000-4000-8000-aaaaaaaaaaaa'
    const roots: Provider[] = []
    for (let i = 0; i < 30; i++) {
      const r = w.rp(`cn${i}`, [4, 11, 19, 26].includes(i) ? {aggs: [agg]} : {})
      w.inv(r, 'DISK_GB', 100)
      roots.push(r)
    }
    for (let i = 29; i >= 0; i--) {
      const n = w.rp(`numa${i}`, {parent: roots[i], aggs: [7, 11, 22].includes(i) ? [agg] : []})
      w.inv(n, 'VCPU', 4)
    }
    for (let i = 0; i < 30; i++) w.inv(w.rp(`flat${i}`, [2, 28].includes(i) ? {aggs: [agg]} : {}), 'VCPU', 8)
    w.alloc(roots[19], {DISK_GB: 100}) // a full member
    for (let i = 0; i < padding; i++) w.rp(`pad${i}`, {aggs: [agg]})
    return {w, agg}
  }
  const named = (w: World, body: ReturnType<World['ac']>) =>
    body.allocation_requests.map((ar) => Object.entries(ar.allocations).map(([u, a]) => [w.state.providers.get(u)!.name, a.resources]))
  it('gives what a scan gives, limited or not', () => {
    const narrow = build(0)
    const wide = build(400)
    const queries = [
      'resources=VCPU:1&member_of=AGG',
      'resources=VCPU:1,DISK_GB:10&member_of=AGG',
      'resources1=VCPU:1&member_of1=AGG',
      'resources=DISK_GB:10&resources1=VCPU:1&member_of1=AGG&group_policy=none',
      'resources=VCPU:1&member_of=in:AGG,00000000-0000-4000-8000-bbbbbbbbbbbb',
    ]
    let seen = 0
    for (const q of queries) {
      for (const limit of ['', '&limit=1', '&limit=3']) {
        const a = named(narrow.w, narrow.w.ac(q.replaceAll('AGG', narrow.agg) + limit))
        const b = named(wide.w, wide.w.ac(q.replaceAll('AGG', wide.agg) + limit))
        expect(a).toEqual(b)
        seen += a.length
      }
    }
    expect(seen).toBeGreaterThan(20)
    expect(
      named(narrow.w, narrow.w.ac(`resources=VCPU:1,DISK_GB:10&member_of=${narrow.agg}`)).map((c) =>
        c
          .map(([n]) => n)
          .sort()
          .join('+'),
      ),
    ).toEqual([
      // In the order of the VCPU providers (the NUMA nodes were made last tree first).
      'cn26+numa26',
      'cn11+numa11',
      'cn4+numa4',
    ])
  })
})

describe('NUMA network trees', () => {
  const f = numaNetwork()
  const {w} = f
  const q = (s: string, mv: Microversion = [1, 36]) => w.ac(s, mv)
  const len = (s: string, mv?: Microversion) => q(s, mv).allocation_requests.length

  it('gives mappings (1.34)', () => {
    let body = q('resources=VCPU:1', [1, 34])
    expect(body.allocation_requests).toHaveLength(3)
    expect(Object.keys(body.provider_summaries)).toHaveLength(23)
    expect(Object.keys(body.allocation_requests[0].mappings)).toEqual([''])
    expect(Object.keys(q('resources=VCPU:1', [1, 33]).allocation_requests[0])).toEqual(['allocations'])
    body = q('resources_LEFT=VCPU:1&resources_RIGHT=VCPU:1&group_policy=isolate', [1, 34])
    expect(body.allocation_requests).toHaveLength(2)
    expect(Object.keys(body.provider_summaries)).toHaveLength(12)
    body = q(
      'required_NET1=CUSTOM_PHYSNET1&resources_NET1=NET_BW_EGR_KILOBIT_PER_SEC:10&required_NET2=CUSTOM_PHYSNET2&resources_NET2=NET_BW_EGR_KILOBIT_PER_SEC:20&resources=VCPU:1&group_policy=isolate',
      [1, 34],
    )
    expect(body.allocation_requests).toHaveLength(2)
    expect(body.allocation_requests[0].mappings._NET1).toEqual([f.esn1.uuid])
    expect(body.allocation_requests[0].mappings._NET2).toEqual([f.esn2.uuid])
    body = q(
      'resources_BWA=NET_BW_EGR_KILOBIT_PER_SEC:10&required_BWA=CUSTOM_PHYSNET1&resources_BWB=NET_BW_EGR_KILOBIT_PER_SEC:20&required_BWB=CUSTOM_PHYSNET1&group_policy=none',
      [1, 34],
    )
    expect(body.allocation_requests).toHaveLength(1)
    expect(body.allocation_requests[0].mappings).toEqual({_BWA: [f.esn1.uuid], _BWB: [f.esn1.uuid]})
    expect(body.allocation_requests[0].allocations[f.esn1.uuid].resources).toEqual({NET_BW_EGR_KILOBIT_PER_SEC: 30})
  })

  it('applies same_subtree with resourceful and resourceless groups', () => {
    expect(len('resources_COMPUTE=VCPU:1&resources_ACCEL=CUSTOM_FPGA:1&group_policy=none')).toBe(6)
    expect(len('resources_COMPUTE=VCPU:1&resources_ACCEL=CUSTOM_FPGA:1&same_subtree=_COMPUTE&group_policy=none')).toBe(6)
    expect(len('resources_COMPUTE=VCPU:1&resources_ACCEL=CUSTOM_FPGA:1&same_subtree=_COMPUTE,_ACCEL&group_policy=none')).toBe(3)
    expect(len('resources_COMPUTE1=VCPU:1&resources_COMPUTE2=MEMORY_MB:1024&same_subtree=_COMPUTE1,_COMPUTE2&group_policy=none')).toBe(3)
    expect(len('resources_COMPUTE1=VCPU:1&resources_COMPUTE2=MEMORY_MB:1024&same_subtree=_COMPUTE1,_COMPUTE2&group_policy=isolate')).toBe(0)
    expect(
      len(
        'resources=VCPU:1&resources_PORT1=CUSTOM_VF:4&required_PORT1=CUSTOM_PHYSNET1&resources_PORT2=CUSTOM_VF:4&required_PORT2=CUSTOM_PHYSNET2&group_policy=none',
      ),
    ).toBe(2)
    const body = q(
      'resources=VCPU:1&required_NIC=CUSTOM_HW_NIC_ROOT&resources_PORT1=CUSTOM_VF:4&required_PORT1=CUSTOM_PHYSNET1&resources_PORT2=CUSTOM_VF:4&required_PORT2=CUSTOM_PHYSNET2&same_subtree=_NIC,_PORT1,_PORT2&group_policy=none',
    )
    expect(body.allocation_requests).toHaveLength(1)
    expect(Object.keys(body.allocation_requests[0].allocations)).toHaveLength(3)
    expect(body.allocation_requests[0].mappings).toEqual({
      '': [f.cn2.uuid],
      _NIC: [f.nics[0].uuid],
      _PORT1: [f.pf1_1.uuid],
      _PORT2: [f.pf1_2.uuid],
    })
    const base = 'resources=VCPU:1&required_NIC=CUSTOM_HW_NIC_ROOT&resources_PORT1=CUSTOM_VF:2&required_PORT1=CUSTOM_PHYSNET1'
    expect(
      len(`${base}&resources_PORT2=CUSTOM_VF:2&required_PORT2=CUSTOM_PHYSNET2&same_subtree=_NIC,_PORT1,_PORT2&group_policy=none`),
    ).toBe(5)
    expect(
      len(`${base}&resources_PORT2=CUSTOM_VF:2&required_PORT2=CUSTOM_PHYSNET2&same_subtree=_NIC,_PORT1,_PORT2&group_policy=isolate`),
    ).toBe(5)
    const b2 = `${base}&resources_PORT2A=CUSTOM_VF:1&required_PORT2A=CUSTOM_PHYSNET2&resources_PORT2B=CUSTOM_VF:1&required_PORT2B=CUSTOM_PHYSNET2&same_subtree=_NIC,_PORT1,_PORT2A,_PORT2B`
    expect(len(`${b2}&group_policy=none`)).toBe(9)
    expect(len(`${b2}&group_policy=isolate`)).toBe(4)
    expect(len('resources_PORT1=CUSTOM_VF:8&required_PORT2=CUSTOM_PHYSNET1&same_subtree=_PORT1,_PORT2&group_policy=none')).toBe(1)
    expect(len('resources_PORT1=CUSTOM_VF:8&required_PORT2=CUSTOM_PHYSNET1&same_subtree=_PORT1,_PORT2&group_policy=isolate')).toBe(0)
    expect(
      len(
        'resources_COMPUTE1=VCPU:1&required_COMPUTE2=CUSTOM_FOO&required_COMPUTE3=HW_NUMA_ROOT&same_subtree=_COMPUTE1,_COMPUTE2,_COMPUTE3&group_policy=none',
      ),
    ).toBe(1)
    expect(
      len(
        'required_NUMA=HW_NUMA_ROOT&resources_ACCEL1=CUSTOM_FPGA:1&resources_ACCEL2=CUSTOM_FPGA:1&same_subtree=_NUMA,_ACCEL1,_ACCEL2&group_policy=isolate',
      ),
    ).toBe(2)
    expect(
      len(
        'required_NUMA=HW_NUMA_ROOT,!CUSTOM_FOO&resources_ACCEL1=CUSTOM_FPGA:1&resources_ACCEL2=CUSTOM_FPGA:1&same_subtree=_NUMA,_ACCEL1,_ACCEL2&group_policy=isolate',
      ),
    ).toBe(0)
    const multi = q(
      'required_NUMA=HW_NUMA_ROOT&resources_COMPUTE=VCPU:2,MEMORY_MB:512&resources_FPGA=CUSTOM_FPGA:1&resources_GPU=VGPU:1&required_SRIOV=CUSTOM_VNIC_TYPE_DIRECT' +
        '&resources_NET1=NET_BW_EGR_KILOBIT_PER_SEC:100&required_NET1=CUSTOM_PHYSNET1&resources_NET2=NET_BW_EGR_KILOBIT_PER_SEC:100&required_NET2=CUSTOM_PHYSNET2' +
        '&same_subtree=_NUMA,_COMPUTE,_GPU,_FPGA&same_subtree=_SRIOV,_NET1,_NET2&group_policy=none',
    )
    expect(multi.allocation_requests).toHaveLength(1)
    expect(multi.allocation_requests[0].mappings._SRIOV).toEqual([f.sriov.uuid])
    expect(multi.allocation_requests[0].allocations[f.numa0.uuid].resources).toEqual({VCPU: 2, MEMORY_MB: 512})
    let body2 = q(
      'resources_COMPUTE=VCPU:1&required_NIC=CUSTOM_HW_NIC_ROOT&resources_PORT1=CUSTOM_VF:2&required_PORT1=CUSTOM_PHYSNET1&same_subtree=_NIC,_COMPUTE&same_subtree=_NIC,_PORT1&group_policy=none',
    )
    expect(body2.allocation_requests).toHaveLength(4)
    expect(Object.keys(body2.provider_summaries)).toHaveLength(11)
    body2 = q(
      'resources_COMPUTE=VCPU:1&required_NIC=CUSTOM_HW_NIC_ROOT&resources_PORT1=CUSTOM_VF:2&required_PORT1=CUSTOM_PHYSNET1&same_subtree=_NIC,_COMPUTE,_PORT1&group_policy=none',
    )
    expect(body2.allocation_requests).toHaveLength(12)
    expect(
      len(
        'required_MULTI_ATTACH=COMPUTE_VOLUME_MULTI_ATTACH&resources_BW=NET_BW_EGR_KILOBIT_PER_SEC:100&resources_COMPUTE=VCPU:4&same_subtree=_MULTI_ATTACH,_BW,_COMPUTE&group_policy=isolate',
      ),
    ).toBe(3)
  })

  it('applies root_required', () => {
    const r = (s: string) => len(s, [1, 35])
    expect(err(() => r('resources=VCPU:1&root_required=CUSTOM_NO_EXIST,HW_CPU_X86_SSE,!HW_CPU_X86_AVX')).detail).toBe(
      'No such trait(s): CUSTOM_NO_EXIST.',
    )
    expect(err(() => r('resources=VCPU:1&root_required=!CUSTOM_NO_EXIST,HW_CPU_X86_SSE')).detail).toBe('No such trait(s): CUSTOM_NO_EXIST.')
    expect(r('resources=VCPU:1&root_required=HW_NUMA_ROOT')).toBe(0)
    expect(r('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100&root_required=MISC_SHARES_VIA_AGGREGATE')).toBe(0)
    expect(r('resources=VCPU:1,MEMORY_MB:1024&root_required=COMPUTE_VOLUME_MULTI_ATTACH')).toBe(4)
    expect(r('resources1=VCPU:1&resources2=MEMORY_MB:1024&group_policy=none&root_required=COMPUTE_VOLUME_MULTI_ATTACH')).toBe(4)
    expect(r('resources1=VCPU:1&resources2=MEMORY_MB:1024&group_policy=isolate&root_required=COMPUTE_VOLUME_MULTI_ATTACH')).toBe(2)
    const body = q('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100&root_required=COMPUTE_VOLUME_MULTI_ATTACH', [1, 35])
    expect(body.allocation_requests).toHaveLength(4)
    expect(body.provider_summaries[f.numa1.uuid].traits).toEqual(['HW_NUMA_ROOT', 'CUSTOM_FOO'])
    expect(r('resources1=VCPU:1,MEMORY_MB:1024&resources2=DISK_GB:100&&group_policy=none&root_required=COMPUTE_VOLUME_MULTI_ATTACH')).toBe(
      2,
    )
    expect(r('resources=VCPU:1,DISK_GB:100&required=CUSTOM_FOO')).toBe(3)
    expect(r('resources=VCPU:1,DISK_GB:100&root_required=CUSTOM_FOO')).toBe(2)
    expect(r('resources1=VCPU:1&required1=CUSTOM_FOO&resources2=DISK_GB:100&group_policy=none')).toBe(3)
    expect(r('resources1=VCPU:1&resources2=DISK_GB:100&group_policy=none&root_required=CUSTOM_FOO')).toBe(2)
    expect(r('resources=VCPU:3&root_required=!HW_NUMA_ROOT')).toBe(2)
    const sh = q('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100&root_required=!MISC_SHARES_VIA_AGGREGATE', [1, 35])
    expect(sh.allocation_requests).toHaveLength(6)
    expect(amounts(sh, f.ss1.uuid, 'DISK_GB')).toEqual([100, 100, 100, 100, 100])
    expect(r('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100&root_required=CUSTOM_FOO,!HW_NUMA_ROOT')).toBe(2)
    expect(r('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100&root_required=CUSTOM_FOO,!COMPUTE_VOLUME_MULTI_ATTACH')).toBe(2)
    expect(r('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100&root_required=!CUSTOM_FOO,!COMPUTE_VOLUME_MULTI_ATTACH')).toBe(0)
    expect(r('resources1=VCPU:1,MEMORY_MB:1024&resources2=DISK_GB:100&&group_policy=none&root_required=!CUSTOM_FOO')).toBe(2)
    expect(r('resources=VCPU:1&required=CUSTOM_FOO&root_required=CUSTOM_FOO')).toBe(1)
    expect(r('resources1=VCPU:1&required1=CUSTOM_FOO&root_required=CUSTOM_FOO')).toBe(1)
    expect(r('resources1=VCPU:1&required1=CUSTOM_FOO&root_required=!CUSTOM_FOO')).toBe(1)
    expect(r('resources1=VCPU:1&required1=!CUSTOM_FOO&root_required=CUSTOM_FOO')).toBe(0)
  })
})

// ---- limits, randomization, explosion -------------------------------------------------------

describe('limits and combinatorial explosion', () => {
  it('limits, keeps only the summaries of returned trees, and randomizes', () => {
    const w = new World()
    for (let i = 0; i < 50; i++) w.inv(w.rp(`cn${i}`), 'VCPU', 4)
    let body = w.ac('resources=VCPU:1&limit=7', [1, 16])
    expect(body.allocation_requests).toHaveLength(7)
    expect(Object.keys(body.provider_summaries)).toHaveLength(7)
    body = w.ac('resources=VCPU:1&limit=7', [1, 16], {randomize: true})
    expect(body.allocation_requests).toHaveLength(7)
    expect(Object.keys(body.provider_summaries).sort()).toEqual(body.allocation_requests.flatMap((a) => Object.keys(a.allocations)).sort())
    expect(w.ac('resources=VCPU:1', [1, 16], {maxCandidates: 10}).allocation_requests).toHaveLength(10)
    expect(w.ac('resources=VCPU:5', [1, 16]).allocation_requests).toHaveLength(0)
  })

  it('a limited search over trees returns the first candidates of the full search', () => {
    // Trees whose providers are created out of order, some of them full, with traits and
    // aggregates: a limited answer (searched tree by tree) must be a prefix of the full one.
    const w = new World()
    const agg = uuid()
    const roots = Array.from({length: 6}, (_, i) => w.rp(`cn${i}`, i % 2 ? {aggs: [agg]} : {}))
    roots.forEach((r, i) => {
      w.inv(r, 'DISK_GB', 100)
      if (i !== 3) w.traits(r, 'COMPUTE_VOLUME_MULTI_ATTACH')
    })
    const numas: Provider[] = []
    for (let i = 5; i >= 0; i--) {
      for (let j = 0; j < 2; j++) {
        const n = w.rp(`numa${i}_${j}`, {parent: roots[i]})
        w.inv(n, 'VCPU', 4)
        w.inv(n, 'MEMORY_MB', 2048)
        if ((i + j) % 3 !== 0) w.traits(n, 'HW_NUMA_ROOT', 'CUSTOM_FOO')
        numas.push(n)
        w.inv(w.rp(`fpga${i}_${j}`, {parent: n}), 'FPGA', 1)
      }
    }
    w.alloc(numas[1], {VCPU: 4})
    w.alloc(numas[4], {MEMORY_MB: 2048})
    const queries = [
      'resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH&resources_C=VCPU:1,MEMORY_MB:256&required_C=CUSTOM_FOO&resources_F=FPGA:1&group_policy=none&same_subtree=_C,_F',
      'resources_C=VCPU:1&resources_F=FPGA:1&group_policy=isolate&same_subtree=_C,_F',
      'resources=VCPU:1,DISK_GB:1&required=CUSTOM_FOO&resources_F=FPGA:1&group_policy=none',
      `resources=VCPU:2,DISK_GB:1&member_of=${agg}&resources_F=FPGA:1&group_policy=none`,
      'resources_A=VCPU:3&resources_B=VCPU:3&group_policy=none',
      'required_R=CUSTOM_FOO&resources_F=FPGA:1&same_subtree=_R,_F&group_policy=none',
      'root_required=!COMPUTE_VOLUME_MULTI_ATTACH&resources_A=VCPU:1&resources_B=FPGA:1&group_policy=none',
    ]
    for (const q of queries) {
      const all = w.ac(q)
      expect(all.allocation_requests.length).toBeGreaterThan(1)
      for (let k = 1; k <= all.allocation_requests.length + 1; k++) {
        const body = w.ac(`${q}&limit=${k}`)
        const want = all.allocation_requests.slice(0, k)
        expect(body.allocation_requests).toEqual(want)
        const trees = new Set(want.flatMap((a) => Object.keys(a.allocations).map((u) => all.provider_summaries[u].root_provider_uuid)))
        const sums = Object.entries(all.provider_summaries).filter(([, s]) => trees.has(s.root_provider_uuid))
        expect(Object.keys(body.provider_summaries)).toEqual(sums.map(([u]) => u))
      }
    }
    // The 400 of a later group is not raised when an earlier group finds nothing, limited or not.
    const bad = 'resources_A=VCPU:99&resources_B=FPGA:1&required_B=CUSTOM_NOPE&group_policy=none'
    expect(w.ac(bad).allocation_requests).toHaveLength(0)
    expect(w.ac(`${bad}&limit=1`).allocation_requests).toHaveLength(0)
    expect(err(() => w.ac('resources_A=VCPU:1&resources_B=FPGA:1&required_B=CUSTOM_NOPE&group_policy=none&limit=1')).status).toBe(400)
  })

  it('survives 8 single-unit isolated groups over 8 children', () => {
    const w = new World()
    const root = w.rp('root')
    for (let i = 0; i < 8; i++) w.inv(w.rp(`c${i}`, {parent: root}), 'VCPU', 1)
    const groups = Array.from({length: 8}, (_, i) => `resources${i + 1}=VCPU:1`).join('&')
    let body = w.ac(`${groups}&group_policy=isolate&limit=1000`)
    expect(body.allocation_requests).toHaveLength(1000)
    expect(Object.keys(body.provider_summaries)).toHaveLength(9)
    body = w.ac(`${groups}&group_policy=isolate`)
    expect(body.allocation_requests).toHaveLength(40320)
    // group_policy=none: capacity 1 per child forbids sharing a child as well
    expect(w.ac(`${groups}&group_policy=none&limit=1000`).allocation_requests).toHaveLength(1000)
    // unsatisfiable: 9 groups over 8 children
    expect(w.ac(`${groups}&resources9=VCPU:1&group_policy=isolate`).allocation_requests).toHaveLength(0)
    expect(w.ac(`${groups}&resources9=VCPU:1&group_policy=none&limit=10`).allocation_requests).toHaveLength(0)
    expect(w.ac(`${groups}&group_policy=isolate&limit=50`, [1, 39], {randomize: true}).allocation_requests).toHaveLength(50)
    expect(
      w.ac(`${groups}&group_policy=isolate`, [1, 39], {maxCandidates: 100, strategy: 'breadth-first'}).allocation_requests,
    ).toHaveLength(100)
  })

  it('dedupes candidates served by sharing providers only', () => {
    const w = new World()
    const agg = uuid()
    for (let i = 0; i < 5; i++) w.inv(w.rp(`cn${i}`, {aggs: [agg]}), 'VCPU', 4)
    const ss = w.rp('ss', {aggs: [agg]})
    w.inv(ss, 'DISK_GB', 100)
    w.traits(ss, 'MISC_SHARES_VIA_AGGREGATE')
    let body = w.ac('resources=DISK_GB:10')
    expect(body.allocation_requests).toHaveLength(1)
    expect(Object.keys(body.provider_summaries)).toEqual([ss.uuid])
    body = w.ac('resources=VCPU:1,DISK_GB:10')
    expect(body.allocation_requests).toHaveLength(5)
    expect(Object.keys(body.provider_summaries)).toHaveLength(6)
    body = w.ac('resources1=DISK_GB:10&resources2=DISK_GB:10&group_policy=none')
    expect(body.allocation_requests).toHaveLength(1)
    expect(body.allocation_requests[0].allocations[ss.uuid].resources).toEqual({DISK_GB: 20})
  })

  it('sees structural changes between requests', () => {
    const w = new World()
    const cn = w.rp('cn')
    w.inv(cn, 'VCPU', 2)
    expect(w.ac('resources=VCPU:2').allocation_requests).toHaveLength(1)
    w.inv(cn, 'VCPU', 1)
    expect(w.ac('resources=VCPU:2').allocation_requests).toHaveLength(0)
    const agg = uuid()
    expect(w.ac(`resources=VCPU:1&member_of=${agg}`).allocation_requests).toHaveLength(0)
    w.state.setAggregates(cn, [agg])
    expect(w.ac(`resources=VCPU:1&member_of=${agg}`).allocation_requests).toHaveLength(1)
    w.traits(cn, 'CUSTOM_X')
    expect(w.ac('resources=VCPU:1&required=CUSTOM_X').allocation_requests).toHaveLength(1)
    const child = w.rp('child', {parent: cn})
    w.inv(child, 'VGPU', 1)
    const body = w.ac('resources=VCPU:1,VGPU:1')
    expect(body.allocation_requests).toHaveLength(1)
    expect(Object.keys(body.provider_summaries)).toEqual([cn.uuid, child.uuid])
    // Moving the child to another tree, and removing it.
    const cn2 = w.rp('cn2')
    w.inv(cn2, 'VCPU', 1)
    w.state.reparentProvider(child, cn2)
    expect(Object.keys(w.ac('resources=VCPU:1,VGPU:1').provider_summaries).sort()).toEqual([cn2.uuid, child.uuid].sort())
    w.state.removeProvider(child)
    expect(w.ac('resources=VCPU:1,VGPU:1').allocation_requests).toHaveLength(0)
    expect(new World().ac('resources=VCPU:1').allocation_requests).toHaveLength(0)
  })

  it('reports errors of a later group only when earlier groups found something', () => {
    const w = new World()
    w.inv(w.rp('cn'), 'VCPU', 2)
    expect(w.ac('resources1=VCPU:9&resources2=NOPE:1&group_policy=none').allocation_requests).toHaveLength(0)
    expect(err(() => w.ac('resources1=VCPU:1&resources2=NOPE:1&group_policy=none')).detail).toBe(
      'Invalid resource class in resources parameter: No such resource class NOPE.',
    )
    // root_required is checked before any group
    expect(err(() => w.ac('resources=NOPE:1&root_required=CUSTOM_NOPE')).detail).toBe('No such trait(s): CUSTOM_NOPE.')
    expect(w.ac('resources=NOPE:1&root_required=HW_NUMA_ROOT').allocation_requests).toHaveLength(0)
  })

  it('keeps the 1.28 summaries of the providers used, within the returned trees', () => {
    const f = sharedStorage()
    const body = f.w.ac('resources=SRIOV_NET_VF:4&limit=1', [1, 28])
    expect(body.allocation_requests).toHaveLength(1)
    expect(Object.keys(body.provider_summaries)).toHaveLength(2) // pf1_1 and pf1_2 share cn1's tree
  })

  it('keeps an unsuffixed result made of sharing providers under one tree, as Placement does', () => {
    // Checked against Placement 8.0.0: of cn1..cn3 only cn3 pairs with the shared disk, because
    // Placement's set of unsuffixed results keeps {ss: DISK_GB} under a single anchor (cn3).
    const w = new World()
    const agg = 'aaaaaaaa-0000-4000-8000-000000000001'
    const mk = (name: string, n: number) => {
      const p = newProvider(`11111111-0000-4000-8000-00000000000${n}`, name, null, 0)
      w.state.addProvider(p)
      w.state.setAggregates(p, [agg])
      return p
    }
    const cns = [mk('cn1', 1), mk('cn2', 2), mk('cn3', 3)]
    for (const cn of cns) w.inv(cn, 'VCPU', 4)
    const ss = mk('ss', 4)
    w.inv(ss, 'DISK_GB', 100)
    w.traits(ss, 'MISC_SHARES_VIA_AGGREGATE')
    for (const q of ['resources=DISK_GB:10&resources1=VCPU:1', 'resources1=VCPU:1&resources=DISK_GB:10']) {
      const body = w.ac(q)
      expect(body.allocation_requests).toHaveLength(1)
      expect(Object.keys(body.allocation_requests[0].allocations).sort()).toEqual([cns[2].uuid, ss.uuid])
    }
    // with the compute resources in the unsuffixed group every tree pairs with the disk
    expect(w.ac('resources=DISK_GB:10,VCPU:1&resources1=VCPU:1&group_policy=none').allocation_requests).toHaveLength(3)
  })

  it('is consistent with usages and sees new state versions', () => {
    const w = new World()
    const cn = w.rp('cn')
    w.inv(cn, 'VCPU', 2)
    expect(w.ac('resources=VCPU:2').allocation_requests).toHaveLength(1)
    w.alloc(cn, {VCPU: 1})
    const body = w.ac('resources=VCPU:1')
    expect(body.allocation_requests).toHaveLength(1)
    expect(body.provider_summaries[cn.uuid].resources.VCPU).toEqual({capacity: 2, used: 1})
    expect(w.ac('resources=VCPU:2').allocation_requests).toHaveLength(0)
  })
})

describe('filterProviders', () => {
  it('filters by resources, traits, aggregates and tree', () => {
    const f = numaNetwork()
    const {w} = f
    const run = (q: string, mv: Microversion = [1, 39]) => {
      w.state.version++
      return filterProviders(w.state, parseProviderFilters(params(q), mv)).map((p) => p.name)
    }
    expect(run('resources=VCPU:1,MEMORY_MB:1024')).toEqual(['numa0', 'numa1', 'cn2'])
    expect(run('resources=CUSTOM_VF:4')).toEqual(['pf1_1', 'pf1_2', 'pf3_1'])
    expect(run('required=CUSTOM_PHYSNET1&in_tree=' + f.nics[1].uuid)).toEqual(['pf1_1', 'pf2_1', 'pf2_3', 'pf3_1'])
    expect(run('required=in:CUSTOM_PHYSNET0,CUSTOM_VNIC_TYPE_DIRECT')).toEqual(['sriov_agent', 'br_int'])
    expect(run('required=!HW_NUMA_ROOT&member_of=' + f.aggA)).toEqual(['ss1', 'cn1', 'cn2'])
    expect(run('member_of=!' + f.aggA).length).toBe(21)
    expect(run('in_tree=' + uuid() + '&required=BOGUS')).toEqual([])
    expect(err(() => run('required=STORAGE_DISK_SSD,BOGUS_TRAIT')).detail).toBe(
      'Invalid trait(s) in "required" parameter: No such trait(s): BOGUS_TRAIT.',
    )
    expect(err(() => run('resources=MYMISSINGCLASS:1')).detail).toBe(
      'Invalid resource class in resources parameter: No such resource class MYMISSINGCLASS.',
    )
  })
})
