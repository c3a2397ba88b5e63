import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {STANDARD_TRAITS} from '../../src/core/standard.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
})
afterEach(() => api.close())

const RP = 'eeeeeeee-0000-4000-8000-000000000001'
const rpTraits = (uuid = RP) => `/resource_providers/${uuid}/traits`
const v = (minor: number) => ({'openstack-api-version': `placement 1.${minor}`})

async function traitNames(query = ''): Promise<string[]> {
  const r = await api.call('GET', `/traits${query}`)
  expect(r.status).toBe(200)
  return r.body.traits
}

async function providerTraits() {
  const r = await api.call('GET', rpTraits())
  expect(r.status).toBe(200)
  return r.body
}

describe('traits', () => {
  it('lists the standard traits and is hidden below 1.6', async () => {
    expect((await traitNames()).sort()).toEqual([...STANDARD_TRAITS].sort())
    expect((await api.call('GET', '/traits', undefined, v(5))).status).toBe(404)
    expect((await api.call('PUT', '/traits/CUSTOM_X', undefined, v(5))).status).toBe(404)
  })

  it('creates with PUT (201 then 204), shows with 204, deletes', async () => {
    const created = await api.call('PUT', '/traits/CUSTOM_TRAIT_1', undefined, v(6))
    expect(created.status).toBe(201)
    expect(created.headers.location).toMatch(/\/\/.*\/traits\/CUSTOM_TRAIT_1$/)
    expect(created.headers['content-type']).toBeUndefined()
    expect(created.headers['last-modified']).toBeUndefined()
    const again = await api.call('PUT', '/traits/CUSTOM_TRAIT_1', undefined, v(15))
    expect(again.status).toBe(204)
    expect(again.headers['last-modified']).toMatch(/GMT$/)
    expect((await api.call('GET', '/traits/CUSTOM_TRAIT_1')).status).toBe(204)
    const nf = await api.call('GET', '/traits/CUSTOM_NOPE')
    expect(nf.status).toBe(404)
    expect(nf.body.errors[0].detail).toContain('No such trait(s): CUSTOM_NOPE.')
    expect((await api.call('DELETE', '/traits/CUSTOM_TRAIT_1')).status).toBe(204)
    expect((await api.call('DELETE', '/traits/CUSTOM_TRAIT_1')).status).toBe(404)
  })

  it('400s invalid names without creating anything', async () => {
    const before = await traitNames()
    for (const name of ['TRAIT_X', 'CUSTOM_ABC:1', 'CUSTOM_lower', `CUSTOM_${'A'.repeat(249)}`]) {
      const r = await api.call('PUT', `/traits/${encodeURIComponent(name)}`)
      expect(r.status).toBe(400)
      expect(r.body.errors[0].detail).toContain('The trait is invalid.')
    }
    expect(await traitNames()).toEqual(before)
  })

  it('filters by name=in:, name=startswith: and associated', async () => {
    for (const t of ['CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2', 'CUSTOM_OTHER']) await api.call('PUT', `/traits/${t}`)
    expect(await traitNames('?name=in:CUSTOM_TRAIT_1,CUSTOM_TRAIT_2,CUSTOM_NOPE')).toEqual(['CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2'])
    expect(await traitNames('?name=startswith:CUSTOM_TRAIT')).toEqual(['CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2'])
    expect(await traitNames('?name=startswith:CUSTOM_')).toEqual(['CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2', 'CUSTOM_OTHER'])
    // An unknown operator filters nothing, as in Placement.
    expect((await traitNames('?name=contains:X')).length).toBe(STANDARD_TRAITS.length + 3)
    await api.call('POST', '/resource_providers', {uuid: RP, name: 'rp'})
    await api.call('PUT', rpTraits(), {resource_provider_generation: 0, traits: ['CUSTOM_OTHER', 'HW_CPU_X86_AVX2']})
    expect((await traitNames('?associated=true')).sort()).toEqual(['CUSTOM_OTHER', 'HW_CPU_X86_AVX2'])
    expect(await traitNames('?associated=TRUE&name=startswith:CUSTOM')).toEqual(['CUSTOM_OTHER'])
    expect(await traitNames('?associated=false&name=startswith:CUSTOM')).toEqual(['CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2'])

    const badName = await api.call('GET', '/traits?name=in_abc')
    expect(badName.status).toBe(400)
    expect(badName.body.errors[0].detail).toContain('Badly formatted name parameter')
    const badAssoc = await api.call('GET', '/traits?associated=xyz')
    expect(badAssoc.status).toBe(400)
    expect(badAssoc.body.errors[0].detail).toContain('The query parameter "associated" only accepts "true" or "false"')
    const extra = await api.call('GET', '/traits?invalid=abc')
    expect(extra.status).toBe(400)
    expect(extra.body.errors[0].detail).toContain('Invalid query string parameters: Additional properties are not allowed')
  })
})

describe('standard and in-use protection', () => {
  it('never deletes a standard trait', async () => {
    const before = await traitNames()
    const r = await api.call('DELETE', '/traits/HW_CPU_X86_SSE')
    expect(r.status).toBe(400)
    expect(r.body.errors[0].detail).toContain('Cannot delete standard trait HW_CPU_X86_SSE.')
    expect(await traitNames()).toEqual(before)
  })

  it('refuses to delete a trait a provider has, until the provider drops it', async () => {
    await api.call('PUT', '/traits/CUSTOM_T')
    await api.call('POST', '/resource_providers', {uuid: RP, name: 'rp'})
    await api.call('PUT', rpTraits(), {resource_provider_generation: 0, traits: ['CUSTOM_T']})
    const before = await traitNames()
    const r = await api.call('DELETE', '/traits/CUSTOM_T')
    expect(r.status).toBe(409)
    expect(r.body.errors[0].detail).toContain('The trait CUSTOM_T is in use by a resource provider.')
    expect(await traitNames()).toEqual(before)
    expect((await api.call('DELETE', rpTraits())).status).toBe(204)
    expect((await api.call('DELETE', '/traits/CUSTOM_T')).status).toBe(204)
  })
})

describe('provider traits', () => {
  beforeEach(async () => {
    await api.call('PUT', '/traits/CUSTOM_A')
    await api.call('PUT', '/traits/CUSTOM_B')
    expect((await api.call('POST', '/resource_providers', {uuid: RP, name: 'rp'})).status).toBe(200)
  })

  it('sets, bumping the generation only on change, and clears', async () => {
    expect(await providerTraits()).toEqual({traits: [], resource_provider_generation: 0})
    const set = await api.call('PUT', rpTraits(), {resource_provider_generation: 0, traits: ['CUSTOM_B', 'CUSTOM_A', 'CUSTOM_A']})
    expect(set.status).toBe(200)
    expect(set.body.resource_provider_generation).toBe(1)
    expect(set.body.traits.sort()).toEqual(['CUSTOM_A', 'CUSTOM_B'])
    const same = await api.call('PUT', rpTraits(), {resource_provider_generation: 1, traits: ['CUSTOM_A', 'CUSTOM_B']})
    expect(same.body.resource_provider_generation).toBe(1)
    expect((await api.call('GET', `/resource_providers/${RP}`)).body.generation).toBe(1)
    expect((await api.call('DELETE', rpTraits())).status).toBe(204)
    expect(await providerTraits()).toEqual({traits: [], resource_provider_generation: 2})
    // Clearing an empty set changes nothing, so no bump.
    expect((await api.call('DELETE', rpTraits())).status).toBe(204)
    expect((await providerTraits()).resource_provider_generation).toBe(2)
  })

  it('409s a stale generation and changes nothing', async () => {
    await api.call('PUT', rpTraits(), {resource_provider_generation: 0, traits: ['CUSTOM_A']})
    const before = await providerTraits()
    const r = await api.call('PUT', rpTraits(), {resource_provider_generation: 0, traits: ['CUSTOM_B']})
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('placement.concurrent_update')
    expect(r.body.errors[0].detail).toContain("Resource provider's generation already changed.")
    expect(await providerTraits()).toEqual(before)
  })

  it('400s bad input and changes nothing', async () => {
    const before = await providerTraits()
    const cases: Array<[unknown, string]> = [
      [{traits: ['CUSTOM_NOPE', 'CUSTOM_A'], resource_provider_generation: 0}, 'No such trait CUSTOM_NOPE'],
      [{traits: ['CUSTOM_A']}, "'resource_provider_generation' is a required property"],
      [{traits: 'CUSTOM_A', resource_provider_generation: 0}, "'CUSTOM_A' is not of type 'array'"],
      [{traits: [''], resource_provider_generation: 0}, 'JSON does not validate'],
      [{traits: [], resource_provider_generation: 'x'}, "'x' is not of type 'integer'"],
      [{traits: [], resource_provider_generation: 0, extra: 1}, 'Additional properties are not allowed'],
    ]
    for (const [body, text] of cases) {
      const r = await api.call('PUT', rpTraits(), body)
      expect(r.status).toBe(400)
      expect(r.body.errors[0].detail).toContain(text)
    }
    expect(await providerTraits()).toEqual(before)
  })

  it('404s for a missing provider', async () => {
    const missing = 'eeeeeeee-0000-4000-8000-00000000ffff'
    for (const [method, body] of [['GET'], ['DELETE'], ['PUT', {traits: [], resource_provider_generation: 0}]] as const) {
      const r = await api.call(method, rpTraits(missing), body)
      expect(r.status).toBe(404)
      expect(r.body.errors[0].detail).toContain(`No resource provider with uuid ${missing} found`)
    }
  })

  it('sends cache headers from 1.15 only', async () => {
    expect((await api.call('GET', rpTraits(), undefined, v(14))).headers['last-modified']).toBeUndefined()
    const r = await api.call('GET', rpTraits(), undefined, v(15))
    expect(r.headers['last-modified']).toMatch(/GMT$/)
    expect(r.headers['cache-control']).toBe('no-cache')
  })
})
