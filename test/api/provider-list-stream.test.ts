/** A long provider list is streamed in pieces, and is the same answer a short list would be. */
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {testApi, type TestApi} from '../helpers/http-helpers.js'
import {listedNow, renderProvider} from '../../src/http/render.js'
import {Version} from '../../src/http/microversion.js'

describe('GET /resource_providers, streamed', () => {
  let api: TestApi
  let whole: TestApi
  beforeEach(async () => {
    api = await testApi({streamAbove: 3})
    whole = await testApi()
  })
  afterEach(async () => {
    await api.close()
    await whole.close()
  })

  it('answers the same bytes as the unstreamed list, in pieces', async () => {
    for (const t of [api, whole]) {
      for (let i = 0; i < 7; i++) {
        const uuid = `00000000-0000-0000-0000-${String(i + 1).padStart(12, '0')}`
        expect((await t.call('POST', '/resource_providers', {uuid, name: `cn${i}`})).status).toBe(200)
      }
    }
    const get = (t: TestApi) =>
      t.app.inject({
        method: 'GET',
        url: '/resource_providers',
        headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest'},
      })
    const [streamed, plain] = await Promise.all([get(api), get(whole)])
    expect(streamed.statusCode).toBe(200)
    expect(streamed.headers['content-type']).toMatch(/application\/json/)
    expect(streamed.headers['transfer-encoding']).toBe('chunked')
    expect(plain.headers['transfer-encoding']).toBeUndefined()
    expect(streamed.body).toBe(plain.body)
    expect(JSON.parse(streamed.body).resource_providers).toHaveLength(7)
    const one = await api.call('GET', '/resource_providers?name=cn3')
    expect((one.body as any).resource_providers).toHaveLength(1)
  })
  it('shows one moment: writes that land while it goes out do not reach into it', async () => {
    for (let i = 0; i < 5; i++) {
      expect(
        (await api.call('POST', '/resource_providers', {uuid: `00000000-0000-0000-0000-00000000000${i}`, name: `cn${i}`})).status,
      ).toBe(200)
    }
    const mv = new Version(1, 39)
    const providers = [...api.store.state.providers.values()]
    const before = providers.map((p) => JSON.stringify(renderProvider(p, mv)))
    const now = listedNow(providers)
    // Renamed, re-parented (generation unchanged by Placement's rules), given inventory, deleted.
    const u = (i: number) => `00000000-0000-0000-0000-00000000000${i}`
    expect((await api.call('PUT', `/resource_providers/${u(1)}`, {name: 'renamed'})).status).toBe(200)
    expect((await api.call('PUT', `/resource_providers/${u(2)}`, {name: 'cn2', parent_provider_uuid: u(0)})).status).toBe(200)
    const inv = {resource_provider_generation: 0, inventories: {VCPU: {total: 4}}}
    expect((await api.call('PUT', `/resource_providers/${u(3)}/inventories`, inv)).status).toBe(200)
    expect((await api.call('DELETE', `/resource_providers/${u(4)}`)).status).toBe(204)
    expect(now.indexes.map((i) => JSON.stringify(now.render(i, mv)))).toEqual(before)
    expect(providers.map((p) => JSON.stringify(renderProvider(p, mv)))).not.toEqual(before)
  })
})
