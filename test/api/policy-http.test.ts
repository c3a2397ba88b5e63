/**
 * The policy at the daemon's edge (inject, noauth2 with keystonemiddleware's headers): each
 * route asks its Placement rule before its body is read; placemat's own routes ask placemat's.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {Policy} from '../../src/http/policy/policy.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const system = (roles: string) => ({'x-auth-token': 'user', 'x-roles': roles, 'openstack-system-scope': 'all'})
const project = (roles: string, id = 'p1') => ({'x-auth-token': 'user', 'x-roles': roles, 'x-project-id': id})

let api: TestApi
afterEach(() => api.close())

describe('policy over HTTP', () => {
  it("15.0.0's secure RBAC (new defaults, scope enforced): project admins and services; system tokens refused", async () => {
    api = await testApi({policy: Policy.load({enforceNewDefaults: true, enforceScope: true})})
    expect((await api.call('GET', '/resource_providers', undefined, project('admin', 'admins'))).status).toBe(200)
    expect((await api.call('POST', '/resource_providers', {name: 'x'}, project('service', 'services'))).status).toBe(200)
    const refused = await api.call('GET', '/resource_providers', undefined, system('admin,member,reader'))
    expect(refused.status).toBe(403)
    expect(refused.body.errors[0].detail).toContain('Policy does not allow placement:resource_providers:list to be performed.')
    expect((await api.call('GET', '/resource_providers', undefined, project('member,reader'))).status).toBe(403)
    expect((await api.call('GET', '/usages?project_id=p1', undefined, project('reader'))).status).toBe(200)
    expect((await api.call('GET', '/placemat/v1/groups', undefined, project('service', 'services'))).status).toBe(200)
    const write = await api.call(
      'POST',
      '/placemat/v1/groups',
      {name: 'g', policy: 'affinity', level: 'rack'},
      project('service', 'services'),
    )
    expect(write.status).toBe(403)
    expect(write.body.errors[0].detail).toContain('placemat:write')
  })

  it("8.0.0's secure RBAC (new defaults, scope enforced): readers read, admins write, projects see their own usages", async () => {
    api = await testApi({policy: Policy.load({defaults: '8.0.0', enforceNewDefaults: true, enforceScope: true})})
    expect((await api.call('GET', '/resource_providers', undefined, system('reader'))).status).toBe(200)
    const refused = await api.call('POST', '/resource_providers', {name: 'x'}, system('reader'))
    expect(refused.status).toBe(403)
    expect(refused.body.errors[0].detail).toContain('Policy does not allow placement:resource_providers:create to be performed.')
    // Refused before the body is read: a malformed body is still a 403, not a 400.
    expect((await api.call('POST', '/resource_providers', '{not json', system('reader'))).status).toBe(403)
    expect((await api.call('POST', '/resource_providers', {name: 'x'}, system('admin,member,reader'))).status).toBe(200)
    expect((await api.call('GET', '/resource_providers', undefined, project('admin,member,reader'))).status).toBe(403)
    expect((await api.call('GET', '/usages?project_id=p1', undefined, project('reader'))).status).toBe(200)
    expect((await api.call('GET', '/usages?project_id=p2', undefined, project('reader'))).status).toBe(403)
    expect((await api.call('GET', '/placemat/v1/groups', undefined, system('reader'))).status).toBe(200)
    const write = await api.call('POST', '/placemat/v1/groups', {name: 'g', policy: 'affinity', level: 'rack'}, system('reader'))
    expect(write.status).toBe(403)
    expect(write.body.errors[0].detail).toContain('placemat:write')
  })

  it("the default policy (15.0.0's, new defaults and scope enforced): a project admin and the admin token of Placement's noauth2; system-scoped admins, and others, 403", async () => {
    api = await testApi()
    expect((await api.call('POST', '/resource_providers', {name: 'x'}, project('admin'))).status).toBe(200)
    expect((await api.call('GET', '/resource_providers', undefined, {'x-auth-token': 'admin'})).status).toBe(200)
    // A Zed-era admin token (system-scoped) is refused: scope is enforced.
    expect((await api.call('GET', '/resource_providers', undefined, system('admin,member,reader'))).status).toBe(403)
    // Reshaping is the service role's: noauth2's admin (role admin alone) is refused, a service is not.
    const reshape = {inventories: {}, allocations: {}}
    const byAdmin = await api.call('POST', '/reshaper', reshape, {'x-auth-token': 'admin'})
    expect(byAdmin.status).toBe(403)
    expect(byAdmin.body.errors[0].detail).toContain('placement:reshaper:reshape')
    expect((await api.call('POST', '/reshaper', reshape, project('admin,service', 'admin'))).status).not.toBe(403)
    expect((await api.call('GET', '/resource_providers', undefined, {'x-auth-token': 'user'})).status).toBe(403)
    expect((await api.call('GET', '/resource_providers', undefined, project('member,reader'))).status).toBe(403)
    expect((await api.call('GET', '/usages?project_id=p1', undefined, project('reader'))).status).toBe(200)
  })

  it("without new defaults or scope enforced (as Placement's own test fixtures run): role admin in any scope, and noauth2's admin reshapes", async () => {
    api = await testApi({policy: Policy.load({enforceNewDefaults: false, enforceScope: false})})
    expect((await api.call('GET', '/resource_providers', undefined, system('admin,member,reader'))).status).toBe(200)
    expect((await api.call('POST', '/reshaper', {inventories: {}, allocations: {}}, {'x-auth-token': 'admin'})).status).not.toBe(403)
    expect((await api.call('GET', '/resource_providers', undefined, project('member,reader'))).status).toBe(403)
  })
})
