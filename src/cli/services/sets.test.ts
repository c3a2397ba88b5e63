/**
 * A provider's traits and aggregates against a fake Placement (no process, no HTTP): a change
 * written at the generation read, read and written again when another writer came in between,
 * nothing written when nothing changes, custom traits made before they are added.
 */
import {describe, expect, it} from 'vitest'
import {ErrorCode} from '../../core/errors.js'
import {fakePlacement, refusal} from '../../../test/helpers/fake-backend.js'
import {addTraits, removeTraits, setAggregates, updateProviderSet} from './sets.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const AGG = 'aaaaaaaa-0000-4000-8000-000000000001'

/** cn1 with `traits` at generation 5; its first `conflicts` writes find another writer was first. */
function placement(traits: string[], conflicts = 0) {
  let generation = 5
  let set = [...traits]
  return fakePlacement(({method, path, body}) => {
    if (path === '/resource_providers?name=cn1') return {body: {resource_providers: [{uuid: CN1, name: 'cn1', generation}]}}
    if (path.startsWith('/traits/')) return {status: 201}
    if (method === 'GET') return {body: {resource_provider_generation: generation, traits: set, aggregates: set}}
    if (method === 'DELETE') {
      set = []
      return {status: 204}
    }
    const put = body as {resource_provider_generation: number; traits?: string[]; aggregates?: string[]}
    if (conflicts-- > 0 || put.resource_provider_generation !== generation) {
      generation++
      return {status: 409, body: refusal('resource provider generation conflict', ErrorCode.CONCURRENT_UPDATE)}
    }
    set = put.traits ?? put.aggregates ?? []
    generation++
    return {body: {resource_provider_generation: generation, traits: set}}
  })
}

describe('provider sets', () => {
  it('adds traits to those there, writing at the generation read, and makes the custom ones first', async () => {
    const {client, calls} = placement(['HW_CPU_X86_AVX2'])
    const out = await addTraits(client, 'cn1', ['CUSTOM_GOLD', 'HW_CPU_X86_AVX2'])
    expect(out).toEqual({resource_provider_generation: 6, traits: ['HW_CPU_X86_AVX2', 'CUSTOM_GOLD']})
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.path)).toEqual(['/traits/CUSTOM_GOLD', `/resource_providers/${CN1}/traits`])
    expect(calls.at(-1)?.body).toEqual({traits: ['HW_CPU_X86_AVX2', 'CUSTOM_GOLD'], resource_provider_generation: 5})
  })

  it('reads the set again and writes again when another writer moved the generation', async () => {
    const {client, calls} = placement(['A'], 1)
    const out = await updateProviderSet(client, CN1, 'traits', (cur) => [...cur, 'B'])
    expect(out.traits).toEqual(['A', 'B'])
    expect(
      calls.filter((c) => c.method === 'PUT').map((c) => (c.body as {resource_provider_generation: number}).resource_provider_generation),
    ).toEqual([5, 6])
  })

  it('writes nothing when the change leaves the set as it is', async () => {
    const {client, calls} = placement(['A', 'B'])
    const out = await updateProviderSet(client, CN1, 'traits', (cur) => [...cur].reverse())
    expect(out.resource_provider_generation).toBe(5)
    expect(calls.map((c) => c.method)).toEqual(['GET'])
  })

  it('removes the traits named, or every trait at once with all', async () => {
    const named = placement(['A', 'B'])
    expect((await removeTraits(named.client, 'cn1', ['A'])).traits).toEqual(['B'])
    const all = placement(['A', 'B'])
    expect((await removeTraits(all.client, 'cn1', 'all')).traits).toEqual([])
    expect(all.calls.map((c) => `${c.method} ${c.path}`).slice(1)).toEqual([
      `DELETE /resource_providers/${CN1}/traits`,
      `GET /resource_providers/${CN1}/traits`,
    ])
  })

  it('sets aggregates at a generation given, a conflict then left to the caller', async () => {
    const {client} = placement([])
    const err = await setAggregates(client, 'cn1', [AGG], 4).catch((e) => e)
    expect([err.status, err.code]).toEqual([409, ErrorCode.CONCURRENT_UPDATE])
  })
})
