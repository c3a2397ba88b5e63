/** GET /placemat/v1/providers and /consumers: every record, or the providers asked for by uuid; a long list streamed. */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const U = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`

describe('GET /placemat/v1/providers', () => {
  let api: TestApi
  let streamed: TestApi
  beforeAll(async () => {
    api = await testApi()
    streamed = await testApi({streamAbove: 2})
    for (const t of [api, streamed]) {
      const operations = [1, 2, 3, 4, 5].flatMap((i) => [
        {op: 'create_provider', uuid: U(i), name: `cn${i}`},
        {op: 'set_inventories', uuid: U(i), inventories: {VCPU: {total: 8, allocation_ratio: 4}}},
      ])
      expect((await t.call('POST', '/placemat/v1/batch', {operations})).status).toBe(200)
    }
  })
  afterAll(async () => {
    await api.close()
    await streamed.close()
  })

  it('?uuid=A,B: only those, unknown ones left out, any uuid form', async () => {
    const upper = U(4).toUpperCase().replaceAll('-', '')
    const r = await api.call('GET', `/placemat/v1/providers?uuid=${U(2)},${U(9)}&uuid=${upper}`)
    expect(r.status).toBe(200)
    expect(r.body.providers.map((p: any) => [p.uuid, p.name, p.root_provider_uuid])).toEqual([
      [U(2), 'cn2', U(2)],
      [U(4), 'cn4', U(4)],
    ])
    const bad = await api.call('GET', `/placemat/v1/providers?uuid=${U(2)},cn3`)
    expect(bad.status).toBe(400)
    expect(bad.body.errors[0].detail).toContain('cn3')
  })

  it('a long list is streamed, the same bytes', async () => {
    const get = (t: TestApi) => t.app.inject({method: 'GET', url: '/placemat/v1/providers', headers: {'x-auth-token': 'admin'}})
    const [a, b] = await Promise.all([get(streamed), get(api)])
    expect(a.headers['transfer-encoding']).toBe('chunked')
    expect(b.headers['transfer-encoding']).toBeUndefined()
    expect(a.body).toBe(b.body)
    expect(a.body).toContain('"allocation_ratio":4.0')
    expect(JSON.parse(a.body).providers).toHaveLength(5)
  })
  it('a long list of consumers is streamed too', async () => {
    const C = (i: number) => `c0000000-0000-4000-8000-${String(i).padStart(12, '0')}`
    for (const t of [api, streamed]) {
      for (const i of [1, 2, 3]) {
        const body = {
          allocations: {[U(i)]: {resources: {VCPU: i}}},
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          consumer_type: 'TEST',
        }
        expect((await t.call('PUT', `/allocations/${C(i)}`, body)).status).toBe(204)
      }
    }
    const get = (t: TestApi) => t.app.inject({method: 'GET', url: '/placemat/v1/consumers', headers: {'x-auth-token': 'admin'}})
    const [a, b] = await Promise.all([get(streamed), get(api)])
    expect(a.headers['transfer-encoding']).toBe('chunked')
    expect(b.headers['transfer-encoding']).toBeUndefined()
    // The same records (their times differ: two apps wrote them).
    const timeless = (text: string) => JSON.parse(text, (k, v) => (k === 'created_at' || k === 'updated_at' ? undefined : v))
    expect(timeless(a.body)).toEqual(timeless(b.body))
    expect(timeless(a.body).consumers.map((c: any) => c.uuid)).toEqual([C(1), C(2), C(3)])
  })
})
