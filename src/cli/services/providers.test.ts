/**
 * The provider services against a fake Placement and a fake backend (no process, no HTTP): a
 * parent or provider named by name looked up, a rename keeping the parent unless told, deletes
 * in turn, a provider shown with its allocations, aggregates with placemat's names for them.
 */
import {describe, expect, it} from 'vitest'
import {fakeBackend, fakePlacement, refusal} from '../../../test/helpers/fake-backend.js'
import {exitCodeOf} from '../failure.js'
import {createProvider, deleteProviders, labelledAggregates, showProvider, updateProvider} from './providers.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const CN2 = '00000000-0000-4000-8000-000000000002'
const AGG = 'aaaaaaaa-0000-4000-8000-000000000001'
const RACK = 'aaaaaaaa-0000-4000-8000-000000000002'
const C1 = 'cccccccc-0000-4000-8000-000000000001'

/** cn1 and cn2, found by uuid or by name; every write answered with what it was sent. */
const placement = () =>
  fakePlacement(({method, path, body}) => {
    const byName: Record<string, string> = {cn1: CN1, cn2: CN2}
    if (method === 'GET' && path.startsWith('/resource_providers?name=')) {
      const name = decodeURIComponent(path.slice('/resource_providers?name='.length))
      return {body: {resource_providers: byName[name] ? [{uuid: byName[name], name, generation: 1}] : []}}
    }
    if (method === 'GET' && (path === `/resource_providers/${CN1}` || path === `/resource_providers/${CN2}`))
      return {body: {uuid: path.slice(-36), name: path.endsWith('1') ? 'cn1' : 'cn2', generation: 1, parent_provider_uuid: null}}
    if (method === 'GET' && path === `/resource_providers/${CN1}/allocations`) return {body: {allocations: {[C1]: {resources: {VCPU: 1}}}}}
    if (method === 'GET' && path === `/resource_providers/${CN1}/aggregates`) return {body: {aggregates: [AGG, RACK]}}
    if (method === 'GET') return {status: 404, body: refusal('No resource provider')}
    if (method === 'DELETE') return path.endsWith(CN2) ? {status: 409, body: refusal('in use')} : {status: 204}
    return {body}
  })

describe('providers', () => {
  it('creates a provider under a parent named by name, sent as its uuid', async () => {
    const {client, calls} = placement()
    expect(await createProvider(client, {name: 'cn1-numa0', parent: 'cn1'})).toEqual({name: 'cn1-numa0', parent_provider_uuid: CN1})
    expect(calls.at(-1)?.method).toBe('POST')
  })

  it('renames a provider keeping its parent unless told; null takes the parent away', async () => {
    const {client} = placement()
    expect(await updateProvider(client, 'cn2', {name: 'cn2b'})).toEqual({name: 'cn2b'})
    expect(await updateProvider(client, CN2, {parent: 'cn1'})).toEqual({name: 'cn2', parent_provider_uuid: CN1})
    expect(await updateProvider(client, 'cn2', {parent: null})).toEqual({name: 'cn2', parent_provider_uuid: null})
  })

  it('says a provider nobody has by uuid or name (exit 3)', async () => {
    const {client} = placement()
    const err = await updateProvider(client, 'cn9', {name: 'x'}).catch((e) => e)
    expect([exitCodeOf(err), err.message]).toEqual([3, "No resource provider with uuid or name 'cn9' found"])
  })

  it('deletes providers one after the other and stops at the first refused', async () => {
    const {client, calls} = placement()
    const err = await deleteProviders(client, ['cn1', 'cn2', 'cn1']).catch((e) => e)
    expect(exitCodeOf(err)).toBe(4)
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.path)).toEqual([
      `/resource_providers/${CN1}`,
      `/resource_providers/${CN2}`,
    ])
  })

  it('shows a provider with its allocations only when asked', async () => {
    const {client} = placement()
    expect((await showProvider(client, 'cn1')).record).not.toHaveProperty('allocations')
    const shown = await showProvider(client, 'cn1', {allocations: true})
    expect(shown.record.allocations).toEqual({[C1]: {resources: {VCPU: 1}}})
    expect(shown.uuid).toBe(CN1)
  })

  it("labels a provider's aggregates with the names placemat keeps, in listing order (named ones first), none for the others", async () => {
    const {client} = placement()
    const backend = fakeBackend({client, namedAggregates: async () => [{uuid: RACK, name: 'r1', level: 'rack'}]})
    expect(await labelledAggregates({client, backend: async () => backend}, CN1)).toEqual([
      {uuid: RACK, label: 'rack r1'},
      {uuid: AGG, label: null},
    ])
  })
})
