/** Placement's [placement] incomplete_consumer_project_id / _user_id: the owner of a write made before microversion 1.8. */
import {afterEach, describe, expect, it} from 'vitest'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
afterEach(() => api.close())

const RP = '9d9c8e1c-1111-4a2b-9c3d-000000000001'
const C = '9d9c8e1c-2222-4a2b-9c3d-000000000001'

describe('incomplete consumers', () => {
  for (const [what, options, project, user] of [
    ["Placement's default", {}, '00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000'],
    ['configured', {incompleteConsumer: {project: 'legacy-project', user: 'legacy-user'}}, 'legacy-project', 'legacy-user'],
  ] as const) {
    it(`a write at 1.7 belongs to ${what} project and user`, async () => {
      api = await testApi(options)
      await api.call('POST', '/resource_providers', {name: 'cn', uuid: RP})
      await api.call('PUT', `/resource_providers/${RP}/inventories`, {resource_provider_generation: 0, inventories: {VCPU: {total: 4}}})
      const put = await api.call(
        'PUT',
        `/allocations/${C}`,
        {allocations: [{resource_provider: {uuid: RP}, resources: {VCPU: 1}}]},
        {'openstack-api-version': 'placement 1.7'},
      )
      expect(put.status, JSON.stringify(put.body)).toBe(204)
      const got = await api.call('GET', `/allocations/${C}`, undefined, {'openstack-api-version': 'placement 1.12'})
      expect(got.body).toMatchObject({project_id: project, user_id: user})
    })
  }
})
