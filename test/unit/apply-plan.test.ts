/** `placemat apply`'s planner on small States: what it changes, in what order, and what it refuses. */
import {describe, expect, it} from 'vitest'
import {planApply} from '../../src/core/apply-plan/plan.js'
import {ApplyRefused, type ApplyFile, type DeclaredProvider} from '../../src/core/apply-plan/types.js'
import {nodeUuid} from '../../src/core/topology.js'
import {aggregateUuid, providerUuid} from '../../src/core/uuids.js'
import {U, cloud, inv} from './fixtures.js'

const file = (providers: DeclaredProvider[], more: Partial<ApplyFile> = {}): ApplyFile => ({
  resourceClasses: [],
  traits: [],
  aggregateNames: new Map(),
  providers,
  ...more,
})
const at = (name: string, more: Partial<DeclaredProvider> = {}): DeclaredProvider => ({where: `providers (${name})`, name, ...more})

describe('planApply', () => {
  it('creates what is missing, parents before children, names into uuids, custom names first', () => {
    const s = cloud([])
    const plan = planApply(
      file([
        at('cn1', {inventories: {VCPU: inv(8), CUSTOM_FPGA: inv(2)}, aggregates: ['rack-a']}),
        at('cn1-numa0', {parentIndex: 0, traits: ['CUSTOM_X']}),
      ]),
      s,
      {prune: false},
    )
    const cn1 = providerUuid('cn1')
    expect(plan.summary).toEqual({create: 2, update: 0, delete: 0, resource_classes: 1, traits: 1, aggregate_names: 0})
    expect(plan.stages().names.map((o) => o.op)).toEqual(['ensure_resource_class', 'ensure_trait'])
    expect(plan.stages().creates).toEqual([
      [{op: 'create_provider', uuid: cn1, name: 'cn1', parent_provider_uuid: null}],
      [{op: 'create_provider', uuid: providerUuid('cn1-numa0'), name: 'cn1-numa0', parent_provider_uuid: cn1}],
    ])
    expect(plan.stages().writes[0]).toEqual([
      {op: 'set_inventories', uuid: cn1, inventories: {VCPU: inv(8), CUSTOM_FPGA: inv(2)}},
      {op: 'set_aggregates', uuid: cn1, aggregates: [aggregateUuid('rack-a')]},
    ])
    expect(plan.labels.get(aggregateUuid('rack-a'))).toBe('rack-a')
    // The operations, made as they are walked, are the stages in order, as often as asked.
    const st = plan.stages()
    const staged = [...st.names, ...st.renames, ...st.creates.flat(), ...st.reparents, ...st.writes.flat(), ...st.deletes.flat()]
    expect([...plan.operations()]).toEqual(staged)
    expect([...plan.operations()]).toEqual(staged)
    expect(plan.operationCount).toBe(staged.length)
  })

  it('an up-to-date provider plans nothing; a changed one carries its generation on its first write only', () => {
    const s = cloud([{name: 'cn1', inventories: {VCPU: 8}, traits: ['HW_CPU_X86_AVX2']}])
    expect(planApply(file([at('cn1', {inventories: {VCPU: inv(8)}, traits: ['HW_CPU_X86_AVX2']})]), s, {prune: false}).operationCount).toBe(
      0,
    )
    const plan = planApply(file([at('cn1', {inventories: {VCPU: inv(16)}, traits: []})]), s, {prune: false})
    expect(plan.changes).toMatchObject([
      {action: 'update', inventories: {changed: {VCPU: {total: [8, 16], max_unit: [8, 16]}}}, traits: {removed: ['HW_CPU_X86_AVX2']}},
    ])
    expect([...plan.operations()]).toEqual([
      {op: 'set_inventories', uuid: U(1), inventories: {VCPU: inv(16)}, generation: 1},
      {op: 'set_traits', uuid: U(1), traits: []},
    ])
  })

  it('keeps the traits the compute service owns (COMPUTE_STATUS_DISABLED) unless the file removes them with !TRAIT', () => {
    const traits = ['HW_CPU_X86_AVX2', 'MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_STATUS_DISABLED', 'COMPUTE_NET_VIF_MODEL_VIRTIO']
    const s = cloud([{name: 'cn1', traits: ['HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED', 'COMPUTE_NET_VIF_MODEL_VIRTIO']}], {traits})
    // The same file again: a disabled host stays disabled.
    expect(planApply(file([at('cn1', {traits: ['HW_CPU_X86_AVX2']})]), s, {prune: false}).operationCount).toBe(0)
    const other = planApply(file([at('cn1', {traits: ['MISC_SHARES_VIA_AGGREGATE']})]), s, {prune: false})
    expect([...other.operations()]).toEqual([
      {
        op: 'set_traits',
        uuid: U(1),
        traits: ['COMPUTE_NET_VIF_MODEL_VIRTIO', 'COMPUTE_STATUS_DISABLED', 'MISC_SHARES_VIA_AGGREGATE'],
        generation: 1,
      },
    ])
    const enable = planApply(file([at('cn1', {traits: ['HW_CPU_X86_AVX2', '!COMPUTE_STATUS_DISABLED']})]), s, {prune: false})
    expect(enable.changes).toMatchObject([{action: 'update', traits: {removed: ['COMPUTE_STATUS_DISABLED']}}])
  })

  it("keeps a host's rack, row and room aggregates that the file does not list", () => {
    const rack = nodeUuid('rack', 'k1')
    const s = cloud([{name: 'cn1', aggregates: [rack, U(99)]}], {topology: [{uuid: rack, name: 'k1', level: 'rack', parent: null}]})
    const plan = planApply(file([at('cn1', {aggregates: []})]), s, {prune: false})
    expect([...plan.operations()]).toEqual([{op: 'set_aggregates', uuid: U(1), aggregates: [rack], generation: 1}])
  })

  it('renames free a name before another provider takes it; a cycle is refused', () => {
    const s = cloud([{name: 'a'}, {name: 'b'}])
    const plan = planApply(file([at('b', {uuid: U(1)}), at('c', {uuid: U(2)})]), s, {prune: false})
    expect(plan.stages().renames.map((o) => 'name' in o && o.name)).toEqual(['c', 'b'])
    expect(() => planApply(file([at('b', {uuid: U(1)}), at('a', {uuid: U(2)})]), s, {prune: false})).toThrow(/cycle of renames/)
  })

  it('--prune deletes deepest first and refuses providers with allocations (a conflict, not a file problem)', () => {
    const s = cloud([{name: 'keep'}, {name: 'gone'}, {name: 'gone-child', parent: 'gone'}])
    const plan = planApply(file([at('keep')]), s, {prune: true})
    expect(plan.stages().deletes).toEqual([[{op: 'delete_provider', uuid: U(3)}], [{op: 'delete_provider', uuid: U(2)}]])
    const busy = cloud([{name: 'keep'}, {name: 'busy', inventories: {VCPU: 4}, usages: {VCPU: 1}}])
    try {
      planApply(file([at('keep')]), busy, {prune: true})
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(ApplyRefused)
      expect((err as ApplyRefused).allocationConflict).toBe(true)
    }
  })

  it('lists every problem at once: unknown classes and traits, unknown parents, loops, duplicate names', () => {
    const s = cloud([])
    try {
      planApply(
        file([
          at('x', {inventories: {NOT_A_CLASS: inv(1)}, traits: ['NOT_A_TRAIT'], parentRef: 'nowhere'}),
          at('x'),
          at('p', {parentRef: 'q'}),
          at('q', {parentRef: 'p'}),
        ]),
        s,
        {prune: false},
      )
      expect.unreachable()
    } catch (err) {
      const e = err as ApplyRefused
      expect(e.allocationConflict).toBe(false)
      expect(e.problems.join('\n')).toMatch(/appears twice/)
      expect(e.problems.join('\n')).toMatch(/parent 'nowhere'/)
      expect(e.problems.join('\n')).toMatch(/unknown resource class NOT_A_CLASS/)
      expect(e.problems.join('\n')).toMatch(/unknown trait NOT_A_TRAIT/)
      expect(e.problems.join('\n')).toMatch(/would form a loop/)
    }
  })

  it('refuses inventories a write would refuse, every one, naming the provider and the class', () => {
    const s = cloud([])
    let refused: ApplyRefused | undefined
    try {
      planApply(
        file([
          at('cn-01', {inventories: {VCPU: inv(-1, {max_unit: 8}), MEMORY_MB: {...inv(1024), reserved: 2048}}}),
          at('cn-02', {inventories: {DISK_GB: {...inv(10), step_size: 0, max_unit: 2 ** 31}, VCPU: {...inv(4), allocation_ratio: -1}}}),
          at('cn-03', {inventories: {VCPU: {...inv(4), reserved: 4}}}),
        ]),
        s,
        {prune: false},
      )
    } catch (err) {
      refused = err as ApplyRefused
    }
    expect(refused).toBeInstanceOf(ApplyRefused)
    expect(refused!.allocationConflict).toBe(false)
    expect(refused!.problems).toEqual([
      'provider cn-01: inventory VCPU: total -1 is below 1',
      'provider cn-01: inventory MEMORY_MB: reserved 2048 is above total 1024',
      'provider cn-02: inventory DISK_GB: max_unit 2147483648 is above 2147483647',
      'provider cn-02: inventory DISK_GB: step_size 0 is below 1',
      'provider cn-02: inventory VCPU: allocation_ratio -1 leaves a capacity below 0',
    ])
  })
})
