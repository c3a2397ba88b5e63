import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {buildApp} from '../../src/http/app.js'
import {Store} from '../../src/store/store.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
})
afterEach(() => api.close())

const RP = 'bbbbbbbb-0000-4000-8000-000000000001'
const CONSUMER = 'cccccccc-0000-4000-8000-000000000001'
const inv = (uuid = RP) => `/resource_providers/${uuid}/inventories`

async function makeProvider(uuid = RP, name = 'rp1') {
  const r = await api.call('POST', '/resource_providers', {uuid, name})
  expect(r.status).toBe(200)
}

/** The provider's inventories and generation as GET shows them. */
async function snapshot(uuid = RP) {
  const r = await api.call('GET', inv(uuid))
  expect(r.status).toBe(200)
  return r.body
}

/** Gives CONSUMER an allocation straight through the State (the allocation routes are not this module's). */
async function allocate(amounts: Record<string, number>, uuid = RP) {
  await api.store.write((s, now) => {
    const c = {uuid: CONSUMER, project: 'p', user: 'u', type: null, generation: 0, createdAt: now, updatedAt: now, allocations: new Map()}
    s.addConsumer(c)
    s.setAllocations(c, new Map([[uuid, new Map(Object.entries(amounts))]]))
  })
}

describe('inventory CRUD', () => {
  it('creates, reads, updates, deletes with Placement generations and bodies', async () => {
    await makeProvider()
    expect(await snapshot()).toEqual({resource_provider_generation: 0, inventories: {}})

    const post = await api.call('POST', inv(), {resource_class: 'DISK_GB', total: 2048, reserved: 512})
    expect(post.status).toBe(201)
    expect(post.headers.location).toBe(`http://localhost:80${inv()}/DISK_GB`)
    expect(post.body).toEqual({
      total: 2048,
      reserved: 512,
      min_unit: 1,
      max_unit: 2147483647,
      step_size: 1,
      allocation_ratio: 1,
      resource_provider_generation: 1,
    })

    const get = await api.call('GET', `${inv()}/DISK_GB`)
    expect(get.body.resource_provider_generation).toBe(1)
    expect(get.headers['last-modified']).toMatch(/GMT$/)
    expect(get.headers['cache-control']).toBe('no-cache')
    const old = await api.call('GET', `${inv()}/DISK_GB`, undefined, {'openstack-api-version': 'placement 1.14'})
    expect(old.headers['last-modified']).toBeUndefined()

    const put = await api.call('PUT', `${inv()}/DISK_GB`, {resource_provider_generation: 1, total: 1024})
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({total: 1024, reserved: 0, resource_provider_generation: 2})

    const all = await api.call('PUT', inv(), {
      resource_provider_generation: 2,
      inventories: {DISK_GB: {total: 10}, VCPU: {total: 8, allocation_ratio: 16}},
    })
    expect(all.status).toBe(200)
    expect(all.body.resource_provider_generation).toBe(3)
    expect(Object.keys(all.body.inventories).sort()).toEqual(['DISK_GB', 'VCPU'])
    expect(all.body.inventories.VCPU.allocation_ratio).toBe(16)

    expect((await api.call('DELETE', `${inv()}/DISK_GB`)).status).toBe(204)
    expect((await snapshot()).resource_provider_generation).toBe(4)
    expect((await api.call('DELETE', inv())).status).toBe(204)
    // Deleting an already empty inventory still bumps, as Placement does.
    expect((await api.call('DELETE', inv())).status).toBe(204)
    expect(await snapshot()).toEqual({resource_provider_generation: 6, inventories: {}})
  })

  it('answers 405 for DELETE of all inventories below 1.5 and 404s for missing things', async () => {
    await makeProvider()
    const r = await api.call('DELETE', inv(), undefined, {'openstack-api-version': 'placement 1.4'})
    expect(r.status).toBe(405)
    const missingRp = await api.call('GET', inv('bbbbbbbb-0000-4000-8000-00000000ffff'))
    expect(missingRp.status).toBe(404)
    expect(missingRp.body.errors[0].detail).toContain('No resource provider with uuid bbbbbbbb-0000-4000-8000-00000000ffff found')
    const missingInv = await api.call('GET', `${inv()}/VCPU`)
    expect(missingInv.status).toBe(404)
    expect(missingInv.body.errors[0].detail).toContain(`No inventory of class VCPU for ${RP}`)
    const delMissing = await api.call('DELETE', `${inv()}/VCPU`)
    expect(delMissing.status).toBe(404)
    expect(delMissing.body.errors[0].detail).toContain('No inventory of class VCPU found for delete')
    expect((await snapshot()).resource_provider_generation).toBe(0)
  })

  it('accepts reserved == total only from 1.26', async () => {
    await makeProvider()
    const body = {resource_class: 'VCPU', total: 4, reserved: 4}
    const old = await api.call('POST', inv(), body, {'openstack-api-version': 'placement 1.25'})
    expect(old.status).toBe(400)
    expect(old.body.errors[0].detail).toContain('The reserved value is greater than or equal to total.')
    expect((await api.call('POST', inv(), body)).status).toBe(201)
    const worse = await api.call('PUT', `${inv()}/VCPU`, {resource_provider_generation: 1, total: 4, reserved: 5})
    expect(worse.status).toBe(400)
    expect(worse.body.errors[0].detail).toContain('The reserved value is greater than total.')
  })
})

describe('in-use inventory protection', () => {
  beforeEach(async () => {
    await makeProvider()
    const r = await api.call('PUT', inv(), {
      resource_provider_generation: 0,
      inventories: {VCPU: {total: 8}, MEMORY_MB: {total: 4096}, DISK_GB: {total: 100}},
    })
    expect(r.status).toBe(200)
    await allocate({VCPU: 2, MEMORY_MB: 512})
  })

  it('refuses to delete one in-use class (409 concurrent_update) and changes nothing', async () => {
    const before = await snapshot()
    const r = await api.call('DELETE', `${inv()}/VCPU`)
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.concurrent_update')
    expect(r.body.errors[0].detail).toContain(
      `Unable to delete inventory of class VCPU: Inventory for 'VCPU' on resource provider '${RP}' in use.`,
    )
    expect(await snapshot()).toEqual(before)
  })

  it('refuses a PUT that drops in-use classes (409 inventory.inuse) and changes nothing', async () => {
    const before = await snapshot()
    const r = await api.call('PUT', inv(), {resource_provider_generation: 1, inventories: {DISK_GB: {total: 50}}})
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.inventory.inuse')
    expect(r.body.errors[0].detail).toContain(`update conflict: Inventory for 'VCPU, MEMORY_MB' on resource provider '${RP}' in use.`)
    expect(await snapshot()).toEqual(before)
  })

  it('refuses DELETE of all inventories while allocated and changes nothing', async () => {
    const before = await snapshot()
    const r = await api.call('DELETE', inv())
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.inventory.inuse')
    expect(await snapshot()).toEqual(before)
  })

  it('allows deleting unused classes and shrinking below usage, as Placement does', async () => {
    expect((await api.call('DELETE', `${inv()}/DISK_GB`)).status).toBe(204)
    const shrink = await api.call('PUT', `${inv()}/VCPU`, {resource_provider_generation: 2, total: 1})
    expect(shrink.status).toBe(200)
    expect(shrink.body).toMatchObject({total: 1, resource_provider_generation: 3})
    const keep = await api.call('PUT', inv(), {
      resource_provider_generation: 3,
      inventories: {VCPU: {total: 1}, MEMORY_MB: {total: 256}},
    })
    expect(keep.status).toBe(200)
  })
})

describe('stale generations', () => {
  beforeEach(async () => {
    await makeProvider()
    expect((await api.call('POST', inv(), {resource_class: 'VCPU', total: 8})).status).toBe(201)
  })

  it('409s a PUT of one inventory with a stale generation and changes nothing', async () => {
    const before = await snapshot()
    const r = await api.call('PUT', `${inv()}/VCPU`, {resource_provider_generation: 0, total: 4})
    expect(r.status).toBe(409)
    expect(r.body.errors[0]).toMatchObject({code: 'placement.concurrent_update', title: 'Conflict'})
    expect(r.body.errors[0].detail).toContain('resource provider generation conflict')
    expect(await snapshot()).toEqual(before)
  })

  it('409s a PUT of all inventories with a stale generation and changes nothing', async () => {
    const before = await snapshot()
    const r = await api.call('PUT', inv(), {resource_provider_generation: 7, inventories: {}})
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.concurrent_update')
    expect(await snapshot()).toEqual(before)
  })

  it('409s a duplicate POST (update conflict) and changes nothing', async () => {
    const before = await snapshot()
    const r = await api.call('POST', inv(), {resource_class: 'VCPU', total: 2})
    expect(r.status).toBe(409)
    expect(r.body.errors[0].detail).toContain('Update conflict')
    expect(await snapshot()).toEqual(before)
  })
})

describe('bad input', () => {
  beforeEach(async () => {
    await makeProvider()
    expect((await api.call('POST', inv(), {resource_class: 'VCPU', total: 8})).status).toBe(201)
  })

  const cases: Array<[string, string, string, unknown, string]> = [
    ['POST', '', 'missing total', {resource_class: 'DISK_GB'}, "'total' is a required property"],
    ['POST', '', 'negative total', {resource_class: 'DISK_GB', total: -1}, '-1 is less than the minimum of 1'],
    ['POST', '', 'total over MAX_INT', {resource_class: 'DISK_GB', total: 2147483648}, "Failed validating 'maximum'"],
    ['POST', '', 'lower-case class', {resource_class: 'disk', total: 1}, 'JSON does not validate'],
    ['POST', '', 'unknown class', {resource_class: 'NO_CLASS_14', total: 1}, 'No such resource class NO_CLASS_14'],
    ['POST', '', 'reserved over total', {resource_class: 'DISK_GB', total: 1, reserved: 2}, 'Unable to create inventory'],
    ['POST', '', 'extra field', {resource_class: 'DISK_GB', total: 1, bogus: 1}, 'Additional properties are not allowed'],
    [
      'PUT',
      '',
      'unknown class in set',
      {resource_provider_generation: 1, inventories: {VCPU: {total: 1}, HOUSE: {total: 1}}},
      'Unknown resource class in inventory',
    ],
    [
      'PUT',
      '',
      'bad capacity in set',
      {resource_provider_generation: 1, inventories: {VCPU: {total: 1, reserved: 9}}},
      'Unable to update inventory',
    ],
    ['PUT', '', 'missing generation', {inventories: {}}, "'resource_provider_generation' is a required property"],
    [
      'PUT',
      '/VCPU',
      'ratio too large',
      {resource_provider_generation: 1, total: 1, allocation_ratio: 3.5e39},
      "Failed validating 'maximum'",
    ],
    ['PUT', '/DISK_GB', 'no such inventory', {resource_provider_generation: 1, total: 1}, 'No inventory record with resource class'],
    ['PUT', '/VCPU', 'malformed', '{"total": }', 'Malformed JSON'],
  ]
  for (const [method, suffix, what, body, text] of cases) {
    it(`400s ${method} with ${what} and changes nothing`, async () => {
      const before = await snapshot()
      const r = await api.call(method, `${inv()}${suffix}`, body)
      expect(r.status).toBe(400)
      expect(r.body.errors[0].title).toBe('Bad Request')
      expect(r.body.errors[0].detail).toContain(text)
      expect(await snapshot()).toEqual(before)
    })
  }

  it('415s without a JSON content type', async () => {
    const r = await api.call('POST', inv(), 'x', {'content-type': 'text/plain'})
    expect(r.status).toBe(415)
  })

  it('404s an unknown class on PUT of one inventory (Placement lets ResourceClassNotFound through)', async () => {
    const r = await api.call('PUT', `${inv()}/NOPE`, {resource_provider_generation: 1, total: 1})
    expect(r.status).toBe(404)
    expect(r.body.errors[0].detail).toContain('No such resource class NOPE.')
  })
})

describe('persistence', () => {
  it('writes what succeeded and nothing of what failed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-inv-'))
    const file = path.join(dir, 'p.db')
    const store = await Store.open(file)
    const app = await buildApp({store, auth: 'noauth2'})
    const h = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
    const call = (method: any, url: string, payload?: unknown) =>
      app.inject({method, url, headers: h, payload: payload === undefined ? undefined : JSON.stringify(payload)})
    try {
      expect((await call('POST', '/resource_providers', {uuid: RP, name: 'rp'})).statusCode).toBe(200)
      expect((await call('PUT', inv(), {resource_provider_generation: 0, inventories: {VCPU: {total: 4}}})).statusCode).toBe(200)
      expect(
        (await call('PUT', inv(), {resource_provider_generation: 1, inventories: {VCPU: {total: 4}, HOUSE: {total: 1}}})).statusCode,
      ).toBe(400)
      const other = await Store.open(file)
      try {
        const p = (await other.refresh()).providers.get(RP)!
        expect(p.generation).toBe(1)
        expect([...p.inventories.keys()]).toEqual(['VCPU'])
        expect(p.inventories.get('VCPU')).toMatchObject({total: 4, max_unit: 2147483647})
      } finally {
        await other.close()
      }
    } finally {
      await app.close()
      await store.close()
      fs.rmSync(dir, {recursive: true, force: true})
    }
  })
})
