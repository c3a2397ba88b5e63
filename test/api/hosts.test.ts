/**
 * Hosts out of service through placemat's API (GET /placemat/v1/hosts/{uuid}, PUT .../status):
 * COMPUTE_STATUS_DISABLED with the reason placemat keeps with the host, kept in the file,
 * seen by another process following it, and forgotten when the trait goes, whoever removes it.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {buildApp} from '../../src/http/app.js'
import {Store} from '../../src/store/store.js'
import {tempFiles} from '../helpers/temp-files.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const H1 = '11111111-0000-4000-8000-000000000001'
const H2 = '11111111-0000-4000-8000-000000000002'
const CHILD = '11111111-0000-4000-8000-000000000003'
const file = tempFiles('placemat-hosts-')

const opened: TestApi[] = []
afterEach(async () => {
  for (const a of opened.splice(0)) await a.close()
})

async function api(db?: string): Promise<TestApi> {
  if (!db) {
    const a = await testApi()
    opened.push(a)
    return a
  }
  const store = await Store.open(db)
  const app = await buildApp({store, auth: 'noauth2'})
  const a: TestApi = {
    app,
    store,
    async call(method, url, body) {
      const res = await app.inject({
        method: method as any,
        url,
        headers: {
          'x-auth-token': 'admin',
          'openstack-api-version': 'placement latest',
          ...(body !== undefined ? {'content-type': 'application/json'} : {}),
        },
        payload: body === undefined ? undefined : JSON.stringify(body),
      })
      return {status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers}
    },
    async close() {
      await app.close()
      await store.close()
    },
  }
  opened.push(a)
  return a
}

async function seed(a: TestApi) {
  const operations = [
    {op: 'create_provider', uuid: H1, name: 'h1'},
    {op: 'set_inventories', uuid: H1, inventories: {VCPU: {total: 8}}},
    {op: 'create_provider', uuid: H2, name: 'h2'},
    {op: 'create_provider', uuid: CHILD, name: 'h1-numa0', parent_provider_uuid: H1},
  ]
  expect((await a.call('POST', '/placemat/v1/batch', {operations})).status).toBe(200)
}

const status = (a: TestApi, uuid: string, body: unknown) => a.call('PUT', `/placemat/v1/hosts/${uuid}/status`, body)

describe('hosts out of service', () => {
  it('disable sets the trait and keeps the reason, in one write; enable takes both away', async () => {
    const a = await api()
    await seed(a)
    const before = (await a.call('GET', `/resource_providers/${H1}`)).body.generation
    const off = await status(a, H1, {disabled: true, reason: 'PSU failure, ticket 4711'})
    expect(off.status).toBe(200)
    expect(off.body).toMatchObject({
      uuid: H1,
      name: 'h1',
      disabled: true,
      disabled_reason: 'PSU failure, ticket 4711',
      generation: before + 1,
      consumers: [],
      capacity: {VCPU: 8},
    })
    expect((await a.call('GET', `/resource_providers/${H1}/traits`)).body.traits).toEqual(['COMPUTE_STATUS_DISABLED'])
    // The same again changes nothing (no generation bump); without a reason, the reason stays.
    expect((await status(a, H1, {disabled: true})).body).toMatchObject({
      generation: before + 1,
      disabled_reason: 'PSU failure, ticket 4711',
    })
    const on = await status(a, H1, {disabled: false, resource_provider_generation: before + 1})
    expect(on.body).toMatchObject({disabled: false, disabled_reason: null, generation: before + 2})
    expect((await a.call('GET', `/resource_providers/${H1}/traits`)).body.traits).toEqual([])
  })

  it('refuses a stale generation, a child provider and an unknown one', async () => {
    const a = await api()
    await seed(a)
    const stale = await status(a, H1, {disabled: true, resource_provider_generation: 99})
    expect(stale.status).toBe(409)
    expect(stale.body.errors[0].code).toBe('placement.concurrent_update')
    expect((await status(a, CHILD, {disabled: true})).status).toBe(400)
    expect((await status(a, '11111111-0000-4000-8000-000000000099', {disabled: true})).status).toBe(404)
    expect((await status(a, H1, {disabled: 'yes'})).status).toBe(400)
    expect((await a.call('GET', `/placemat/v1/hosts/${H1}`)).body.disabled).toBe(false)
  })

  it('forgets the reason when the trait goes another way (nova enabling the service)', async () => {
    const a = await api()
    await seed(a)
    const off = (await status(a, H1, {disabled: true, reason: 'maintenance'})).body
    expect(
      (await a.call('PUT', `/resource_providers/${H1}/traits`, {traits: [], resource_provider_generation: off.generation})).status,
    ).toBe(200)
    // Disabled again by nova: no reason of placemat's is shown for it.
    const g = (await a.call('GET', `/resource_providers/${H1}`)).body.generation
    await a.call('PUT', `/resource_providers/${H1}/traits`, {traits: ['COMPUTE_STATUS_DISABLED'], resource_provider_generation: g})
    expect((await a.call('GET', `/placemat/v1/hosts/${H1}`)).body).toMatchObject({disabled: true, disabled_reason: null})
  })

  it('keeps the reason in the file, and another process following the file sees it', async () => {
    const db = file()
    const a = await api(db)
    await seed(a)
    const b = await api(db)
    expect((await b.call('GET', `/placemat/v1/hosts/${H1}`)).body.disabled).toBe(false)
    await status(a, H1, {disabled: true, reason: 'disk swap'})
    expect((await b.call('GET', `/placemat/v1/hosts/${H1}`)).body).toMatchObject({disabled: true, disabled_reason: 'disk swap'})
    await a.close()
    await b.close()
    opened.splice(0)
    const c = await api(db)
    expect((await c.call('GET', `/placemat/v1/hosts/${H1}`)).body).toMatchObject({disabled: true, disabled_reason: 'disk swap'})
    await status(c, H1, {disabled: false})
    const d = await api(db)
    expect((await d.call('GET', `/placemat/v1/hosts/${H1}`)).body).toMatchObject({disabled: false, disabled_reason: null})
  })
})
