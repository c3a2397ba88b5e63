import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {Inventory} from '../../src/core/state/state.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
})
afterEach(() => api.close())

const CN = 'aaaaaaaa-0000-4000-8000-000000000001'
const GPU0 = 'aaaaaaaa-0000-4000-8000-000000000010'
const GPU1 = 'aaaaaaaa-0000-4000-8000-000000000011'
const MISSING = 'aaaaaaaa-0000-4000-8000-0000000000ff'
const VM1 = 'cccccccc-0000-4000-8000-000000000001'
const VM2 = 'cccccccc-0000-4000-8000-000000000002'
const PROJECT = 'dddddddd-0000-4000-8000-000000000001'
const USER = 'eeeeeeee-0000-4000-8000-000000000001'

const inv = (total: number, extra: Partial<Inventory> = {}) => ({total, ...extra})

async function ok(method: string, url: string, body?: unknown) {
  const r = await api.call(method, url, body)
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300)
  return r.body
}

const gen = async (uuid: string) => (await ok('GET', `/resource_providers/${uuid}`)).generation as number
const consumerGen = async (uuid: string) => (await ok('GET', `/allocations/${uuid}`)).consumer_generation as number

/**
 * A compute node with VCPU and VGPU, two children without inventory, and two
 * instances each holding VCPU and VGPU on the compute node.
 */
async function setup() {
  await ok('POST', '/resource_providers', {uuid: CN, name: 'cn1'})
  await ok('POST', '/resource_providers', {uuid: GPU0, name: 'cn1_pgpu0', parent_provider_uuid: CN})
  await ok('POST', '/resource_providers', {uuid: GPU1, name: 'cn1_pgpu1', parent_provider_uuid: CN})
  await ok('PUT', `/resource_providers/${CN}/inventories`, {
    resource_provider_generation: 0,
    inventories: {VCPU: inv(16), VGPU: inv(8, {max_unit: 4})},
  })
  for (const [vm, vgpu] of [
    [VM1, 4],
    [VM2, 2],
  ] as const) {
    await ok('PUT', `/allocations/${vm}`, {
      allocations: {[CN]: {resources: {VCPU: 2, VGPU: vgpu}}},
      project_id: PROJECT,
      user_id: USER,
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    })
  }
}

/** Everything observable about the three providers and two consumers. */
async function snapshot() {
  const out: Record<string, unknown> = {}
  for (const rp of [CN, GPU0, GPU1]) {
    out[rp] = {
      provider: await ok('GET', `/resource_providers/${rp}`),
      inventories: await ok('GET', `/resource_providers/${rp}/inventories`),
      usages: await ok('GET', `/resource_providers/${rp}/usages`),
      allocations: await ok('GET', `/resource_providers/${rp}/allocations`),
    }
  }
  for (const c of [VM1, VM2, 'cccccccc-0000-4000-8000-0000000000ee']) out[c] = await ok('GET', `/allocations/${c}`)
  return out
}

/** The reshape that moves VGPU to two children, VM1 to GPU0 and VM2 to GPU1. */
async function moveBody(overrides: {cnGen?: number; gpu0Gen?: number; vm1Gen?: number | null; vm2Vgpu?: number} = {}) {
  return {
    inventories: {
      [CN]: {resource_provider_generation: overrides.cnGen ?? (await gen(CN)), inventories: {VCPU: inv(16)}},
      [GPU0]: {resource_provider_generation: overrides.gpu0Gen ?? (await gen(GPU0)), inventories: {VGPU: inv(4)}},
      [GPU1]: {resource_provider_generation: await gen(GPU1), inventories: {VGPU: inv(4)}},
    },
    allocations: {
      [VM1]: {
        allocations: {[CN]: {resources: {VCPU: 2}}, [GPU0]: {resources: {VGPU: 4}}},
        project_id: PROJECT,
        user_id: USER,
        consumer_generation: overrides.vm1Gen === undefined ? await consumerGen(VM1) : overrides.vm1Gen,
        consumer_type: 'INSTANCE',
      },
      [VM2]: {
        allocations: {[CN]: {resources: {VCPU: 2}}, [GPU1]: {resources: {VGPU: overrides.vm2Vgpu ?? 2}}},
        project_id: PROJECT,
        user_id: USER,
        consumer_generation: await consumerGen(VM2),
        consumer_type: 'INSTANCE',
      },
    },
  }
}

// POST /reshaper is the service role's once new defaults are enforced (the default): asked as
// an admin holding the service role too.
const reshape = (body: unknown, mv = 'latest') =>
  api.call('POST', '/reshaper', body, {'openstack-api-version': `placement ${mv}`, 'x-roles': 'admin,service'})

describe('POST /reshaper', () => {
  beforeEach(setup)

  it('moves inventory and allocations to child providers in one write', async () => {
    const before = {cn: await gen(CN), gpu0: await gen(GPU0), vm1: await consumerGen(VM1)}
    const r = await reshape(await moveBody())
    expect(r.status, JSON.stringify(r.body)).toBe(204)
    expect((await ok('GET', `/resource_providers/${CN}/inventories`)).inventories).toEqual({
      VCPU: expect.objectContaining({total: 16}),
    })
    expect((await ok('GET', `/resource_providers/${CN}/usages`)).usages).toEqual({VCPU: 4})
    expect((await ok('GET', `/resource_providers/${GPU0}/usages`)).usages).toEqual({VGPU: 4})
    expect((await ok('GET', `/resource_providers/${GPU1}/usages`)).usages).toEqual({VGPU: 2})
    expect((await ok('GET', `/allocations/${VM1}`)).allocations).toEqual({
      [CN]: {resources: {VCPU: 2}, generation: expect.any(Number)},
      [GPU0]: {resources: {VGPU: 4}, generation: expect.any(Number)},
    })
    // Interim inventory, allocations, final inventory: three bumps each; the consumer once.
    expect(await gen(CN)).toBe(before.cn + 3)
    expect(await gen(GPU0)).toBe(before.gpu0 + 3)
    expect(await consumerGen(VM1)).toBe(before.vm1 + 1)
  })

  it('below 1.30 there is no reshaper', async () => {
    expect((await reshape(await moveBody(), '1.29')).status).toBe(404)
  })

  it('a stale provider generation changes nothing', async () => {
    const before = await snapshot()
    const r = await reshape(await moveBody({cnGen: 0}))
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.concurrent_update')
    expect(r.body.errors[0].detail).toContain(
      `resource provider generation conflict for provider ${CN}: actual: ${(before as any)[CN].provider.generation}, given: 0`,
    )
    expect(await snapshot()).toEqual(before)
  })

  it('a stale consumer generation changes nothing', async () => {
    const before = await snapshot()
    const r = await reshape(await moveBody({vm1Gen: null}))
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.concurrent_update')
    expect(r.body.errors[0].detail).toContain('consumer generation conflict - expected 1 but got None')
    expect(await snapshot()).toEqual(before)
  })

  it('an overcommit changes nothing (the failure comes after the interim inventory was set)', async () => {
    const before = await snapshot()
    const r = await reshape(await moveBody({vm2Vgpu: 5}))
    expect(r.status).toBe(409)
    expect(r.body.errors[0].detail).toContain('Unable to allocate inventory')
    expect(await snapshot()).toEqual(before)
  })

  it('an unknown provider in inventories changes nothing', async () => {
    const before = await snapshot()
    const body = await moveBody()
    ;(body.inventories as any)[MISSING] = {resource_provider_generation: 0, inventories: {VGPU: inv(1)}}
    const r = await reshape(body)
    expect(r.status).toBe(400)
    expect(r.body.errors[0].code).toBe('placement.resource_provider.not_found')
    expect(r.body.errors[0].detail).toContain(`Resource provider ${MISSING} in inventories not found`)
    expect(await snapshot()).toEqual(before)
  })

  it('an unknown provider in allocations changes nothing', async () => {
    const before = await snapshot()
    const body = await moveBody()
    ;(body.allocations[VM2].allocations as any)[MISSING] = {resources: {VGPU: 1}}
    const r = await reshape(body)
    expect(r.status).toBe(400)
    expect(r.body.errors[0].detail).toContain(`Allocation for resource provider '${MISSING}' that does not exist.`)
    expect(await snapshot()).toEqual(before)
  })

  it('an unknown resource class changes nothing', async () => {
    const before = await snapshot()
    const body = await moveBody()
    ;(body.inventories[GPU1].inventories as any).CUSTOM_NOPE = inv(1)
    const r = await reshape(body)
    expect(r.status).toBe(400)
    expect(r.body.errors[0].detail).toContain('malformed reshaper data: No such resource class CUSTOM_NOPE.')
    expect(await snapshot()).toEqual(before)
  })

  it('dropping inventory that keeps allocations is inventory.inuse and changes nothing', async () => {
    const before = await snapshot()
    const body = await moveBody()
    // VM2 keeps its VGPU on the compute node, whose final inventory has no VGPU.
    body.allocations[VM2].allocations = {[CN]: {resources: {VCPU: 2, VGPU: 2}}} as any
    const r = await reshape(body)
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.inventory.inuse')
    expect(r.body.errors[0].detail).toContain(`update conflict: Inventory for 'VGPU' on resource provider '${CN}' in use.`)
    expect(await snapshot()).toEqual(before)
  })

  it('consumer_type only from 1.38, required there', async () => {
    const body = await moveBody()
    let r = await reshape(body, '1.37')
    expect(r.status).toBe(400)
    expect(r.body.errors[0].detail).toContain("'consumer_type' was unexpected")
    delete (body.allocations[VM1] as any).consumer_type
    r = await reshape(body, '1.38')
    expect(r.status).toBe(400)
    expect(r.body.errors[0].detail).toContain("'consumer_type' is a required property")
  })
})
