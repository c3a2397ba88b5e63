import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
})
afterEach(() => api.close())

const RP = 'bbbbbbbb-0000-4000-8000-000000000001'
const P1 = 'dddddddd-0000-4000-8000-000000000001'
const P2 = 'dddddddd-0000-4000-8000-000000000002'
const U1 = 'eeeeeeee-0000-4000-8000-000000000001'
const U2 = 'eeeeeeee-0000-4000-8000-000000000002'
const consumer = (n: number) => `cccccccc-0000-4000-8000-${String(n).padStart(12, '0')}`

async function setup() {
  expect((await api.call('POST', '/resource_providers', {uuid: RP, name: 'rp'})).status).toBe(200)
  await api.store.write((s, now) => {
    const p = s.providers.get(RP)!
    const inv = {reserved: 0, min_unit: 1, step_size: 1, allocation_ratio: 1}
    s.setInventory(p, 'VCPU', {total: 64, max_unit: 64, ...inv})
    s.setInventory(p, 'DISK_GB', {total: 1000, max_unit: 1000, ...inv})
    s.setInventory(p, 'MEMORY_MB', {total: 1000, max_unit: 1000, ...inv})
    s.bumpProvider(p, now)
  })
}

async function allocate(n: number, project: string, user: string, resources: Record<string, number>, type?: string, mv = 'latest') {
  const body: Record<string, unknown> = {allocations: {[RP]: {resources}}, project_id: project, user_id: user, consumer_generation: null}
  if (type) body.consumer_type = type
  const r = await api.call('PUT', `/allocations/${consumer(n)}`, body, {'openstack-api-version': `placement ${mv}`})
  expect(r.status).toBe(204)
}

const usages = async (query: string, mv = 'latest') =>
  api.call('GET', `/usages?${query}`, undefined, {'openstack-api-version': `placement ${mv}`})

describe('GET /resource_providers/{uuid}/usages', () => {
  it('shows every inventory class, 0 when unused, and 404s for an unknown provider', async () => {
    await setup()
    const empty = await api.call('GET', `/resource_providers/${RP}/usages`)
    expect(empty.body).toEqual({resource_provider_generation: 1, usages: {VCPU: 0, DISK_GB: 0, MEMORY_MB: 0}})
    await allocate(1, P1, U1, {VCPU: 2}, 'INSTANCE')
    await allocate(2, P1, U1, {VCPU: 3, DISK_GB: 10}, 'INSTANCE')
    const r = await api.call('GET', `/resource_providers/${RP}/usages`)
    expect(r.body).toEqual({resource_provider_generation: 3, usages: {VCPU: 5, DISK_GB: 10, MEMORY_MB: 0}})
    expect(r.headers['cache-control']).toBe('no-cache')
    const old = await api.call('GET', `/resource_providers/${RP}/usages`, undefined, {'openstack-api-version': 'placement 1.14'})
    expect(old.headers['last-modified']).toBeUndefined()
    const missing = await api.call('GET', '/resource_providers/bbbbbbbb-0000-4000-8000-0000000000ff/usages')
    expect(missing.status).toBe(404)
    expect(missing.body.errors[0].detail).toContain('No resource provider with uuid bbbbbbbb-0000-4000-8000-0000000000ff found')
  })
})

describe('GET /usages', () => {
  beforeEach(async () => {
    await setup()
    await allocate(1, P1, U1, {VCPU: 1, DISK_GB: 10}, 'INSTANCE')
    await allocate(2, P1, U1, {VCPU: 2}, 'INSTANCE')
    await allocate(3, P1, U2, {VCPU: 4, MEMORY_MB: 100}, 'MIGRATION')
    await allocate(4, P1, U2, {DISK_GB: 5}, undefined, '1.37')
    await allocate(5, P2, U1, {VCPU: 8}, 'INSTANCE')
  })

  it('sums per project and user before 1.38', async () => {
    expect((await usages(`project_id=${P1}`, '1.9')).body).toEqual({usages: {VCPU: 7, DISK_GB: 15, MEMORY_MB: 100}})
    expect((await usages(`project_id=${P1}&user_id=${U2}`, '1.9')).body).toEqual({usages: {VCPU: 4, DISK_GB: 5, MEMORY_MB: 100}})
    expect((await usages('project_id=nobody', '1.9')).body).toEqual({usages: {}})
  })

  it('groups by consumer type from 1.38, with consumer counts', async () => {
    expect((await usages(`project_id=${P1}`)).body.usages).toEqual({
      INSTANCE: {VCPU: 3, DISK_GB: 10, consumer_count: 2},
      MIGRATION: {VCPU: 4, MEMORY_MB: 100, consumer_count: 1},
      unknown: {DISK_GB: 5, consumer_count: 1},
    })
    expect((await usages(`project_id=${P1}&consumer_type=all`)).body.usages).toEqual({
      all: {VCPU: 7, DISK_GB: 15, MEMORY_MB: 100, consumer_count: 4},
    })
    expect((await usages(`project_id=${P1}&consumer_type=unknown`)).body.usages).toEqual({unknown: {DISK_GB: 5, consumer_count: 1}})
    expect((await usages(`project_id=${P1}&consumer_type=MIGRATION&user_id=${U2}`)).body.usages).toEqual({
      MIGRATION: {VCPU: 4, MEMORY_MB: 100, consumer_count: 1},
    })
    expect((await usages(`project_id=${P1}&consumer_type=UNKNOWN`)).body.usages).toEqual({})
    expect((await usages(`project_id=${P1}&consumer_type=ALL`)).body.usages).toEqual({})
  })

  it('validates the query and exists from 1.9', async () => {
    expect((await usages(`project_id=${P1}`, '1.8')).status).toBe(404)
    const none = await usages('', '1.9')
    expect(none.status).toBe(400)
    expect(none.body.errors[0].detail).toContain("'project_id' is a required property")
    const extra = await usages(`project_id=${P1}&consumer_type=INSTANCE`, '1.37')
    expect(extra.status).toBe(400)
    expect(extra.body.errors[0].detail).toContain('Additional properties are not allowed')
    const bad = await usages(`project_id=${P1}&consumer_type=lower`)
    expect(bad.status).toBe(400)
  })
})
