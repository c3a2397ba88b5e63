import {randomUUID} from 'node:crypto'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
})
afterEach(() => api.close())

const dump = async () => (await api.call('GET', '/placemat/v1/providers')).body.providers

describe('POST /placemat/v1/batch', () => {
  it('applies many provider changes in one transaction', async () => {
    const root = randomUUID()
    const child = randomUUID()
    const agg = randomUUID()
    const r = await api.call('POST', '/placemat/v1/batch', {
      operations: [
        {op: 'ensure_trait', name: 'CUSTOM_RACK_LOCAL'},
        {op: 'create_provider', uuid: root, name: 'cn1'},
        {op: 'create_provider', uuid: child, name: 'cn1-numa0', parent_provider_uuid: root},
        {op: 'set_inventories', uuid: root, inventories: {DISK_GB: {total: 100}}},
        {op: 'set_inventories', uuid: child, inventories: {VCPU: {total: 8, allocation_ratio: 4}}},
        {op: 'set_traits', uuid: child, traits: ['HW_NUMA_ROOT', 'CUSTOM_RACK_LOCAL']},
        {op: 'set_aggregates', uuid: root, aggregates: [agg]},
      ],
    })
    expect(r.status).toBe(200)
    expect(r.body.results).toHaveLength(7)
    const providers = await dump()
    const c = providers.find((p: any) => p.uuid === child)
    expect(c).toMatchObject({root_provider_uuid: root, traits: expect.arrayContaining(['HW_NUMA_ROOT'])})
    expect(c.inventories.VCPU).toMatchObject({total: 8, allocation_ratio: 4, reserved: 0, min_unit: 1, step_size: 1})
    const tree = await api.call('GET', `/resource_providers?in_tree=${child}`)
    expect(tree.body.resource_providers).toHaveLength(2)
  })

  it("takes a body far over the API's 16 MiB limit (a whole cloud in one transaction)", async () => {
    const ops: unknown[] = []
    for (let i = 0; i < 60000; i++) {
      const uuid = randomUUID()
      ops.push(
        {op: 'create_provider', uuid, name: `host-${i}-${'x'.repeat(120)}`},
        {op: 'set_inventories', uuid, inventories: {VCPU: {total: 64}, MEMORY_MB: {total: 262144}}},
      )
    }
    const body = JSON.stringify({operations: ops})
    expect(body.length).toBeGreaterThan(18 * 1024 * 1024)
    const r = await api.call('POST', '/placemat/v1/batch', body)
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200)
    expect(api.store.state.providers.size).toBe(60000)
    // Placement's own routes keep the default limit.
    const big = JSON.stringify({name: 'x', uuid: randomUUID(), pad: 'y'.repeat(17 * 1024 * 1024)})
    expect((await api.call('POST', '/resource_providers', big)).status).toBe(413)
  }, 60_000)

  it('creates providers and reshapes onto them in one transaction, the reshape checked as POST /reshaper', async () => {
    const cn = randomUUID()
    const child = randomUUID()
    const consumer = randomUUID()
    await api.call('POST', '/resource_providers', {name: 'cn', uuid: cn})
    await api.call('PUT', `/resource_providers/${cn}/inventories`, {resource_provider_generation: 0, inventories: {VGPU: {total: 4}}})
    const own = {project_id: 'p', user_id: 'u', consumer_type: 'INSTANCE'}
    await api.call('PUT', `/allocations/${consumer}`, {allocations: {[cn]: {resources: {VGPU: 2}}}, consumer_generation: null, ...own})
    const reshape = (generation: number) => ({
      op: 'reshape',
      microversion: '1.38',
      inventories: {
        [cn]: {resource_provider_generation: generation, inventories: {}},
        [child]: {resource_provider_generation: 0, inventories: {VGPU: {total: 4}}},
      },
      allocations: {[consumer]: {allocations: {[child]: {resources: {VGPU: 2}}}, consumer_generation: 1, ...own}},
    })
    const create = {op: 'create_provider', uuid: child, name: 'cn-pgpu0', parent_provider_uuid: cn}
    // Bad shape (as POST /reshaper at 1.38 would say), then a stale generation: nothing written.
    const bad = await api.call('POST', '/placemat/v1/batch', {
      operations: [create, {...reshape(2), allocations: {[consumer]: {allocations: {}}}}],
    })
    expect(bad.status).toBe(400)
    expect(bad.body.errors[0].detail).toMatch(/operation 1 \(reshape\): JSON does not validate/)
    const stale = await api.call('POST', '/placemat/v1/batch', {operations: [create, reshape(1)]})
    expect(stale.status).toBe(409)
    expect(stale.body.errors[0].code).toBe('placement.concurrent_update')
    expect(api.store.state.providers.has(child)).toBe(false)
    const r = await api.call('POST', '/placemat/v1/batch', {operations: [create, reshape(2)]})
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const moved = (await api.call('GET', `/allocations/${consumer}`)).body.allocations
    expect(Object.keys(moved)).toEqual([child])
    expect(moved[child].resources).toEqual({VGPU: 2})
  })

  it('writes nothing when any operation fails', async () => {
    const before = await dump()
    const a = randomUUID()
    const r = await api.call('POST', '/placemat/v1/batch', {
      operations: [
        {op: 'create_provider', uuid: a, name: 'ok'},
        {op: 'set_inventories', uuid: a, inventories: {VCPU: {total: 8}}},
        {op: 'set_traits', uuid: a, traits: ['CUSTOM_NOT_DEFINED']},
      ],
    })
    expect(r.status).toBe(400)
    expect(r.body.errors[0].detail).toContain('operation 2 (set_traits')
    expect(await dump()).toEqual(before)
  })

  it('rejects unknown operations and bad fields before doing anything', async () => {
    const r = await api.call('POST', '/placemat/v1/batch', {operations: [{op: 'drop_everything'}]})
    expect(r.status).toBe(400)
    const bad = await api.call('POST', '/placemat/v1/batch', {operations: [{op: 'create_provider', uuid: 'nope', name: 'x'}]})
    expect(bad.status).toBe(400)
    expect(bad.body.errors[0].detail).toContain('JSON does not validate')
  })

  it('is not visible to Placement clients: unknown to Placement routes, admin only', async () => {
    const user = await api.call('GET', '/placemat/v1/providers', undefined, {'x-auth-token': 'user'})
    expect(user.status).toBe(403)
  })
})
