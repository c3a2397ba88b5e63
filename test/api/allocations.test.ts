import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {Inventory} from '../../src/core/state/state.js'
import {pythonIntSetOrder} from '../../src/core/placement/allocations.js'
import {inv, testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
})
afterEach(() => api.close())

const RP1 = 'bbbbbbbb-0000-4000-8000-000000000001'
const RP2 = 'bbbbbbbb-0000-4000-8000-000000000002'
const MISSING_RP = 'bbbbbbbb-0000-4000-8000-0000000000ff'
const C1 = 'cccccccc-0000-4000-8000-000000000001'
const C2 = 'cccccccc-0000-4000-8000-000000000002'
const C3 = 'cccccccc-0000-4000-8000-000000000003'
const PROJECT = 'dddddddd-0000-4000-8000-000000000001'
const USER = 'eeeeeeee-0000-4000-8000-000000000001'

/** Creates a provider over HTTP and gives it inventory straight through the store (bumping its generation once). */
async function provider(uuid: string, name: string, inventories: Record<string, Inventory>) {
  const r = await api.call('POST', '/resource_providers', {uuid, name})
  expect(r.status).toBe(200)
  await api.store.write((s, now) => {
    const p = s.providers.get(uuid)!
    for (const [rc, i] of Object.entries(inventories)) s.setInventory(p, rc, i)
    s.bumpProvider(p, now)
  })
}

const put = (consumer: string, body: unknown, mv = 'latest') =>
  api.call('PUT', `/allocations/${consumer}`, body, {'openstack-api-version': `placement ${mv}`})
const post = (body: unknown, mv = 'latest') => api.call('POST', '/allocations', body, {'openstack-api-version': `placement ${mv}`})
const get = (consumer: string, mv = 'latest') =>
  api.call('GET', `/allocations/${consumer}`, undefined, {'openstack-api-version': `placement ${mv}`})

const body = (allocations: Record<string, Record<string, number>>, generation: number | null, extra: object = {}) => ({
  allocations: Object.fromEntries(Object.entries(allocations).map(([rp, resources]) => [rp, {resources}])),
  project_id: PROJECT,
  user_id: USER,
  consumer_generation: generation,
  consumer_type: 'INSTANCE',
  ...extra,
})

/** Everything observable about allocations, through the API. */
async function snapshot() {
  const out: Record<string, unknown> = {}
  for (const rp of [RP1, RP2]) {
    out[`rp ${rp}`] = (await api.call('GET', `/resource_providers/${rp}/allocations`)).body
    out[`usages ${rp}`] = (await api.call('GET', `/resource_providers/${rp}/usages`)).body
  }
  for (const c of [C1, C2, C3]) out[`consumer ${c}`] = (await get(c)).body
  out.usages = (await api.call('GET', `/usages?project_id=${PROJECT}`)).body
  return out
}

/** The snapshot, then the same after reloading the State from the database: memory and file agree. */
async function persistedSnapshot() {
  const before = await snapshot()
  await api.store.reload()
  expect(await snapshot()).toEqual(before)
  return before
}

beforeEach(async () => {
  await provider(RP1, 'rp1', {VCPU: inv(8), MEMORY_MB: inv(4096, {step_size: 256, min_unit: 256, max_unit: 2048})})
  await provider(RP2, 'rp2', {DISK_GB: inv(100, {reserved: 10, allocation_ratio: 1.5})})
})

describe('PUT and GET /allocations/{consumer_uuid}', () => {
  it('creates a consumer with generation null, bumps provider and consumer generations', async () => {
    expect((await get(C1)).body).toEqual({allocations: {}})
    const r = await put(C1, body({[RP1]: {VCPU: 2}, [RP2]: {DISK_GB: 20}}, null))
    expect(r.status).toBe(204)
    const g = await get(C1)
    expect(g.headers['cache-control']).toBe('no-cache')
    expect(g.headers['last-modified']).toMatch(/GMT$/)
    expect(g.body).toEqual({
      allocations: {
        [RP1]: {resources: {VCPU: 2}, generation: 2},
        [RP2]: {resources: {DISK_GB: 20}, generation: 2},
      },
      project_id: PROJECT,
      user_id: USER,
      consumer_generation: 1,
      consumer_type: 'INSTANCE',
    })
    // Moving off RP2: only the providers named in the request are bumped.
    expect((await put(C1, body({[RP1]: {VCPU: 3}}, 1))).status).toBe(204)
    const rp2 = await api.call('GET', `/resource_providers/${RP2}`)
    expect(rp2.body.generation).toBe(2)
    expect((await get(C1)).body.allocations).toEqual({[RP1]: {resources: {VCPU: 3}, generation: 3}})
    expect((await get(C1)).body.consumer_generation).toBe(2)
    await persistedSnapshot()
  })

  it('answers a stale consumer generation with 409 concurrent_update and changes nothing', async () => {
    expect((await put(C1, body({[RP1]: {VCPU: 2}}, null))).status).toBe(204)
    const before = await snapshot()
    const stale = await put(C1, body({[RP1]: {VCPU: 4}}, 0))
    expect(stale.status).toBe(409)
    expect(stale.body.errors[0].code).toBe('placement.concurrent_update')
    expect(stale.body.errors[0].detail).toContain('consumer generation conflict - expected 1 but got 0')
    const asNew = await put(C1, body({[RP1]: {VCPU: 4}}, null))
    expect(asNew.status).toBe(409)
    expect(asNew.body.errors[0].detail).toContain('expected 1 but got None')
    const notNew = await put(C2, body({[RP1]: {VCPU: 4}}, 3))
    expect(notNew.status).toBe(409)
    expect(notNew.body.errors[0].detail).toContain('consumer generation conflict - expected null but got 3')
    expect(await persistedSnapshot()).toEqual(before)
  })

  it('refuses an allocation over capacity with 409 and changes nothing', async () => {
    // DISK_GB: (100 - 10) * 1.5 = 135
    expect((await put(C1, body({[RP2]: {DISK_GB: 100}}, null))).status).toBe(204)
    const before = await snapshot()
    const over = await put(C2, body({[RP2]: {DISK_GB: 36}}, null))
    expect(over.status).toBe(409)
    expect(over.body.errors[0].detail).toContain(
      `Unable to allocate inventory: Unable to create allocation for 'DISK_GB' on resource provider '${RP2}'. The requested amount would exceed the capacity.`,
    )
    expect(await persistedSnapshot()).toEqual(before)
    expect((await put(C2, body({[RP2]: {DISK_GB: 35}}, null))).status).toBe(204)
    // Replacing a consumer's own allocation does not count it twice.
    expect((await put(C1, body({[RP2]: {DISK_GB: 100}}, 1))).status).toBe(204)
  })

  it('enforces min_unit, max_unit and step_size, and needs inventory for the class', async () => {
    const before = await snapshot()
    for (const amount of [128, 300, 4096]) {
      const r = await put(C1, body({[RP1]: {MEMORY_MB: amount}}, null))
      expect(r.status).toBe(409)
      expect(r.body.errors[0].detail).toContain('The requested amount would violate inventory constraints.')
    }
    const noInv = await put(C1, body({[RP1]: {VCPU: 1, DISK_GB: 1}}, null))
    expect(noInv.status).toBe(409)
    expect(noInv.body.errors[0].detail).toContain(`Inventory for 'DISK_GB' on resource provider '${RP1}' invalid.`)
    const noneAtAll = await put(C1, body({[RP2]: {VCPU: 1}}, null))
    expect(noneAtAll.status).toBe(409)
    expect(noneAtAll.body.errors[0].detail).toContain(`Inventory for 'VCPU' on resource provider '${RP2}' invalid.`)
    expect(await persistedSnapshot()).toEqual(before)
    expect((await put(C1, body({[RP1]: {MEMORY_MB: 512}}, null))).status).toBe(204)
  })

  it('answers bad input with 400 and changes nothing', async () => {
    expect((await put(C1, body({[RP1]: {VCPU: 2}}, null))).status).toBe(204)
    const before = await snapshot()
    const cases: Array<[string, unknown, string]> = [
      [C1, {...body({[RP1]: {VCPU: 0}}, 1)}, 'JSON does not validate: 0 is less than the minimum of 1'],
      [C1, {...body({[RP1]: {VCPU: 1}}, 1), bogus: 1}, 'Additional properties are not allowed'],
      [C1, body({[RP1]: {VCPU: 1}}, 1, {consumer_type: 'lower'}), "'lower' does not match"],
      [C1, '{"allocations": ', 'Malformed JSON'],
      ['not-a-uuid', body({[RP1]: {VCPU: 1}}, 1), 'Malformed consumer_uuid: not-a-uuid'],
      [C1, body({[MISSING_RP]: {VCPU: 1}}, 1), `Allocation for resource provider '${MISSING_RP}' that does not exist.`],
      [C1, body({[RP1]: {CUSTOM_NOPE: 1}}, 1), `Unable to allocate inventory for consumer ${C1}: No such resource class CUSTOM_NOPE.`],
      // A new consumer is not left behind either.
      [C2, body({[MISSING_RP]: {VCPU: 1}}, null), 'that does not exist'],
    ]
    for (const [consumer, payload, text] of cases) {
      const r = await put(consumer, payload)
      expect(r.status, text).toBe(400)
      expect(r.body.errors[0].detail).toContain(text)
    }
    expect(await persistedSnapshot()).toEqual(before)
    // C2 really does not exist: null is still the right generation for it.
    expect((await put(C2, body({[RP1]: {VCPU: 1}}, null))).status).toBe(204)
  })

  it('accepts the list form before 1.12 and fills in the incomplete consumer before 1.8', async () => {
    const list = {allocations: [{resource_provider: {uuid: RP1}, resources: {VCPU: 1}}]}
    expect((await put(C1, list, '1.7')).status).toBe(204)
    const g = await get(C1, '1.12')
    expect(g.body.project_id).toBe('00000000-0000-0000-0000-000000000000')
    expect(g.body.user_id).toBe('00000000-0000-0000-0000-000000000000')
    expect((await put(C1, list, '1.8')).status).toBe(400)
    expect((await put(C1, {...list, project_id: PROJECT, user_id: USER}, '1.8')).status).toBe(204)
    expect((await get(C1, '1.12')).body.project_id).toBe(PROJECT)
    // 1.11 shows no project; 1.37 shows no type.
    expect(Object.keys((await get(C1, '1.11')).body)).toEqual(['allocations'])
    expect((await get(C1, '1.37')).body.consumer_type).toBeUndefined()
    expect((await get(C1)).body.consumer_type).toBe('unknown')
  })

  it('canonicalises the consumer uuid of PUT', async () => {
    expect((await put(C1.replaceAll('-', '').toUpperCase(), body({[RP1]: {VCPU: 1}}, null))).status).toBe(204)
    expect((await get(C1)).body.allocations[RP1].resources).toEqual({VCPU: 1})
  })

  it('removes allocations with an empty dict from 1.28, bumping providers, and deletes the consumer', async () => {
    expect((await put(C1, body({[RP1]: {VCPU: 1}, [RP2]: {DISK_GB: 1}}, null))).status).toBe(204)
    expect((await put(C1, body({}, null), '1.27')).status).toBe(400)
    expect((await put(C1, body({}, 1, {consumer_type: undefined}), '1.28')).status).toBe(204)
    expect((await get(C1)).body).toEqual({allocations: {}})
    for (const rp of [RP1, RP2]) expect((await api.call('GET', `/resource_providers/${rp}`)).body.generation).toBe(3)
    // The consumer is gone: it is new again.
    expect((await put(C1, body({[RP1]: {VCPU: 1}}, null))).status).toBe(204)
  })
})

describe('DELETE /allocations/{consumer_uuid}', () => {
  it('deletes the allocations and the consumer without bumping provider generations', async () => {
    expect((await put(C1, body({[RP1]: {VCPU: 1}}, null))).status).toBe(204)
    const gen = (await api.call('GET', `/resource_providers/${RP1}`)).body.generation
    expect((await api.call('DELETE', `/allocations/${C1}`)).status).toBe(204)
    expect((await api.call('GET', `/resource_providers/${RP1}`)).body.generation).toBe(gen)
    expect((await api.call('GET', `/resource_providers/${RP1}/usages`)).body.usages).toEqual({VCPU: 0, MEMORY_MB: 0})
    const again = await api.call('DELETE', `/allocations/${C1}`)
    expect(again.status).toBe(404)
    expect(again.body.errors[0].detail).toContain(`No allocations for consumer '${C1}'`)
    expect((await put(C1, body({[RP1]: {VCPU: 1}}, null))).status).toBe(204)
    await persistedSnapshot()
  })
})

describe('POST /allocations', () => {
  it('writes many consumers in one go, and empty allocations delete', async () => {
    const r = await post({
      [C1]: body({[RP1]: {VCPU: 2}}, null),
      [C2]: body({[RP1]: {VCPU: 2}, [RP2]: {DISK_GB: 5}}, null),
    })
    expect(r.status).toBe(204)
    expect((await get(C2)).body.consumer_generation).toBe(1)
    const r2 = await post({[C1]: body({}, 1), [C2]: body({[RP2]: {DISK_GB: 6}}, 1)})
    expect(r2.status).toBe(204)
    expect((await get(C1)).body).toEqual({allocations: {}})
    expect((await get(C2)).body.allocations).toEqual({[RP2]: {resources: {DISK_GB: 6}, generation: 3}})
    expect((await api.call('GET', `/usages?project_id=${PROJECT}`)).body.usages).toEqual({
      INSTANCE: {DISK_GB: 6, consumer_count: 1},
    })
    await persistedSnapshot()
  })

  it('writes nothing when one consumer is bad', async () => {
    expect((await put(C1, body({[RP1]: {VCPU: 2}}, null))).status).toBe(204)
    const before = await snapshot()
    const good = body({[RP1]: {VCPU: 1}}, 1)
    const newGood = body({[RP2]: {DISK_GB: 1}}, null)
    const failures: Array<[unknown, number, string]> = [
      [{[C1]: good, [C2]: newGood, [C3]: body({[MISSING_RP]: {VCPU: 1}}, null)}, 400, 'that does not exist'],
      [{[C1]: good, [C2]: newGood, [C3]: body({[RP1]: {VCPU: 8}}, null)}, 409, 'would exceed the capacity'],
      [{[C1]: good, [C2]: newGood, [C3]: body({[RP1]: {VCPU: 1}}, 7)}, 409, 'expected null but got 7'],
      [{[C2]: newGood, [C1]: body({[RP1]: {VCPU: 1}}, 0)}, 409, 'expected 1 but got 0'],
      [
        {[C1]: good, [C2]: newGood, [C3]: body({[RP1]: {CUSTOM_NOPE: 1}}, null)},
        400,
        'Unable to allocate inventory No such resource class CUSTOM_NOPE.',
      ],
      [{[C1]: good, [C2]: newGood, [C3]: {allocations: {}}}, 400, 'JSON does not validate'],
      // Two consumers that each fit but not together.
      [{[C2]: body({[RP1]: {VCPU: 4}}, null), [C3]: body({[RP1]: {VCPU: 3}}, null)}, 409, 'would exceed the capacity'],
    ]
    for (const [payload, status, text] of failures) {
      const r = await post(payload)
      expect(r.status, text).toBe(status)
      expect(r.body.errors[0].detail).toContain(text)
      if (status === 409 && text.startsWith('expected')) expect(r.body.errors[0].code).toBe('placement.concurrent_update')
    }
    expect(await persistedSnapshot()).toEqual(before)
    // The new consumers were not left behind.
    expect((await post({[C2]: newGood, [C3]: body({[RP1]: {VCPU: 1}}, null)})).status).toBe(204)
  })

  it('is not there before 1.13', async () => {
    expect((await post({[C1]: body({[RP1]: {VCPU: 1}}, null)}, '1.12')).status).toBe(404)
  })
})

describe('GET /resource_providers/{uuid}/allocations', () => {
  it('lists allocations by consumer with consumer generations from 1.28', async () => {
    expect((await put(C1, body({[RP1]: {VCPU: 1, MEMORY_MB: 256}}, null))).status).toBe(204)
    const r = await api.call('GET', `/resource_providers/${RP1}/allocations`)
    expect(r.body).toEqual({
      allocations: {[C1]: {resources: {VCPU: 1, MEMORY_MB: 256}, consumer_generation: 1}},
      resource_provider_generation: 2,
    })
    const old = await api.call('GET', `/resource_providers/${RP1}/allocations`, undefined, {'openstack-api-version': 'placement 1.27'})
    expect(old.body.allocations[C1]).toEqual({resources: {VCPU: 1, MEMORY_MB: 256}})
    const missing = await api.call('GET', `/resource_providers/${MISSING_RP}/allocations`)
    expect(missing.status).toBe(404)
  })
})

describe('pythonIntSetOrder', () => {
  it('iterates like a CPython set of small ints', () => {
    expect(pythonIntSetOrder([2, 0])).toEqual([0, 2])
    expect(pythonIntSetOrder([2, 8])).toEqual([8, 2])
    expect(pythonIntSetOrder([1, 1, 3])).toEqual([1, 3])
    expect(pythonIntSetOrder([0, 1, 2, 3, 4, 5])).toEqual([0, 1, 2, 3, 4, 5])
  })
})
