import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
})
afterEach(() => api.close())

const PARENT = 'aaaaaaaa-0000-4000-8000-000000000001'
const CHILD = 'aaaaaaaa-0000-4000-8000-000000000002'
const OTHER = 'aaaaaaaa-0000-4000-8000-000000000003'

async function snapshot() {
  return (await api.call('GET', '/resource_providers')).body
}

describe('microversions and errors', () => {
  it('negotiates versions: latest, missing, out of range, malformed', async () => {
    const latest = await api.call('GET', '/')
    expect(latest.headers['openstack-api-version']).toBe('placement 1.39')
    expect(latest.body.versions[0].max_version).toBe('1.39')
    const missing = await api.call('GET', '/', undefined, {'openstack-api-version': ''})
    expect(missing.headers['openstack-api-version']).toBe('placement 1.0')
    const high = await api.call('GET', '/', undefined, {'openstack-api-version': 'placement 1.99'})
    expect(high.status).toBe(406)
    expect(high.body.errors[0]).toMatchObject({max_version: '1.39', min_version: '1.0'})
    const bad = await api.call('GET', '/', undefined, {'openstack-api-version': 'placement pony'})
    expect(bad.status).toBe(400)
  })

  it('answers 405 with Allow and 404 in Placement error format', async () => {
    const r = await api.call('DELETE', '/resource_providers')
    expect(r.status).toBe(405)
    expect(r.headers.allow).toBe('GET, POST')
    const nf = await api.call('GET', '/nothing-here')
    expect(nf.status).toBe(404)
    expect(nf.body.errors[0]).toMatchObject({status: 404, title: 'Not Found', code: 'placement.undefined_code'})
    expect(nf.body.errors[0].request_id).toMatch(/^req-/)
  })

  it('refuses without a token, and non-admins', async () => {
    const noToken = await api.app.inject({method: 'GET', url: '/resource_providers'})
    expect(noToken.statusCode).toBe(401)
    const user = await api.call('GET', '/resource_providers', undefined, {'x-auth-token': 'user'})
    expect(user.status).toBe(403)
    expect((await api.app.inject({method: 'GET', url: '/'})).statusCode).toBe(200)
  })
})

describe('bad input changes nothing', () => {
  const cases: Array<[string, unknown, Record<string, string>?]> = [
    ['malformed JSON', '{"name": '],
    ['wrong type', {name: 42}],
    ['unknown field', {name: 'x', colour: 'blue'}],
    ['bad uuid', {name: 'x', uuid: 'not-a-uuid'}],
    ['too long name', {name: 'x'.repeat(201)}],
    ['wrong content type', '{"name": "x"}', {'content-type': 'text/plain'}],
  ]
  for (const [what, body, headers] of cases) {
    it(`POST /resource_providers: ${what}`, async () => {
      const before = await snapshot()
      const r = await api.call('POST', '/resource_providers', body, headers)
      expect(r.status).toBeGreaterThanOrEqual(400)
      expect(r.status).toBeLessThan(500)
      expect(r.body.errors[0]).toMatchObject({status: r.status, code: expect.stringMatching(/^placement\./)})
      expect(await snapshot()).toEqual(before)
    })
  }

  it('an oversized body is a 413 in Placement format', async () => {
    const small = await testApi({bodyLimit: 1024})
    const r = await small.call('POST', '/resource_providers', {name: 'x'.repeat(5000)})
    expect(r.status).toBe(413)
    expect(r.body.errors[0].title).toBe('Request Entity Too Large')
    await small.close()
  })
})

describe('resource providers', () => {
  it('creates, shows, renames and deletes', async () => {
    const created = await api.call('POST', '/resource_providers', {name: 'cn1', uuid: PARENT})
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({uuid: PARENT, generation: 0, root_provider_uuid: PARENT, parent_provider_uuid: null})
    const old = await api.call('POST', '/resource_providers', {name: 'cn2'}, {'openstack-api-version': 'placement 1.19'})
    expect(old.status).toBe(201)
    expect(old.headers.location).toMatch(/\/resource_providers\/[0-9a-f-]{36}$/)
    const dup = await api.call('POST', '/resource_providers', {name: 'cn1'})
    expect(dup.status).toBe(409)
    expect(dup.body.errors[0].code).toBe('placement.duplicate_name')
    const renamed = await api.call('PUT', `/resource_providers/${PARENT}`, {name: 'cn1-renamed'})
    expect(renamed.body.name).toBe('cn1-renamed')
    expect((await api.call('DELETE', `/resource_providers/${PARENT}`)).status).toBe(204)
    expect((await api.call('GET', `/resource_providers/${PARENT}`)).status).toBe(404)
  })

  it('applies the re-parenting rules of 1.37', async () => {
    await api.call('POST', '/resource_providers', {name: 'parent', uuid: PARENT})
    await api.call('POST', '/resource_providers', {name: 'other', uuid: OTHER})
    await api.call('POST', '/resource_providers', {name: 'child', uuid: CHILD, parent_provider_uuid: PARENT})
    const v136 = {'openstack-api-version': 'placement 1.36'}
    const reparent = await api.call('PUT', `/resource_providers/${CHILD}`, {name: 'child', parent_provider_uuid: OTHER}, v136)
    expect(reparent.status).toBe(400)
    expect(reparent.body.errors[0].detail).toContain('re-parenting a provider is not currently allowed')
    const unparent = await api.call('PUT', `/resource_providers/${CHILD}`, {name: 'child', parent_provider_uuid: null}, v136)
    expect(unparent.status).toBe(400)
    expect((await api.call('GET', `/resource_providers/${CHILD}`)).body.parent_provider_uuid).toBe(PARENT)

    const moved = await api.call('PUT', `/resource_providers/${CHILD}`, {name: 'child', parent_provider_uuid: OTHER})
    expect(moved.body).toMatchObject({parent_provider_uuid: OTHER, root_provider_uuid: OTHER})
    const loop = await api.call('PUT', `/resource_providers/${OTHER}`, {name: 'other', parent_provider_uuid: CHILD})
    expect(loop.status).toBe(400)
    expect(loop.body.errors[0].detail).toContain('creating loop in the provider tree is not allowed')
    const freed = await api.call('PUT', `/resource_providers/${CHILD}`, {name: 'child', parent_provider_uuid: null})
    expect(freed.body).toMatchObject({parent_provider_uuid: null, root_provider_uuid: CHILD})
  })

  it('refuses to delete a provider with children', async () => {
    await api.call('POST', '/resource_providers', {name: 'parent', uuid: PARENT})
    await api.call('POST', '/resource_providers', {name: 'child', uuid: CHILD, parent_provider_uuid: PARENT})
    const r = await api.call('DELETE', `/resource_providers/${PARENT}`)
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.resource_provider.cannot_delete_parent')
    expect((await api.call('GET', `/resource_providers/${PARENT}`)).status).toBe(200)
  })
})

describe('GET /resource_providers?uuid= and ?name=', () => {
  it('answer the one provider (or none) with every other filter still applied', async () => {
    const a = '00000000-0000-0000-0000-00000000000a'
    const b = '00000000-0000-0000-0000-00000000000b'
    for (const [uuid, name] of [
      [a, 'cn-a'],
      [b, 'cn-b'],
    ])
      expect((await api.call('POST', '/resource_providers', {uuid, name})).status).toBe(200)
    expect(
      (await api.call('PUT', `/resource_providers/${a}/inventories`, {resource_provider_generation: 0, inventories: {VCPU: {total: 4}}}))
        .status,
    ).toBe(200)
    const names = async (q: string) =>
      ((await api.call('GET', `/resource_providers?${q}`)).body as any).resource_providers.map((p: any) => p.name)
    expect(await names(`uuid=${a}`)).toEqual(['cn-a'])
    expect(await names('name=cn-b')).toEqual(['cn-b'])
    expect(await names(`uuid=${a}&name=cn-b`)).toEqual([])
    expect(await names('name=nope')).toEqual([])
    expect(await names(`uuid=${a}&resources=VCPU:2`)).toEqual(['cn-a'])
    expect(await names(`uuid=${b}&resources=VCPU:2`)).toEqual([])
    expect(await names('name=cn-a&required=HW_CPU_X86_AVX2')).toEqual([])
  })
})

describe('a provider list asked again', () => {
  it('is the same answer until a write, then the new one, at every microversion and prefix asked', async () => {
    await api.call('POST', '/resource_providers', {name: 'p1', uuid: PARENT})
    const first = await api.call('GET', '/resource_providers?name=p1')
    const again = await api.call('GET', '/resource_providers?name=p1')
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body))
    expect(again.headers['last-modified']).toBe(first.headers['last-modified'])
    const old = await api.call('GET', '/resource_providers?name=p1', undefined, {'openstack-api-version': 'placement 1.0'})
    expect(old.body.resource_providers[0]).not.toHaveProperty('root_provider_uuid')
    expect(again.body.resource_providers[0]).toHaveProperty('root_provider_uuid', PARENT)
    await api.call('PUT', `/resource_providers/${PARENT}`, {name: 'p1-renamed'})
    expect((await api.call('GET', '/resource_providers?name=p1')).body.resource_providers).toEqual([])
    const all = await api.call('GET', '/resource_providers')
    expect(all.body.resource_providers.map((p: {name: string}) => p.name)).toEqual(['p1-renamed'])
  })
})
