/**
 * Moving a consumer's allocations (core/consumer-moves.ts, POST /placemat/v1/moves): the receiver's type
 * is never invented, and what the giver was is kept while it holds nothing (GET
 * /placemat/v1/consumers/{uuid}) without changing what Placement's own API answers for it.
 */
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {receiverType} from '../../src/core/consumer-moves.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const H = '00000000-0000-4000-8000-000000000001'
const C = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('receiverType', () => {
  it('given, else the receiver’s own (none included), else from the giver; none from none', () => {
    expect(receiverType('BATCH', {type: 'INSTANCE'}, 'INSTANCE')).toBe('BATCH')
    expect(receiverType(undefined, {type: null}, 'INSTANCE')).toBe(null)
    expect(receiverType(undefined, {type: 'BATCH'}, 'MIGRATION')).toBe('BATCH')
    expect(receiverType(undefined, undefined, 'INSTANCE')).toBe('MIGRATION')
    expect(receiverType(undefined, undefined, 'BATCH')).toBe('MIGRATION')
    expect(receiverType(undefined, undefined, 'MIGRATION')).toBe('INSTANCE')
    expect(receiverType(undefined, undefined, null)).toBe(null)
  })
})

describe('POST /placemat/v1/moves', () => {
  let api: TestApi
  const ok = async (method: string, url: string, body?: unknown, headers?: Record<string, string>) => {
    const r = await api.call(method, url, body, headers)
    expect(r.status, `${method} ${url}: ${JSON.stringify(r.body)}`).toBeLessThan(300)
    return r.body
  }
  // Without a type: at 1.37, which has none.
  const claim = (c: string, type?: string) =>
    ok(
      'PUT',
      `/allocations/${c}`,
      {
        allocations: {[H]: {resources: {VCPU: 1}}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        ...(type ? {consumer_type: type} : {}),
      },
      type ? {} : {'openstack-api-version': 'placement 1.37'},
    )

  beforeEach(async () => {
    api = await testApi()
    await ok('POST', '/resource_providers', {name: 'h1', uuid: H})
    await ok('PUT', `/resource_providers/${H}/inventories`, {resource_provider_generation: 0, inventories: {VCPU: {total: 8}}})
  })
  afterEach(() => api.close())

  it('keeps what the giver was while it holds nothing, and forgets it once it holds allocations again', async () => {
    await claim(C(1), 'BATCH')
    const moved = await ok('POST', '/placemat/v1/moves', {consumer_uuid: C(1), to: C(2)})
    expect(moved).toMatchObject({consumer_uuid: C(1), migration_uuid: C(2), overwrote: false, consumer_type: 'MIGRATION'})
    expect(await ok('GET', `/placemat/v1/consumers/${C(1)}`)).toEqual({
      uuid: C(1),
      project_id: 'p',
      user_id: 'u',
      consumer_type: 'BATCH',
      consumer_generation: null,
      allocations: {},
      moved_to: C(2),
      // consumer show's view of it: it holds nothing, anywhere, and is in no group.
      providers: [],
      hosts: [],
      groups: [],
    })
    expect((await ok('GET', '/placemat/v1/moves')).moved_consumers).toMatchObject([{uuid: C(1), moved_to: C(2), consumer_type: 'BATCH'}])
    // Placement's API sees no consumer there, as Placement would: a new consumer's write takes it.
    expect(await ok('GET', `/allocations/${C(1)}`)).toEqual({allocations: {}})
    await claim(C(1))
    expect((await ok('GET', '/placemat/v1/moves')).moved_consumers).toEqual([])
    expect((await ok('GET', `/placemat/v1/consumers/${C(1)}`)).moved_to).toBeUndefined()
  })

  it('a revert gives the consumer back its own type, none included', async () => {
    await claim(C(3))
    expect(await ok('POST', '/placemat/v1/moves', {consumer_uuid: C(3), to: C(4)})).toMatchObject({consumer_type: null})
    expect((await ok('GET', `/allocations/${C(4)}`)).consumer_type).toBe('unknown')
    expect(await ok('POST', '/placemat/v1/moves', {consumer_uuid: C(4), to: C(3)})).toMatchObject({consumer_type: null})
    expect((await ok('GET', `/allocations/${C(3)}`)).consumer_type).toBe('unknown')
    // C(4) is the one moved away now.
    expect((await ok('GET', '/placemat/v1/moves')).moved_consumers.map((m: {uuid: string}) => m.uuid)).toEqual([C(4)])
  })

  it('refuses a consumer that holds nothing (404), itself (400), and a group the receiver would break (409)', async () => {
    expect((await api.call('POST', '/placemat/v1/moves', {consumer_uuid: C(5), to: C(6)})).status).toBe(404)
    await claim(C(5))
    expect((await api.call('POST', '/placemat/v1/moves', {consumer_uuid: C(5), to: C(5)})).status).toBe(400)
    await claim(C(7))
    await ok('POST', '/placemat/v1/groups', {name: 'apart', policy: 'anti-affinity', level: 'host', members: [C(6), C(7)]})
    const refused = await api.call('POST', '/placemat/v1/moves', {consumer_uuid: C(5), to: C(6)})
    expect(refused.status).toBe(409)
    expect(JSON.stringify(refused.body)).toContain('placemat.affinity_violation')
    expect(await ok('POST', '/placemat/v1/moves?allow_violations=true', {consumer_uuid: C(5), to: C(6)})).toMatchObject({
      migration_uuid: C(6),
    })
  })
})
