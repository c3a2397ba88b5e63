/** Where a client sees the bytes, they are Placement's: a whole allocation_ratio is written 1.0, as Python writes a float. */
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {placementJson} from '../../src/http/context.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

describe('allocation_ratio as Placement writes it', () => {
  let api: TestApi
  beforeEach(async () => {
    api = await testApi()
  })
  afterEach(() => api.close())

  it('is a float in every inventory answer', async () => {
    const uuid = '00000000-0000-0000-0000-0000000000aa'
    expect((await api.call('POST', '/resource_providers', {uuid, name: 'cn1'})).status).toBe(200)
    const put = await api.app.inject({
      method: 'PUT',
      url: `/resource_providers/${uuid}/inventories`,
      headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'},
      payload: JSON.stringify({
        resource_provider_generation: 0,
        inventories: {VCPU: {total: 8, allocation_ratio: 16}, MEMORY_MB: {total: 1024, allocation_ratio: 1.5}, DISK_GB: {total: 10}},
      }),
    })
    expect(put.statusCode).toBe(200)
    for (const text of [
      put.body,
      (await api.app.inject({method: 'GET', url: `/resource_providers/${uuid}/inventories`, headers: {'x-auth-token': 'admin'}})).body,
    ]) {
      expect(text).toContain('"allocation_ratio":16.0')
      expect(text).toContain('"allocation_ratio":1.5')
      expect(text).toContain('"allocation_ratio":1.0')
    }
    const one = await api.app.inject({
      method: 'GET',
      url: `/resource_providers/${uuid}/inventories/DISK_GB`,
      headers: {'x-auth-token': 'admin'},
    })
    expect(one.body).toContain('"allocation_ratio":1.0')
  })

  it('touches only the key, never text inside a string', () => {
    expect(placementJson({name: '"allocation_ratio":1,', allocation_ratio: 2, x: {allocation_ratio: 0.5}})).toBe(
      '{"name":"\\"allocation_ratio\\":1,","allocation_ratio":2.0,"x":{"allocation_ratio":0.5}}',
    )
  })
})
