import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {STANDARD_RESOURCE_CLASSES} from '../../src/core/standard.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
})
afterEach(() => api.close())

const RP = 'dddddddd-0000-4000-8000-000000000001'
const v = (minor: number) => ({'openstack-api-version': `placement 1.${minor}`})

async function classNames(): Promise<string[]> {
  const r = await api.call('GET', '/resource_classes')
  expect(r.status).toBe(200)
  return r.body.resource_classes.map((c: {name: string}) => c.name)
}

describe('resource classes', () => {
  it('lists the standard classes in os-resource-classes order, with links and cache headers', async () => {
    const r = await api.call('GET', '/resource_classes')
    expect(r.body.resource_classes.map((c: {name: string}) => c.name)).toEqual([...STANDARD_RESOURCE_CLASSES])
    expect(r.body.resource_classes[0]).toEqual({name: 'VCPU', links: [{rel: 'self', href: '/resource_classes/VCPU'}]})
    expect(r.headers['last-modified']).toMatch(/GMT$/)
    expect(r.headers['cache-control']).toBe('no-cache')
  })

  it('is hidden below 1.2', async () => {
    expect((await api.call('GET', '/resource_classes', undefined, v(1))).status).toBe(404)
    expect((await api.call('POST', '/resource_classes', {name: 'CUSTOM_A'}, v(1))).status).toBe(404)
    expect((await api.call('DELETE', '/resource_classes/CUSTOM_A', undefined, v(1))).status).toBe(404)
  })

  it('creates with POST, refuses duplicates and bad names, shows and deletes', async () => {
    const post = await api.call('POST', '/resource_classes', {name: 'CUSTOM_GOLD'})
    expect(post.status).toBe(201)
    expect(post.headers.location).toMatch(/\/\/.*\/resource_classes\/CUSTOM_GOLD$/)
    expect(post.headers['content-type']).toBeUndefined()
    const dup = await api.call('POST', '/resource_classes', {name: 'CUSTOM_GOLD'})
    expect(dup.status).toBe(409)
    expect(dup.body.errors[0].detail).toContain('Conflicting resource class already exists: CUSTOM_GOLD')
    for (const name of ['GOLD', 'CUSTOM_gold', 'VCPU', `CUSTOM_${'X'.repeat(250)}`]) {
      const bad = await api.call('POST', '/resource_classes', {name})
      expect(bad.status).toBe(400)
      expect(bad.body.errors[0].detail).toContain('JSON does not validate')
    }
    expect((await classNames()).length).toBe(STANDARD_RESOURCE_CLASSES.length + 1)
    const show = await api.call('GET', '/resource_classes/CUSTOM_GOLD')
    expect(show.body).toEqual({name: 'CUSTOM_GOLD', links: [{rel: 'self', href: '/resource_classes/CUSTOM_GOLD'}]})
    expect((await api.call('DELETE', '/resource_classes/CUSTOM_GOLD')).status).toBe(204)
    const gone = await api.call('GET', '/resource_classes/CUSTOM_GOLD')
    expect(gone.status).toBe(404)
    expect(gone.body.errors[0].detail).toContain('No such resource class CUSTOM_GOLD.')
  })

  it('renames custom classes at 1.2-1.6, carrying inventories along', async () => {
    await api.call('POST', '/resource_classes', {name: 'CUSTOM_A'})
    await api.call('POST', '/resource_classes', {name: 'CUSTOM_B'})
    await api.call('POST', '/resource_providers', {uuid: RP, name: 'rp'})
    await api.call('PUT', `/resource_providers/${RP}/inventories`, {
      resource_provider_generation: 0,
      inventories: {CUSTOM_A: {total: 3}},
    })
    const clash = await api.call('PUT', '/resource_classes/CUSTOM_A', {name: 'CUSTOM_B'}, v(6))
    expect(clash.status).toBe(409)
    expect(clash.body.errors[0].detail).toContain('Resource class already exists: CUSTOM_B')
    const r = await api.call('PUT', '/resource_classes/CUSTOM_A', {name: 'CUSTOM_C'}, v(6))
    expect(r.status).toBe(200)
    expect(r.body).toEqual({name: 'CUSTOM_C', links: [{rel: 'self', href: '/resource_classes/CUSTOM_C'}]})
    const inv = await api.call('GET', `/resource_providers/${RP}/inventories`)
    expect(Object.keys(inv.body.inventories)).toEqual(['CUSTOM_C'])
    expect((await api.call('GET', '/resource_classes/CUSTOM_A')).status).toBe(404)
    const missing = await api.call('PUT', '/resource_classes/CUSTOM_NOPE', {name: 'CUSTOM_D'}, v(6))
    expect(missing.status).toBe(404)
    const noType = await api.call('PUT', '/resource_classes/CUSTOM_C', 'x', {...v(6), 'content-type': 'text/plain'})
    expect(noType.status).toBe(415)
  })

  it('creates or confirms with a bodiless PUT from 1.7', async () => {
    const created = await api.call('PUT', '/resource_classes/CUSTOM_COW', undefined, v(7))
    expect(created.status).toBe(201)
    expect(created.headers.location).toMatch(/\/resource_classes\/CUSTOM_COW$/)
    const again = await api.call('PUT', '/resource_classes/CUSTOM_COW', undefined, v(7))
    expect(again.status).toBe(204)
    expect(again.headers.location).toMatch(/\/resource_classes\/CUSTOM_COW$/)
    const bad = await api.call('PUT', '/resource_classes/COW', undefined, v(7))
    expect(bad.status).toBe(400)
    expect(bad.body.errors[0].detail).toContain("Failed validating 'pattern'")
    const bodiless16 = await api.call('PUT', '/resource_classes/CUSTOM_COW', '', {...v(6), 'content-type': 'application/json'})
    expect(bodiless16.status).toBe(400)
    expect(bodiless16.body.errors[0].detail).toContain('Malformed JSON')
  })
})

describe('standard and in-use protection', () => {
  it('never renames or deletes a standard class', async () => {
    const before = await classNames()
    const rename = await api.call('PUT', '/resource_classes/VCPU', {name: 'CUSTOM_VCPU'}, v(6))
    expect(rename.status).toBe(400)
    expect(rename.body.errors[0].detail).toContain('Cannot update standard resource class VCPU')
    const del = await api.call('DELETE', '/resource_classes/VCPU')
    expect(del.status).toBe(400)
    expect(del.body.errors[0].detail).toContain('Error in delete resource class: Cannot delete standard resource class VCPU.')
    const put17 = await api.call('PUT', '/resource_classes/VCPU', undefined, v(7))
    expect(put17.status).toBe(400)
    expect(await classNames()).toEqual(before)
  })

  it('refuses to delete a custom class used by an inventory, until the inventory goes', async () => {
    await api.call('PUT', '/resource_classes/CUSTOM_GOLD')
    await api.call('POST', '/resource_providers', {uuid: RP, name: 'rp'})
    await api.call('POST', `/resource_providers/${RP}/inventories`, {resource_class: 'CUSTOM_GOLD', total: 5})
    const before = await classNames()
    const r = await api.call('DELETE', '/resource_classes/CUSTOM_GOLD')
    expect(r.status).toBe(409)
    expect(r.body.errors[0].detail).toContain(
      'Error in delete resource class: Cannot delete resource class CUSTOM_GOLD. Class is in use in inventory.',
    )
    expect(await classNames()).toEqual(before)
    expect((await api.call('DELETE', `/resource_providers/${RP}/inventories/CUSTOM_GOLD`)).status).toBe(204)
    expect((await api.call('DELETE', '/resource_classes/CUSTOM_GOLD')).status).toBe(204)
    expect(await classNames()).toEqual([...STANDARD_RESOURCE_CLASSES])
  })

  it('changes nothing on a bad rename', async () => {
    await api.call('POST', '/resource_classes', {name: 'CUSTOM_A'})
    const before = await classNames()
    const r = await api.call('PUT', '/resource_classes/CUSTOM_A', {name: 'CUSTOM_B', extra: 1}, v(6))
    expect(r.status).toBe(400)
    expect(r.body.errors[0].detail).toContain('Additional properties are not allowed')
    expect(await classNames()).toEqual(before)
  })
})
