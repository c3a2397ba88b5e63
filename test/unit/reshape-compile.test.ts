/**
 * The reshape plan compiler, the generation filler and the check, on small States built
 * with stateFromSnapshot: a compute node with VGPU on itself and two instances holding it.
 */
import {describe, expect, it} from 'vitest'
import {ErrorCode, PlacementError} from '../../src/core/errors.js'
import {checkReshape} from '../../src/core/reshape/check.js'
import {ReshapePlanError, type CompiledReshape} from '../../src/core/reshape/compiled.js'
import {fillGenerations} from '../../src/core/reshape/generations.js'
import {compileReshapeMoves, consumersToRead, movesInPlace, type Move} from '../../src/core/reshape/moves.js'
import {createProvider} from '../../src/core/placement/providers.js'
import {reshape, type ReshaperBody} from '../../src/core/placement/reshaper.js'
import {stateFromSnapshot, type Snapshot} from '../../src/core/snapshot.js'
import type {State} from '../../src/core/state/state.js'
import {Changes} from '../../src/core/state/changes.js'
import {providerUuid} from '../../src/core/uuids.js'
import {CN, PGPU0, PGPU1, VM_A, VM_B} from '../helpers/vgpu-fixture.js'

const SHARED = '0d0d0d0d-0000-4000-8000-0000000000e5'
const PROJECT = 'f0f0f0f0-0000-4000-8000-000000000001'
const USER = 'e0e0e0e0-0000-4000-8000-000000000001'

/** compute-vgpu-1 (VCPU, MEMORY_MB, VGPU 8 max_unit 4), VM A holding VGPU 2, VM B VGPU 4 (and DISK_GB on a sharing provider). */
function vgpuState(): State {
  const instance = (
    uuid: string,
    resources: Record<string, number>,
    elsewhere: Record<string, {resources: Record<string, number>}> = {},
  ) => ({
    uuid,
    project_id: PROJECT,
    user_id: USER,
    consumer_type: 'INSTANCE',
    consumer_generation: 1,
    allocations: {[CN]: {resources}, ...elsewhere},
  })
  return stateFromSnapshot({
    classes: ['VCPU', 'MEMORY_MB', 'DISK_GB', 'VGPU'],
    providers: [
      {
        uuid: CN,
        name: 'compute-vgpu-1',
        generation: 3,
        inventories: {
          VCPU: {total: 32, reserved: 0, min_unit: 1, max_unit: 32, step_size: 1, allocation_ratio: 4},
          MEMORY_MB: {total: 65536, reserved: 512, min_unit: 1, max_unit: 65536, step_size: 1, allocation_ratio: 1},
          VGPU: {total: 8, reserved: 0, min_unit: 1, max_unit: 4, step_size: 1, allocation_ratio: 1},
        },
      },
      {
        uuid: SHARED,
        name: 'shared-disk',
        generation: 7,
        inventories: {DISK_GB: {total: 1000, reserved: 0, min_unit: 1, max_unit: 1000, step_size: 1, allocation_ratio: 1}},
      },
    ],
    consumers: [
      instance(VM_A, {VCPU: 4, MEMORY_MB: 8192, VGPU: 2}),
      instance(VM_B, {VCPU: 8, MEMORY_MB: 16384, VGPU: 4}, {[SHARED]: {resources: {DISK_GB: 20}}}),
    ],
  })
}

const compile = compileReshapeMoves

/** fixtures/reshape/vgpu.yaml */
const VGPU_MOVES: Move[] = [
  {
    from: 'compute-vgpu-1',
    to: 'compute-vgpu-1_pgpu0',
    uuid: PGPU0,
    resources: {VGPU: 4},
    inventory: {VGPU: {max_unit: 4}},
    consumers: [VM_A],
  },
  {from: 'compute-vgpu-1', to: 'compute-vgpu-1_pgpu1', uuid: PGPU1, resources: {VGPU: 4}, consumers: [VM_B]},
]

const planError = (fn: () => unknown): string => {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ReshapePlanError)
    return (err as Error).message
  }
  throw new Error('no ReshapePlanError')
}

describe('compileReshapeMoves', () => {
  it('moves VGPU and two consumers to new children, each consumer to its own', () => {
    const s = vgpuState()
    const c = compile(s, VGPU_MOVES)
    expect(c.creates).toEqual([
      {uuid: PGPU0, name: 'compute-vgpu-1_pgpu0', parent_provider_uuid: CN},
      {uuid: PGPU1, name: 'compute-vgpu-1_pgpu1', parent_provider_uuid: CN},
    ])
    expect(c).toMatchObject({consumerTypes: false, generationsFilled: true, roots: [CN]})
    expect(Object.keys(c.body.inventories)).toEqual([CN, PGPU0, PGPU1])
    expect(c.body.inventories[CN].resource_provider_generation).toBe(3)
    expect(Object.keys(c.body.inventories[CN].inventories).sort()).toEqual(['MEMORY_MB', 'VCPU'])
    expect(c.body.inventories[PGPU0]).toEqual({
      resource_provider_generation: 0,
      inventories: {VGPU: {total: 4, reserved: 0, min_unit: 1, max_unit: 4, step_size: 1, allocation_ratio: 1}},
    })
    expect(c.body.allocations[VM_A]).toEqual({
      allocations: {[CN]: {resources: {VCPU: 4, MEMORY_MB: 8192}}, [PGPU0]: {resources: {VGPU: 2}}},
      project_id: PROJECT,
      user_id: USER,
      consumer_generation: 1,
    })
    // Allocations elsewhere come along unchanged.
    expect(c.body.allocations[VM_B].allocations).toEqual({
      [CN]: {resources: {VCPU: 8, MEMORY_MB: 16384}},
      [SHARED]: {resources: {DISK_GB: 20}},
      [PGPU1]: {resources: {VGPU: 4}},
    })
  })

  it('all of a class with no consumers listed: every holder follows it', () => {
    const s = vgpuState()
    const c = compile(s, [{from: CN, to: 'gpu', resources: {VGPU: 'all'}}])
    // No uuid in the plan: the one its name gives, as apply gives one (the dry run shows what the run creates).
    const gpu = providerUuid('gpu')
    expect(compile(s, [{from: CN, to: 'gpu', resources: {VGPU: 'all'}}]).creates[0].uuid).toBe(gpu)
    expect(c.creates).toEqual([{uuid: gpu, name: 'gpu', parent_provider_uuid: CN}])
    expect(c.body.inventories[gpu].inventories).toEqual({
      VGPU: {total: 8, reserved: 0, min_unit: 1, max_unit: 4, step_size: 1, allocation_ratio: 1},
    })
    expect(c.body.inventories[CN].inventories.VGPU).toBeUndefined()
    expect(Object.keys(c.body.allocations)).toEqual([VM_A, VM_B])
    expect(c.body.allocations[VM_A].allocations[gpu]).toEqual({resources: {VGPU: 2}})
    expect(c.body.allocations[VM_B].allocations[gpu]).toEqual({resources: {VGPU: 4}})
  })

  it('part of a class to an existing provider: the source keeps the rest, unlisted holders stay', () => {
    const s = vgpuState()
    const c = compile(s, [{from: 'compute-vgpu-1', to: 'shared-disk', resources: {VGPU: 2}, consumers: [VM_A]}])
    expect(c.creates).toEqual([])
    expect(c.roots).toEqual([CN, SHARED])
    expect(c.body.inventories[CN].inventories.VGPU).toMatchObject({total: 6})
    expect(c.body.inventories[SHARED]).toMatchObject({
      resource_provider_generation: 7,
      inventories: {DISK_GB: {total: 1000}, VGPU: {total: 2, max_unit: 2}},
    })
    expect(Object.keys(c.body.allocations)).toEqual([VM_A])
  })

  it('rejects an ambiguous plan', () => {
    const s = vgpuState()
    expect(
      planError(() =>
        compile(s, [
          {from: CN, to: 'gpu0', resources: {VGPU: 4}},
          {from: CN, to: 'gpu1', resources: {VGPU: 4}},
        ]),
      ),
    ).toBe('VGPU from compute-vgpu-1 is split across 2 providers: each move must list its consumers')
    expect(planError(() => compile(s, [{from: CN, to: 'gpu', resources: {VGPU: 4}}]))).toBe(
      'part of VGPU leaves compute-vgpu-1 (4 of 8): list the consumers that follow it (consumers: [...])',
    )
    expect(planError(() => compile(s, [{from: CN, to: 'gpu', resources: {VGPU: 'all'}, consumers: [VM_A]}]))).toBe(
      `all of VGPU leaves compute-vgpu-1, but consumer(s) ${VM_B} holding it are in no move's consumers`,
    )
    expect(
      planError(() =>
        compile(s, [
          {from: CN, to: 'gpu0', resources: {VGPU: 4}, consumers: [VM_A]},
          {from: CN, to: 'gpu1', resources: {VGPU: 4}, consumers: [VM_A, VM_B]},
        ]),
      ),
    ).toBe(`consumer ${VM_A} is listed in two moves of VGPU from compute-vgpu-1`)
  })

  it('rejects a plan that does not fit the state', () => {
    const s = vgpuState()
    expect(planError(() => compile(s, [{from: 'nowhere', to: 'gpu', resources: {VGPU: 1}}]))).toBe('moves[0]: no provider nowhere')
    expect(planError(() => compile(s, [{from: CN, to: 'gpu', resources: {PCPU: 1}}]))).toBe('compute-vgpu-1 has no PCPU inventory to move')
    expect(planError(() => compile(s, [{from: CN, to: 'gpu', resources: {VGPU: 9}, consumers: []}]))).toBe(
      'VGPU from compute-vgpu-1: moving 9 but the total is 8',
    )
    expect(planError(() => compile(s, [{from: CN, to: PGPU0, resources: {VGPU: 1}}]))).toMatch(
      /^moves\[0\]: no provider .*give its name in "to"/,
    )
  })

  it('names the holders to read in full: those of the moved classes on the sources', () => {
    const s = vgpuState()
    expect(consumersToRead(s, VGPU_MOVES)).toEqual([VM_A, VM_B])
    expect(consumersToRead(s, [{from: 'shared-disk', to: 'x', resources: {DISK_GB: 1}}])).toEqual([VM_B])
    expect(consumersToRead(s, [{from: 'nowhere', to: 'x', resources: {VGPU: 1}}])).toEqual([])
  })
})

describe('fillGenerations', () => {
  const body = (): ReshaperBody =>
    ({
      inventories: {[CN]: {inventories: {VCPU: {total: 32}}}},
      allocations: {[VM_A]: {allocations: {[CN]: {resources: {VCPU: 4}}}, project_id: PROJECT, user_id: USER}},
    }) as unknown as ReshaperBody

  it('fills the generations left out from the state, and leaves the raw body alone', () => {
    const s = vgpuState()
    const raw = body()
    const c = fillGenerations(s, raw)
    expect(c.body.inventories[CN].resource_provider_generation).toBe(3)
    expect(c.body.allocations[VM_A].consumer_generation).toBe(1)
    expect(c).toMatchObject({creates: [], consumerTypes: false, generationsFilled: true, roots: [CN]})
    expect(raw.inventories[CN].resource_provider_generation).toBeUndefined()
  })

  it('generations given by the body are not ours to re-plan; consumer types select 1.38', () => {
    const s = vgpuState()
    const raw = body()
    raw.inventories[CN].resource_provider_generation = 1
    raw.allocations[VM_A].consumer_type = 'INSTANCE'
    const c = fillGenerations(s, raw)
    expect(c.body.inventories[CN].resource_provider_generation).toBe(1)
    expect(c.body.allocations[VM_A].consumer_generation).toBe(1)
    expect(c).toMatchObject({generationsFilled: false, consumerTypes: true})
  })

  it('a consumer the state does not know gets generation null; an unknown provider none', () => {
    const s = vgpuState()
    const raw = body()
    const other = 'c0c0c0c0-0000-4000-8000-00000000000c'
    const missing = '0d0d0d0d-0000-4000-8000-0000000000ff'
    raw.allocations[other] = {...raw.allocations[VM_A]}
    raw.inventories[missing] = {inventories: {}} as unknown as ReshaperBody['inventories'][string]
    const c = fillGenerations(s, raw)
    expect(c.body.allocations[other].consumer_generation).toBeNull()
    expect(c.body.inventories[missing].resource_provider_generation).toBeUndefined()
    expect(c.roots).toEqual([CN])
  })
})

describe('checkReshape', () => {
  it('shows the trees before and after and the allocations that move, on a copy', () => {
    const s = vgpuState()
    const r = checkReshape(s, compile(s, VGPU_MOVES))
    expect(r.error).toBeNull()
    expect(r.conflicts).toEqual([])
    expect(r.before.map((p) => [p.name, p.depth, p.generation])).toEqual([
      ['compute-vgpu-1', 0, 3],
      ['shared-disk', 0, 7],
    ])
    expect(r.before[0].inventories.VGPU).toMatchObject({total: 8, capacity: 8, used: 6})
    expect(r.after!.map((p) => [p.name, p.depth, p.created])).toEqual([
      ['compute-vgpu-1', 0, false],
      ['compute-vgpu-1_pgpu0', 1, true],
      ['compute-vgpu-1_pgpu1', 1, true],
      ['shared-disk', 0, false],
    ])
    expect(r.after![1].inventories.VGPU).toMatchObject({total: 4, capacity: 4, used: 2})
    expect(r.moves).toEqual([
      {consumer: VM_A, resource_class: 'VGPU', amount: 2, from: CN, to: PGPU0},
      {consumer: VM_B, resource_class: 'VGPU', amount: 4, from: CN, to: PGPU1},
    ])
    // The state checked on is left as it was.
    expect(s.providers.size).toBe(2)
    expect(s.providers.get(CN)!.generation).toBe(3)
    expect(s.providers.get(CN)!.inventories.get('VGPU')!.total).toBe(8)
    expect(s.consumers.get(VM_A)!.allocations.get(CN)!.get('VGPU')).toBe(2)
  })

  it('reports a capacity conflict and the error the reshaper raises', () => {
    const s = vgpuState()
    const c = compile(s, [
      {from: CN, to: 'gpu0', uuid: PGPU0, resources: {VGPU: 3}, inventory: {VGPU: {max_unit: 4}}, consumers: [VM_B]},
      {from: CN, to: 'gpu1', uuid: PGPU1, resources: {VGPU: 5}, consumers: [VM_A]},
    ])
    const r = checkReshape(s, c)
    expect(r.after).toBeNull()
    expect(r.error).toBeInstanceOf(PlacementError)
    expect(r.error).toMatchObject({status: 409})
    expect(r.conflicts).toEqual([
      {kind: 'capacity', message: 'VGPU on gpu0: 4 allocated, capacity would be 3'},
      {
        kind: 'capacity',
        message: `Unable to allocate inventory: Unable to create allocation for 'VGPU' on resource provider '${PGPU0}'. The requested amount would exceed the capacity.`,
      },
    ])
  })

  it("reports stale generations, then the reshaper's concurrent update", () => {
    const s = vgpuState()
    const c: CompiledReshape = compile(s, VGPU_MOVES)
    c.body.inventories[CN].resource_provider_generation = 1
    c.body.allocations[VM_A].consumer_generation = 7
    const r = checkReshape(s, c)
    expect(r.error).toMatchObject({status: 409, code: ErrorCode.CONCURRENT_UPDATE})
    expect(r.conflicts).toEqual([
      {kind: 'generation', message: `provider compute-vgpu-1 (${CN}): the plan has generation 1, it is now 3`},
      {kind: 'generation', message: `consumer ${VM_A}: the plan has generation 7, it is now 1`},
      {kind: 'generation', message: `resource provider generation conflict for provider ${CN}: actual: 3, given: 1`},
    ])
  })

  it('dropping a class still allocated is inventory in use', () => {
    const s = vgpuState()
    const inv = Object.fromEntries([...s.providers.get(CN)!.inventories].filter(([rc]) => rc !== 'VGPU'))
    const c = fillGenerations(s, {inventories: {[CN]: {inventories: inv}}, allocations: {}} as unknown as ReshaperBody)
    const r = checkReshape(s, c)
    expect(r.error).toMatchObject({status: 409, code: ErrorCode.INVENTORY_INUSE})
    expect(r.conflicts.map((x) => x.kind)).toEqual(['invalid', 'inventory_in_use'])
  })
})

describe('movesInPlace', () => {
  it('is false before the reshape and true once it is applied (a plan run again is done)', () => {
    const s = vgpuState()
    expect(movesInPlace(s, VGPU_MOVES)).toBe(false)
    const compiled = compile(s, VGPU_MOVES)
    const after = checkReshape(s, compiled)
    expect(after.error).toBeNull()
    // The state after: rebuild it as the command would read it again.
    const applied = stateFromSnapshot({
      classes: ['VCPU', 'MEMORY_MB', 'DISK_GB', 'VGPU'],
      providers: [
        {uuid: CN, name: 'compute-vgpu-1', generation: 4, inventories: {VCPU: {total: 32}, MEMORY_MB: {total: 65536}}},
        {
          uuid: PGPU0,
          name: 'compute-vgpu-1_pgpu0',
          generation: 1,
          parent_provider_uuid: CN,
          root_provider_uuid: CN,
          inventories: {VGPU: {total: 4}},
        },
        {
          uuid: PGPU1,
          name: 'compute-vgpu-1_pgpu1',
          generation: 1,
          parent_provider_uuid: CN,
          root_provider_uuid: CN,
          inventories: {VGPU: {total: 4}},
        },
      ],
      consumers: [
        {uuid: VM_A, allocations: {[CN]: {resources: {VCPU: 4}}, [PGPU0]: {resources: {VGPU: 2}}}},
        {uuid: VM_B, allocations: {[CN]: {resources: {VCPU: 8}}, [PGPU1]: {resources: {VGPU: 4}}}},
      ],
    })
    expect(movesInPlace(applied, VGPU_MOVES)).toBe(true)
    // A target that got less than the plan moves is not done.
    expect(movesInPlace(applied, [{...VGPU_MOVES[0], resources: {VGPU: 8}}])).toBe(false)
  })
})

describe('movesInPlace: part of an idle class', () => {
  const CN_IDLE = '0d0d0d0d-0000-4000-8000-0000000000c0'
  const GPU0 = '0d0d0d0d-0000-4000-8000-0000000000c1'
  /** cn with a child gpu0 holding VGPU 8 that nothing uses (and `extra` providers). */
  const idleState = (extra: Snapshot['providers'] = []) =>
    stateFromSnapshot({
      classes: ['VCPU', 'VGPU'],
      providers: [
        {uuid: CN_IDLE, name: 'cn', generation: 1, inventories: {VCPU: {total: 8}}},
        {
          uuid: GPU0,
          name: 'gpu0',
          generation: 1,
          parent_provider_uuid: CN_IDLE,
          root_provider_uuid: CN_IDLE,
          inventories: {VGPU: {total: 8}},
        },
        ...extra,
      ],
      consumers: [],
    })
  /** The state once the reshape is written, as the reshaper writes it. */
  const written = (s: State, c: CompiledReshape): State => {
    s.changes = new Changes()
    for (const p of c.creates) createProvider(s, 0, p)
    reshape(s, 0, c.body, {consumerTypes: false})
    s.changes = null
    return s
  }
  const MOVE: Move[] = [{from: 'gpu0', to: 'gpu1', parent: 'cn', resources: {VGPU: 2}}]

  it('a run again finds the provider the plan creates holding what it was given: done, not moved again', () => {
    const s = idleState()
    expect(movesInPlace(s, MOVE)).toBe(false)
    const c = compile(s, MOVE)
    expect(c.creates).toEqual([{uuid: providerUuid('gpu1'), name: 'gpu1', parent_provider_uuid: CN_IDLE}])
    const after = written(s, c)
    expect(after.providers.get(GPU0)!.inventories.get('VGPU')!.total).toBe(6)
    expect(movesInPlace(after, MOVE)).toBe(true)
    // The same plan with two moves into gpu1 (from gpu0 twice) is done only at their sum.
    expect(movesInPlace(after, [...MOVE, ...MOVE])).toBe(false)
  })

  it('a provider that is not the one the plan creates is not taken for it', () => {
    const gpu1 = (uuid: string, total: number, parent = CN_IDLE) => ({
      uuid,
      name: 'gpu1',
      generation: 1,
      parent_provider_uuid: parent,
      root_provider_uuid: parent === GPU0 ? CN_IDLE : parent,
      inventories: {VGPU: {total}},
    })
    // Another uuid (an existing gpu1 the plan adds to), another amount, another parent.
    expect(movesInPlace(idleState([gpu1('0d0d0d0d-0000-4000-8000-0000000000c2', 2)]), MOVE)).toBe(false)
    expect(movesInPlace(idleState([gpu1(providerUuid('gpu1'), 4)]), MOVE)).toBe(false)
    expect(movesInPlace(idleState([gpu1(providerUuid('gpu1'), 2, GPU0)]), MOVE)).toBe(false)
    expect(movesInPlace(idleState([gpu1(providerUuid('gpu1'), 2)]), MOVE)).toBe(true)
  })
})
