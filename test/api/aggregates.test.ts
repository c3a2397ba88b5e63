import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
  expect((await api.call('POST', '/resource_providers', {uuid: RP, name: 'rp'})).status).toBe(200)
})
afterEach(() => api.close())

const RP = 'bbbbbbbb-0000-4000-8000-000000000001'
const A1 = 'aaaaaaaa-0000-4000-8000-000000000001'
const A2 = 'aaaaaaaa-0000-4000-8000-000000000002'
const url = `/resource_providers/${RP}/aggregates`
const at = (mv: string) => ({'openstack-api-version': `placement ${mv}`})

async function state() {
  await api.store.reload()
  return {
    aggregates: (await api.call('GET', url)).body,
    generation: (await api.call('GET', `/resource_providers/${RP}`)).body.generation,
  }
}

describe('provider aggregates', () => {
  it('takes a list before 1.19 and does not bump the generation', async () => {
    const r = await api.call('PUT', url, [A1, A2], at('1.18'))
    expect(r.status).toBe(200)
    expect(r.body).toEqual({aggregates: [A1, A2]})
    expect(await state()).toEqual({aggregates: {aggregates: [A1, A2], resource_provider_generation: 0}, generation: 0})
    const old = await api.call('GET', url, undefined, at('1.18'))
    expect(old.body).toEqual({aggregates: [A1, A2]})
    expect((await api.call('GET', url, undefined, at('1.0'))).status).toBe(404)
  })

  it('takes a generation from 1.19, bumps it, and refuses a stale one with nothing changed', async () => {
    const r = await api.call('PUT', url, {aggregates: [A1], resource_provider_generation: 0})
    expect(r.status).toBe(200)
    expect(r.body).toEqual({aggregates: [A1], resource_provider_generation: 1})
    expect(r.headers['cache-control']).toBe('no-cache')
    const before = await state()
    const stale = await api.call('PUT', url, {aggregates: [A2], resource_provider_generation: 0})
    expect(stale.status).toBe(409)
    expect(stale.body.errors[0].code).toBe('placement.concurrent_update')
    expect(stale.body.errors[0].detail).toContain("Resource provider's generation already changed.")
    expect(await state()).toEqual(before)
    // Setting the same set again still bumps the generation.
    expect((await api.call('PUT', url, {aggregates: [A1], resource_provider_generation: 1})).body.resource_provider_generation).toBe(2)
  })

  it('answers bad input with 400 and changes nothing', async () => {
    const before = await state()
    for (const [body, text] of [
      [[A1], 'JSON does not validate'],
      [{aggregates: [A1]}, "'resource_provider_generation' is a required property"],
      [{aggregates: ['harry'], resource_provider_generation: 0}, "is not a 'uuid'"],
      [{aggregates: [A1, A1], resource_provider_generation: 0}, 'has non-unique elements'],
      ['{"bad", "not json"}', 'Malformed JSON'],
    ] as const) {
      const r = await api.call('PUT', url, body)
      expect(r.status, text).toBe(400)
      expect(r.body.errors[0].detail).toContain(text)
    }
    expect(await state()).toEqual(before)
  })

  it('404s for an unknown provider before reading the body', async () => {
    const r = await api.call('PUT', '/resource_providers/bbbbbbbb-0000-4000-8000-0000000000ff/aggregates', {bogus: true})
    expect(r.status).toBe(404)
    expect((await api.call('GET', '/resource_providers/bbbbbbbb-0000-4000-8000-0000000000ff/aggregates')).status).toBe(404)
  })
})
